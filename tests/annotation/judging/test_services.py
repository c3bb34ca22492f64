"""Judging services: design, opening (controls + assignments), late judges, submitting."""

from __future__ import annotations

import time
from collections import Counter

import pytest
from django.contrib.auth.models import User

from annotation.enums import StudyStatus, SystemKind
from annotation.judging.enums import JudgesMode
from annotation.judging.errors import (
    CannotOpen,
    DesignFrozen,
    DesignInvalid,
    ItemNotFound,
    JudgmentInvalid,
    KeyReused,
    StudyNotOpen,
)
from annotation.judging.models import Assignment
from annotation.judging.protocols.absolute.frame import judgments_frame
from annotation.judging.protocols.absolute.models import AssignmentItem, Judgment
from annotation.judging.protocols.absolute.selectors import item_next_for_judge, item_previous_for_judge
from annotation.judging.protocols.absolute.services import judgment_submit
from annotation.judging.selectors.exclusions import judge_exclusion_history, judges_excluded
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.judging.services.assignments import assignment_ensure_for_judge
from annotation.judging.services.design import design_get_or_create, design_update
from annotation.judging.services.exclusions import judge_exclusion_set
from annotation.judging.services.opening import (
    study_judging_close,
    study_judging_open,
    study_judging_reopen,
    study_judging_reset,
)
from annotation.judging.tokens import serve_stamp_make
from annotation.models import Candidate, System
from metrics.core.assignment import adjacent_same_group, derive_seed

from .conftest import new_key, rate_all_via_service, scores

pytestmark = pytest.mark.django_db


# --- design -----------------------------------------------------------------------------


def test_a_new_design_has_pems_defaults(study):
    design = design_get_or_create(study=study)
    assert [c["slug"] for c in design.criteria] == ["adequacy", "fluency", "dissimilarity", "overall"]
    assert all(
        c["scale"] == {"type": "points", "min": 1, "max": 5, "labels": c["scale"]["labels"]}
        and len(c["scale"]["labels"]) == 5
        for c in design.criteria
    )
    assert design.judges_mode == JudgesMode.FULLY_CROSSED
    assert design.control_counts == {"identical": 1, "random": 1, "unigram": 1}
    assert design.expected_scores["identical"] == {"adequacy": 5, "fluency": 5, "dissimilarity": 1, "overall": 2}
    assert design.expected_scores["random"] == {"adequacy": 1, "fluency": 5, "dissimilarity": 5, "overall": 1}
    assert design.expected_scores["unigram"] == {"adequacy": 1, "fluency": 1, "dissimilarity": 5, "overall": 1}
    assert 0 <= design.seed < 2**31


def test_design_update_validates_with_clear_messages(study):
    with pytest.raises(DesignInvalid) as exc:
        design_update(study=study, changes={"expected_scores": {"identical": {"adequacy": 9}}})
    assert "expected_scores" in exc.value.field_errors
    with pytest.raises(DesignInvalid) as exc:
        design_update(study=study, changes={"control_counts": {"identical": 9}})
    assert "0 to 5" in str(exc.value.field_errors)
    with pytest.raises(DesignInvalid, match="unknown design field"):
        design_update(study=study, changes={"colour": "red"})
    labels = design_get_or_create(study=study).criteria
    labels[0]["scale"]["labels"] = ["only", "four", "labels", "here"]
    with pytest.raises(DesignInvalid):
        design_update(study=study, changes={"criteria": labels})


def test_design_is_frozen_once_opened_except_expected_scores_and_alpha(opened_study):
    with pytest.raises(DesignFrozen, match="frozen"):
        design_update(study=opened_study, changes={"seed": 99})
    design = design_update(study=opened_study, changes={"qc_alpha": 0.01, "seed": 1234})  # same seed: fine
    assert design.qc_alpha == 0.01
    exp = design.expected_scores
    exp["identical"]["overall"] = 3
    assert (
        design_update(study=opened_study, changes={"expected_scores": exp}).expected_scores["identical"]["overall"] == 3
    )


# --- opening --------------------------------------------------------------------------------


