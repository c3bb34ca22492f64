"""Side-by-side comparison: opening (pairs, sides, controls), the judge's page and API, exports."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter

import pytest
from rest_framework.test import APIClient

from annotation.judging.errors import CannotOpen, JudgmentInvalid, KeyReused
from annotation.judging.models import Assignment, JudgingDesign
from annotation.judging.protocols.absolute.imports import judgments_import_file
from annotation.judging.protocols.side_by_side import services as comparison
from annotation.judging.protocols.side_by_side.models import ComparisonItem, ComparisonJudgment
from annotation.judging.services.assignments import assignment_ensure_for_judge
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open, study_judging_reset
from metrics.core.comparison_plan import sides_for_judge
from tests.annotation.judging.conftest import new_key
from tests.factories import study_with_data

pytestmark = pytest.mark.django_db

SYSTEMS = ("alpha", "beta", "gamma")


@pytest.fixture
def cmp_study(researcher, add_judge):
    """4 originals × 3 systems, judges ann and bob, side by side with one identical-copy control per original."""
    study = study_with_data(owner=researcher, n_originals=4, systems=SYSTEMS, name="Compare study")
    add_judge(study, "ann")
    add_judge(study, "bob")
    design_update(
        study=study,
        changes={"protocol": "comparison", "seed": 99, "control_counts": {"identical": 1, "random": 0, "unigram": 0}},
    )
    study_judging_open(study=study)
    study.refresh_from_db()
    return study


def _items(study, username):
    return list(
        ComparisonItem.objects.filter(assignment__study=study, assignment__judge__username=username)
        .select_related("left__system", "right__system", "left__original", "right__original")
        .order_by("position")
    )


def test_opening_gives_every_judge_every_system_pair_and_one_control_pair_per_original(cmp_study):
    items = _items(cmp_study, "ann")
    assert len(items) == 4 * 3 + 4
    for it in items:
        assert it.left.original_id == it.right.original_id
        assert it.left.system.name != it.right.system.name
        assert it.is_control == any(c.system.name.startswith("control:") for c in (it.left, it.right))
    genuine = Counter(tuple(sorted((it.left.system.name, it.right.system.name))) for it in items if not it.is_control)
    assert genuine == {("alpha", "beta"): 4, ("alpha", "gamma"): 4, ("beta", "gamma"): 4}
    assert Assignment.objects.get(study=cmp_study, judge__username="ann").n_items == len(items)


def test_sides_are_recorded_and_reproducible_from_the_judges_seed(cmp_study):
    for username in ("ann", "bob"):
        assignment = Assignment.objects.get(study=cmp_study, judge__username=username)
        items = _items(cmp_study, username)
        swapped = [it.left.system.name > it.right.system.name for it in items]
        assert swapped == sides_for_judge([it.token for it in items], seed=assignment.seed)
        assert 0 < sum(swapped) < len(swapped)  # not the name order (nor its reverse)
    assert [it.left_id for it in _items(cmp_study, "ann")] != [it.left_id for it in _items(cmp_study, "bob")]


def test_answers_are_stored_as_shown_and_map_to_the_system_on_the_left(cmp_study, django_user_model):
    ann = django_user_model.objects.get(username="ann")
    assignment = Assignment.objects.get(study=cmp_study, judge=ann)
    pair = comparison.pair_next_for_judge(assignment=assignment)
    item = ComparisonItem.objects.get(token=pair.token)
    assert (pair.a, pair.b) == (item.left.text, item.right.text)
    judgment, created = comparison.side_by_side_submit(
        study=cmp_study,
        judge=ann,
        token=pair.token,
        key=new_key(),
        answers={"preference": "A"},
        serve_stamp=pair.serve_stamp,
    )
    assert created and judgment.values == {"preference": "A"}
    records = comparison.side_by_side_records(study=cmp_study)["preference"]
    assert [r.winner for r in records] == [item.left.system.name]
    rows = list(
        csv.reader(
            io.StringIO(
                "".join(",".join(map(str, r)) + "\n" for r in comparison.side_by_side_export_rows(study=cmp_study))
            )
        )
    )
    header, row = rows[0], rows[1]
    assert row[header.index("left_system")] == item.left.system.name
    assert row[header.index("preferred_system")] == item.left.system.name
    assert comparison.pair_next_for_judge(assignment=assignment).position == 2


def test_a_wrong_answer_or_a_reused_key_is_refused(cmp_study, django_user_model):
    ann = django_user_model.objects.get(username="ann")
    pair = comparison.pair_next_for_judge(assignment=Assignment.objects.get(study=cmp_study, judge=ann))
    with pytest.raises(JudgmentInvalid):
        comparison.side_by_side_submit(
            study=cmp_study,
            judge=ann,
            token=pair.token,
            key=new_key(),
            answers={"preference": "C"},
            serve_stamp=pair.serve_stamp,
        )
    key = new_key()
    comparison.side_by_side_submit(
        study=cmp_study,
        judge=ann,
        token=pair.token,
        key=key,
        answers={"preference": "tie"},
        serve_stamp=pair.serve_stamp,
    )
    _, created = comparison.side_by_side_submit(
        study=cmp_study,
        judge=ann,
        token=pair.token,
        key=key,
        answers={"preference": "tie"},
        serve_stamp=pair.serve_stamp,
    )
    assert created is False
    with pytest.raises(KeyReused):
        comparison.side_by_side_submit(
            study=cmp_study,
            judge=ann,
            token=pair.token,
            key=key,
            answers={"preference": "B"},
            serve_stamp=pair.serve_stamp,
        )
    # a revision: a new key on the same pair
    j, _ = comparison.side_by_side_submit(
        study=cmp_study,
        judge=ann,
        token=pair.token,
        key=new_key(),
        answers={"preference": "B"},
        serve_stamp=pair.serve_stamp,
    )
    assert j.revision == 2 and ComparisonJudgment.objects.filter(item__token=pair.token, is_latest=True).count() == 1


def test_the_judges_page_rates_a_pair_and_moves_on(cmp_study, django_user_model, client):
    ann = django_user_model.objects.get(username="ann")
    client.force_login(ann)
    assert client.get(f"/judge/studies/{cmp_study.pk}/")["Location"].endswith(f"/judge/studies/{cmp_study.pk}/compare/")
    instructions = client.get(f"/judge/studies/{cmp_study.pk}/instructions/").content.decode()
    assert "How to compare" in instructions and "Which paraphrase is better?" in instructions
    client.post(f"/judge/studies/{cmp_study.pk}/instructions/")
    page = client.get(f"/judge/studies/{cmp_study.pk}/compare/")
    assert page.status_code == 200
    html = page.content.decode()
    token = html.split('name="token" value="')[1].split('"')[0]
    serve = html.split('name="serve" value="')[1].split('"')[0]
    key = html.split('name="key" value="')[1].split('"')[0]
    bad = client.post(f"/judge/studies/{cmp_study.pk}/compare/submit/", {"token": token, "serve": serve, "key": key})
    assert bad.status_code == 400
    ok = client.post(
        f"/judge/studies/{cmp_study.pk}/compare/submit/",
        {"token": token, "serve": serve, "key": key, "preference": "B"},
    )
    assert ok.status_code == 302
    item = ComparisonItem.objects.get(token=token)
    assert item.judgments.get().values == {"preference": "B"} and item.done_at is not None
    assert "2 of 16" in client.get(f"/judge/studies/{cmp_study.pk}/compare/").content.decode()


def test_the_api_serves_pairs_and_takes_answers(cmp_study, django_user_model):
    api = APIClient()
    api.force_authenticate(django_user_model.objects.get(username="bob"))
    body = api.get(f"/api/judging/studies/{cmp_study.pk}/pairs/next/").json()
    assert body["total"] == 16 and body["questions"][0]["slug"] == "preference"
    pair = body["pair"]
    assert set(pair) >= {"token", "original", "a", "b", "serve_stamp"}
    r = api.post(
        f"/api/judging/studies/{cmp_study.pk}/comparisons/",
        {"pair": pair["token"], "key": new_key(), "answers": {"preference": "A"}, "serve_stamp": pair["serve_stamp"]},
        format="json",
    )
    assert r.status_code == 201 and r.json()["done"] == 1
    assert api.get(f"/api/judging/studies/{cmp_study.pk}/pairs/{pair['token']}/").json()["answers"] == {
        "preference": "A"
    }


def test_a_late_judge_gets_every_pair_in_their_own_order(cmp_study, add_judge):
    cid = add_judge(cmp_study, "cy")
    assignment = assignment_ensure_for_judge(study=cmp_study, judge=cid)
    assert assignment.joined_late and assignment.n_items == 16
    pairs = {frozenset((it.left_id, it.right_id)) for it in _items(cmp_study, "cy")}
    assert pairs == {frozenset((it.left_id, it.right_id)) for it in _items(cmp_study, "ann")}


def test_only_researchers_export_the_comparisons(cmp_study, django_user_model, client, researcher):
    client.force_login(django_user_model.objects.get(username="ann"))
    assert client.get(f"/studies/{cmp_study.pk}/judging/export/comparisons.csv").status_code in (403, 404)
    client.force_login(researcher)
    r = client.get(f"/studies/{cmp_study.pk}/judging/export/comparisons.csv")
    assert r.status_code == 200 and b"left_system" in b"".join(r.streaming_content)


def test_reset_is_refused_once_a_comparison_exists(cmp_study, django_user_model):
    ann = django_user_model.objects.get(username="ann")
    pair = comparison.pair_next_for_judge(assignment=Assignment.objects.get(study=cmp_study, judge=ann))
    comparison.side_by_side_submit(
        study=cmp_study,
        judge=ann,
        token=pair.token,
        key=new_key(),
        answers={"preference": "A"},
        serve_stamp=pair.serve_stamp,
    )
    with pytest.raises(CannotOpen):
        study_judging_reset(study=cmp_study)


def test_a_study_with_one_system_cannot_open_side_by_side(researcher, add_judge):
    study = study_with_data(owner=researcher, n_originals=3, systems=("only",))
    add_judge(study, "ann")
    design_update(study=study, changes={"protocol": "comparison"})
    with pytest.raises(CannotOpen):
        study_judging_open(study=study)


def test_per_criterion_questions_and_pairs_per_original(researcher, add_judge):
    study = study_with_data(owner=researcher, n_originals=6, systems=("s1", "s2", "s3", "s4"))
    add_judge(study, "ann")
    design_update(
        study=study,
        changes={
            "protocol": "comparison",
            "comparison_per_criterion": True,
            "pairs_per_original": 2,
            "control_counts": {"identical": 0, "random": 0, "unigram": 0},
        },
    )
    study_judging_open(study=study)
    items = _items(study, "ann")
    assert len(items) == 12
    per_pair = Counter(frozenset((it.left.system.name, it.right.system.name)) for it in items)
    assert set(per_pair.values()) == {2}
    design = JudgingDesign.objects.get(study=study)
    assert [q["slug"] for q in comparison.questions(design)] == design.criterion_slugs


def test_the_qc_page_shows_each_judges_answers_on_control_pairs(cmp_study, django_user_model, client, researcher):
    ann = django_user_model.objects.get(username="ann")
    assignment = Assignment.objects.get(study=cmp_study, judge=ann)
    while (pair := comparison.pair_next_for_judge(assignment=assignment)) is not None:
        item = ComparisonItem.objects.select_related("left__system").get(token=pair.token)
        # ann prefers the identical copy: the wrong answer on every control pair
        answer = ("A" if item.left.system.name.startswith("control:") else "B") if item.is_control else "tie"
        comparison.side_by_side_submit(
            study=cmp_study,
            judge=ann,
            token=pair.token,
            key=new_key(),
            answers={"preference": answer},
            serve_stamp=pair.serve_stamp,
        )
    (row,) = comparison.side_by_side_qc(study=cmp_study)
    assert (row["judge"], row["n"], row["correct"], row["passes"]) == ("ann", 4, 0, False)
    client.force_login(researcher)
    html = client.get(f"/studies/{cmp_study.pk}/judging/qc/").content.decode()
    assert "Side-by-side control pairs" in html and 'data-judge="ann"' in html


def test_progress_counts_answered_pairs(cmp_study, django_user_model):
    from annotation.judging.selectors.judge import studies_for_judge
    from annotation.judging.selectors.progress import study_progress

    ann = django_user_model.objects.get(username="ann")
    pair = comparison.pair_next_for_judge(assignment=Assignment.objects.get(study=cmp_study, judge=ann))
    comparison.side_by_side_submit(
        study=cmp_study,
        judge=ann,
        token=pair.token,
        key=new_key(),
        answers={"preference": "A"},
        serve_stamp=pair.serve_stamp,
    )
    judges = {j["judge"]: j for j in study_progress(study=cmp_study)["judges"]}
    assert (judges["ann"]["done"], judges["ann"]["total"], judges["bob"]["done"]) == (1, 16, 0)
    home = {r["study"].pk: r for r in studies_for_judge(judge=ann)}
    assert home[cmp_study.pk]["done"] == 1


def test_the_design_api_and_page_choose_the_protocol(study, researcher, client):
    api = APIClient()
    api.force_authenticate(researcher)
    base = f"/api/judging/studies/{study.pk}/design/"
    assert api.get(base).json()["protocol"] == "absolute"  # the default: existing studies keep it
    r = api.patch(base + "update/", {"protocol": "comparison", "pairs_per_original": 1}, format="json")
    assert r.status_code == 200, r.content
    assert (r.json()["protocol"], r.json()["pairs_per_original"]) == ("comparison", 1)
    assert api.patch(base + "update/", {"protocol": "no-such-protocol"}, format="json").status_code == 400
    client.force_login(researcher)
    html = client.get(f"/studies/{study.pk}/judging/design/").content.decode()
    assert re.search(r'<input[^>]*name="protocol"[^>]*value="comparison"[^>]*checked', html)


def test_absolute_judgments_cannot_be_imported_into_a_comparison_study(study):
    from annotation.importing.reading import StudyImportError
    from annotation.judging.protocols.absolute.models import Judgment

    design_update(study=study, changes={"protocol": "comparison"})
    text = "judge\toriginal_id\tsystem\tcriterion\tvalue\nw1\ts0\thuman\toverall\t4\n"
    with pytest.raises(StudyImportError) as err:
        judgments_import_file(study=study, data=text.encode(), filename="j.tsv")
    assert "side-by-side comparison" in err.value.describe() and "j.tsv" in err.value.describe()
    assert not Judgment.objects.exists()


@pytest.mark.parametrize("mode", [{}, {"judges_mode": "k", "judges_per_item": 1}])
def test_a_judge_added_to_a_comparison_study_opened_with_no_judges_gets_every_planned_pair(researcher, add_judge, mode):
    study = study_with_data(owner=researcher, n_originals=4, systems=SYSTEMS, name="Field comparison")
    design_update(
        study=study,
        changes={
            "protocol": "comparison",
            "seed": 99,
            "control_counts": {"identical": 1, "random": 0, "unigram": 0},
            **mode,
        },
    )
    study_judging_open(study=study)
    assert not ComparisonItem.objects.filter(assignment__study=study).exists()
    late = assignment_ensure_for_judge(study=study, judge=add_judge(study, "cy"))
    # As opening plans them: 3 system pairs and one control pair per original.
    assert late.joined_late and late.n_items == len(_items(study, "cy")) == 16


def test_the_dashboard_and_csvs_count_answered_pairs_with_the_system_preferred(cmp_study, django_user_model):
    from annotation.judging.selectors.export_rows import export_tidy_rows, export_wide_rows
    from metrics.dashboard.selectors import dashboard_live

    ann = django_user_model.objects.get(username="ann")
    pair = comparison.pair_next_for_judge(assignment=Assignment.objects.get(study=cmp_study, judge=ann))
    item = ComparisonItem.objects.select_related("left__system", "right__system").get(token=pair.token)
    comparison.side_by_side_submit(
        study=cmp_study,
        judge=ann,
        token=pair.token,
        key=new_key(),
        answers={"preference": "A"},
        serve_stamp=pair.serve_stamp,
    )
    live = dashboard_live(study=cmp_study)
    assert live["totals"]["judgments"] == 1 and {j["judge"]: j["judgments"] for j in live["judges"]}["ann"] == 1
    assert live["coverage"]["items"] == 16 and live["coverage"]["histogram"][1]["items"] == 1
    header, *rows = list(export_tidy_rows(study=cmp_study))
    assert len(rows) == 1
    row = dict(zip(header, rows[0], strict=True))
    assert row["criterion"] == "preference" and row["score"] == item.left.system.name
    assert set(row["system"].split(" vs ")) == {item.left.system.name, item.right.system.name}
    wide = list(export_wide_rows(study=cmp_study))
    assert wide[0][-1] == "ann:preference" and wide[1][-1] == item.left.system.name