def test_opening_builds_one_control_of_each_kind_per_original(opened_study):
    systems = dict(System.objects.filter(study=opened_study).values_list("name", "kind"))
    assert systems == {
        "human": SystemKind.IMPORTED,
        "machine": SystemKind.IMPORTED,
        "control:identical": SystemKind.CONTROL_IDENTICAL,
        "control:random": SystemKind.CONTROL_RANDOM,
        "control:unigram": SystemKind.CONTROL_UNIGRAM,
    }
    per_system = Counter(Candidate.objects.filter(original__study=opened_study).values_list("system__name", flat=True))
    assert set(per_system.values()) == {5}
    for c in Candidate.objects.filter(system__name="control:identical").select_related("original"):
        assert c.text == c.original.text
    for c in Candidate.objects.filter(system__name="control:random").select_related("original"):
        assert c.text != c.original.text
        assert c.text in set(opened_study.originals.values_list("text", flat=True))
    assert opened_study.status == StudyStatus.OPEN


def test_opening_builds_a_fully_crossed_seeded_assignment_per_judge(opened_study):
    assignments = {a.judge.username: a for a in Assignment.objects.filter(study=opened_study)}
    assert set(assignments) == {"ann", "bob"}
    groups = dict(Candidate.objects.filter(original__study=opened_study).values_list("id", "original_id"))
    orders = {}
    for name, a in assignments.items():
        assert a.seed == derive_seed(1234, "order", name)  # recorded, reproducible
        items = list(a.items.order_by("position").values_list("candidate_id", "position", "token"))
        assert [p for _, p, _ in items] == list(range(1, 26))
        assert sorted(c for c, _, _ in items) == sorted(groups)
        assert adjacent_same_group([c for c, _, _ in items], groups) == 0
        assert all(len(t) >= 20 and not t.isdigit() for _, _, t in items)
        orders[name] = [c for c, _, _ in items]
    assert orders["ann"] != orders["bob"]


def test_the_same_seed_rebuilds_the_same_controls_and_orders(study, add_judge):
    add_judge(study, "ann")
    design_update(study=study, changes={"seed": 77})
    study_judging_open(study=study)

    def snapshot():
        controls = sorted(
            Candidate.objects.filter(original__study=study, system__name__startswith="control:").values_list(
                "original__external_id", "system__name", "text"
            )
        )
        order = list(
            AssignmentItem.objects.filter(assignment__study=study)
            .order_by("position")
            .values_list("candidate__original__external_id", "candidate__system__name")
        )
        return controls, order

    first = snapshot()
    study_judging_reset(study=study)
    assert not System.objects.filter(study=study, name__startswith="control:").exists()
    study_judging_open(study=study)
    assert snapshot() == first


def test_k_judges_per_item_is_balanced(study, add_judge):
    for name in ("ann", "bob", "cy", "dee"):
        add_judge(study, name)
    design_update(study=study, changes={"judges_mode": JudgesMode.K_PER_ITEM, "judges_per_item": 3})
    summary = study_judging_open(study=study)
    assert summary.items == 25 and summary.assignment_items == 75
    per_item = Counter(AssignmentItem.objects.filter(assignment__study=study).values_list("candidate_id", flat=True))
    assert set(per_item.values()) == {3}
    loads = list(Assignment.objects.filter(study=study).values_list("n_items", flat=True))
    assert max(loads) - min(loads) <= 1 and sum(loads) == 75


def test_opening_refuses_with_clear_reasons(study, add_judge, researcher):
    from tests.factories import StudyFactory

    empty = StudyFactory(owner=researcher)
    with pytest.raises(CannotOpen, match="no originals"):
        study_judging_open(study=empty)
    add_judge(study, "ann")
    design_update(study=study, changes={"judges_mode": JudgesMode.K_PER_ITEM, "judges_per_item": 2})
    with pytest.raises(CannotOpen, match="needs at least 2 judges"):
        study_judging_open(study=study)
    design_update(study=study, changes={"judges_mode": JudgesMode.FULLY_CROSSED})
    study_judging_open(study=study)
    with pytest.raises(CannotOpen, match="already been opened"):
        study_judging_open(study=study)


def test_a_judge_added_later_gets_a_full_assignment(opened_study, add_judge):
    late = add_judge(opened_study, "late")
    assignment = assignment_ensure_for_judge(study=opened_study, judge=late)
    assert assignment.joined_late and assignment.n_items == 25
    assert assignment_ensure_for_judge(study=opened_study, judge=late) == assignment  # idempotent
    assert assignment.seed == derive_seed(1234, "order", "late")


def test_a_late_judge_in_k_mode_evens_out_coverage(study, add_judge):
    for name in ("ann", "bob", "cy"):
        add_judge(study, name)
    design_update(study=study, changes={"judges_mode": JudgesMode.K_PER_ITEM, "judges_per_item": 1})
    study_judging_open(study=study)
    late = add_judge(study, "late")
    assignment = assignment_ensure_for_judge(study=study, judge=late)
    loads = dict(Assignment.objects.filter(study=study, joined_late=False).values_list("judge__username", "n_items"))
    assert assignment.n_items == min(loads.values())
    per_item = Counter(AssignmentItem.objects.filter(assignment__study=study).values_list("candidate_id", flat=True))
    assert set(per_item.values()) <= {1, 2}  # every item keeps its judge; some gain a second


def test_non_judges_and_unopened_studies_get_no_assignment(study, researcher, add_judge):
    ann = add_judge(study, "ann")
    assert assignment_ensure_for_judge(study=study, judge=ann) is None  # not open yet
    study_judging_open(study=study)
    assert assignment_ensure_for_judge(study=study, judge=researcher) is None


def test_reset_is_refused_once_someone_judged(opened_study):
    ann = User.objects.get(username="ann")
    item = item_next_for_judge(assignment=assignment_for_judge(study=opened_study, judge=ann))
    judgment_submit(
        study=opened_study, judge=ann, token=item.token, key=new_key(), scores=scores(), serve_stamp=item.serve_stamp
    )
    with pytest.raises(CannotOpen, match="already submitted"):
        study_judging_reset(study=opened_study)


def test_reset_refuses_a_ranking_study_with_rankings(study, add_judge):
    """The guard asks every protocol's table: reset deletes the assignments, and a ranking
    hangs on its item (cascade), so one stored ranking must refuse it (issue 38 item 1)."""
    from annotation.judging.protocols.ranking import services as ranking
    from annotation.judging.protocols.ranking.models import RankingJudgment

    ann = add_judge(study, "ann")
    design_update(
        study=study,
        changes={"protocol": "ranking", "ranking_k": 2, "control_counts": {"identical": 0, "random": 0, "unigram": 0}},
    )
    study_judging_open(study=study)
    entry = ranking.ranking_next_for_judge(assignment=Assignment.objects.get(study=study, judge=ann))
    ranking.ranking_submit(
        study=study, judge=ann, token=entry.token, key=new_key(), order=[1, 2], serve_stamp=entry.serve_stamp
    )
    with pytest.raises(CannotOpen, match="already submitted"):
        study_judging_reset(study=study)
    assert RankingJudgment.objects.filter(study=study).count() == 1
    study.refresh_from_db()
    assert study.status == StudyStatus.OPEN


def test_the_protocol_cannot_change_under_imported_rankings(researcher):
    """A draft holding imported rankings keeps its protocol: switching would strand them."""
    from annotation.judging.protocols.ranking.imports import rankings_import_file
    from tests.factories import study_with_data

    draft = study_with_data(owner=researcher, n_originals=2, systems=("alpha", "beta"), name="Imported rankings")
    design_update(study=draft, changes={"protocol": "ranking", "ranking_k": 2})
    rankings_import_file(
        study=draft, data=b'{"judge": "x", "original_id": "s0", "ranking": ["alpha", "beta"]}', filename="r.jsonl"
    )
    with pytest.raises(DesignFrozen, match="protocol"):
        design_update(study=draft, changes={"protocol": "absolute"})


def test_a_ranking_draft_with_a_judges_imported_rankings_is_refused_with_a_message(researcher, add_judge):
    """Ranking's opening cannot build on an imported assignment yet: a clear refusal, not the
    500 of the one-assignment-per-judge constraint (issue 38 item 4)."""
    from annotation.judging.protocols.ranking.imports import rankings_import_file
    from tests.factories import study_with_data

    draft = study_with_data(owner=researcher, n_originals=2, systems=("alpha", "beta"), name="Ranked draft")
    add_judge(draft, "ann")
    design_update(study=draft, changes={"protocol": "ranking", "ranking_k": 2})
    rankings_import_file(
        study=draft, data=b'{"judge": "ann", "original_id": "s0", "ranking": ["alpha", "beta"]}', filename="r.jsonl"
    )
    with pytest.raises(CannotOpen, match="imported for judges of this study \\(ann\\)"):
        study_judging_open(study=draft)
    draft.refresh_from_db()
    assert draft.status == StudyStatus.DRAFT


def test_ten_judges_by_two_thousand_items_open_with_bulk_writes(researcher, add_judge, django_assert_max_num_queries):
    from tests.factories import study_with_data

    big = study_with_data(n_originals=400, systems=("s1", "s2"), owner=researcher, name="Big")
    for i in range(10):
        add_judge(big, f"j{i:02d}")
    design_update(study=big, changes={"control_counts": {"identical": 1, "random": 1, "unigram": 1}})
    with django_assert_max_num_queries(200):  # bulk: the count of queries does not grow with items
        summary = study_judging_open(study=big)
    assert summary.items == 2000 and summary.assignment_items == 20000
    assert AssignmentItem.objects.filter(assignment__study=big).count() == 20000


# --- submitting ----------------------------------------------------------------------------------


@pytest.fixture
def ann_item(opened_study):
    ann = User.objects.get(username="ann")
    assignment = assignment_for_judge(study=opened_study, judge=ann)
    return ann, item_next_for_judge(assignment=assignment)


def submit(study, judge, item, **kw):
    args = {
        "study": study,
        "judge": judge,
        "token": item.token,
        "key": new_key(),
        "scores": scores(),
        "serve_stamp": item.serve_stamp,
    } | kw
    return judgment_submit(**args)


def test_submit_stores_scores_and_timing(opened_study, ann_item):
    ann, item = ann_item
    result = submit(opened_study, ann, item, scores=scores(5, 4, 3, 2), active_seconds=7.5)
    j = result.judgment
    assert result.created and j.revision == 1 and j.is_latest
    assert j.scores == {"adequacy": 5, "fluency": 4, "dissimilarity": 3, "overall": 2}
    assert j.active_seconds == 7.5 and 0 <= j.seconds < 60
    assert AssignmentItem.objects.get(token=item.token).done_at is not None


def test_server_time_is_measured_from_serving(opened_study, ann_item):
    ann, item = ann_item
    stamp = serve_stamp_make(item.token, now=time.time() - 42)
    j = submit(opened_study, ann, item, serve_stamp=stamp).judgment
    assert 42 <= j.seconds < 60


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"adequacy": 3, "fluency": 3, "dissimilarity": 3}, "overall"),
        ({"adequacy": 0, "fluency": 3, "dissimilarity": 3, "overall": 3}, "adequacy"),
        ({"adequacy": 6, "fluency": 3, "dissimilarity": 3, "overall": 3}, "adequacy"),
        ({"adequacy": "3", "fluency": 3, "dissimilarity": 3, "overall": 3}, "adequacy"),
        ({"adequacy": 3.5, "fluency": 3, "dissimilarity": 3, "overall": 3}, "adequacy"),
        ({"adequacy": True, "fluency": 3, "dissimilarity": 3, "overall": 3}, "adequacy"),
        ({"adequacy": 3, "fluency": 3, "dissimilarity": 3, "overall": 3, "beauty": 5}, "beauty"),
    ],
)
def test_submit_rejects_bad_scores_with_a_clear_message(opened_study, ann_item, values, message):
    ann, item = ann_item
    with pytest.raises(JudgmentInvalid) as exc:
        submit(opened_study, ann, item, scores=values)
    assert message in exc.value.field_errors
    assert "whole number from 1 to 5" in exc.value.message or "criteri" in str(exc.value.field_errors)
    assert not Judgment.objects.exists()


def test_submit_rejects_bad_keys_and_forged_stamps(opened_study, ann_item):
    ann, item = ann_item
    with pytest.raises(JudgmentInvalid, match="key"):
        submit(opened_study, ann, item, key="short")
    with pytest.raises(JudgmentInvalid, match="serve stamp"):
        submit(opened_study, ann, item, serve_stamp=item.serve_stamp[:-2] + "xx")
    other = AssignmentItem.objects.filter(assignment__judge=ann).exclude(token=item.token).first()
    with pytest.raises(JudgmentInvalid, match="serve stamp"):  # a stamp of another item
        submit(opened_study, ann, item, serve_stamp=serve_stamp_make(other.token))
    with pytest.raises(JudgmentInvalid, match="active_seconds"):
        submit(opened_study, ann, item, active_seconds=-1)


def test_a_judge_cannot_submit_another_judges_item(opened_study, ann_item):
    _, item = ann_item
    bob = User.objects.get(username="bob")
    with pytest.raises(ItemNotFound):
        submit(opened_study, bob, item)
    with pytest.raises(ItemNotFound):
        submit(opened_study, bob, item, token="no-such-token-at-all")
    assert not Judgment.objects.exists()


def test_the_same_key_twice_stores_one_judgment(opened_study, ann_item):
    ann, item = ann_item
    first = submit(opened_study, ann, item, key="double-click-key")
    again = submit(opened_study, ann, item, key="double-click-key")
    assert first.created and not again.created
    assert again.judgment.pk == first.judgment.pk
    assert Judgment.objects.count() == 1


def test_a_key_reused_for_a_different_submission_is_refused(opened_study, ann_item):
    ann, item = ann_item
    submit(opened_study, ann, item, key="reused-key-1", scores=scores(1, 1, 1, 1))
    with pytest.raises(KeyReused):
        submit(opened_study, ann, item, key="reused-key-1", scores=scores(5, 5, 5, 5))
    other = item_next_for_judge(assignment=assignment_for_judge(study=opened_study, judge=ann))
    with pytest.raises(KeyReused):
        submit(opened_study, ann, other, key="reused-key-1", scores=scores(1, 1, 1, 1))
    assert Judgment.objects.count() == 1


def test_revisions_keep_history_and_the_latest_counts(opened_study, ann_item):
    ann, item = ann_item
    submit(opened_study, ann, item, scores=scores(1, 1, 1, 1))
    submit(opened_study, ann, item, scores=scores(2, 2, 2, 2))
    third = submit(opened_study, ann, item, scores=scores(3, 3, 3, 3)).judgment
    history = list(
        Judgment.objects.filter(item__token=item.token)
        .order_by("revision")
        .values_list("revision", "is_latest", "values__overall")
    )
    assert history == [(1, False, 1), (2, False, 2), (3, True, 3)]
    frame = judgments_frame(study=opened_study)
    assert list(frame.loc[frame["judge"] == "ann", "score"]) == [3, 3, 3, 3]
    assert third.revision == 3


def test_a_closed_study_refuses_new_judgments_but_replays_old_keys(opened_study, ann_item):
    ann, item = ann_item
    submit(opened_study, ann, item, key="before-close-key")
    study_judging_close(study=opened_study)
    with pytest.raises(StudyNotOpen):
        submit(opened_study, ann, item)
    assert not submit(opened_study, ann, item, key="before-close-key").created  # a retry still succeeds
    study_judging_reopen(study=opened_study)
    assert submit(opened_study, ann, item).created


def test_a_draft_study_refuses_judgments(study, add_judge):
    ann = add_judge(study, "ann")
    study_judging_open(study=study)
    item = item_next_for_judge(assignment=assignment_for_judge(study=study, judge=ann))
    type(study).objects.filter(pk=study.pk).update(status=StudyStatus.DRAFT)
    with pytest.raises(StudyNotOpen):
        submit(study, ann, item)


def test_resume_point_moves_through_the_order(opened_study):
    ann = User.objects.get(username="ann")
    assignment = assignment_for_judge(study=opened_study, judge=ann)
    first = item_next_for_judge(assignment=assignment)
    assert (first.position, first.done, first.previous_token) == (1, 0, None)
    submit(opened_study, ann, first)
    second = item_next_for_judge(assignment=assignment)
    assert (second.position, second.done, second.previous_token) == (2, 1, first.token)
    back = item_previous_for_judge(study=opened_study, judge=ann)
    assert back.token == first.token and back.scores == scores() and back.revision == 1
    assert rate_all_via_service(opened_study, ann) == 24
    assert item_next_for_judge(assignment=assignment) is None
    assert item_previous_for_judge(study=opened_study, judge=ann).position == 25


def test_exclusions_are_recorded_and_reversible(opened_study, researcher):
    ann = User.objects.get(username="ann")
    assert judge_exclusion_set(
        study=opened_study, judge=ann, excluded=True, decided_by=researcher, reason="clicks at random"
    )
    assert judge_exclusion_set(study=opened_study, judge=ann, excluded=True, decided_by=researcher) is None
    assert judges_excluded(study=opened_study) == {"ann"}
    judge_exclusion_set(study=opened_study, judge=ann, excluded=False, decided_by=researcher)
    assert judges_excluded(study=opened_study) == set()
    history = judge_exclusion_history(study=opened_study)
    assert [h.excluded for h in history] == [False, True] and history[1].reason == "clicks at random"
    with pytest.raises(CannotOpen, match="not a judge"):
        judge_exclusion_set(study=opened_study, judge=researcher, excluded=True, decided_by=researcher)


def test_demo_hook_opens_the_study_for_its_judges(study, add_judge, researcher):
    from annotation.judging import demo

    judges = {n: add_judge(study, n) for n in ("judge1", "judge2", "judge3")}
    demo.setup(study=study, accounts={"researcher": researcher, **judges}, stdout=None)
    study.refresh_from_db()
    assert study.status == StudyStatus.OPEN
    assert sorted(Assignment.objects.filter(study=study).values_list("judge__username", "n_items")) == [
        ("judge1", 25),
        ("judge2", 25),
        ("judge3", 25),
    ]
