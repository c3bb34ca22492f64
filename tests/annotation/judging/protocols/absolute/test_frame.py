"""``judgments_frame`` (built column-wise, in chunks) equals the straightforward
construction from the ORM: same columns, dtypes, order, values and missing markers."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from annotation.judging.enums import CONTROL_KIND_OF_SYSTEM_KIND, CRITERIA
from annotation.judging.protocols.absolute import frame as absolute_frame
from annotation.judging.protocols.absolute.frame import JUDGMENT_FRAME_COLUMNS, judgments_frame
from annotation.judging.protocols.absolute.models import Judgment
from annotation.judging.protocols.absolute.selectors import item_for_judge
from annotation.judging.protocols.absolute.services import judgment_submit
from annotation.judging.selectors.exclusions import judges_excluded
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.judging.services.design import design_update
from annotation.judging.services.exclusions import judge_exclusion_set
from annotation.judging.services.opening import study_judging_open
from annotation.models import Candidate
from tests.annotation.judging.conftest import new_key, rate_all_via_service, scores

pytestmark = pytest.mark.django_db

JUDGES = ("ann", "Bob", "cyd", "dan", "eve")


def reference_frame(study, *, include_excluded_judges=False) -> pd.DataFrame:
    """One tuple per (judge, item, criterion) from the latest judgment model instances,
    then ``from_records`` — the construction ``judgments_frame`` had before it was
    built column-wise."""
    excluded = set() if include_excluded_judges else judges_excluded(study=study)
    records = []
    judgments = (
        Judgment.objects.filter(study=study, is_latest=True)
        .select_related("judge", "item__candidate__original", "item__candidate__system")
        .order_by("judge__username", "item__candidate_id")
    )
    for j in judgments:
        if j.judge.username in excluded:
            continue
        cand = j.item.candidate
        control_kind = CONTROL_KIND_OF_SYSTEM_KIND.get(cand.system.kind)
        for crit in CRITERIA:
            records.append(
                (
                    j.judge.username,
                    str(cand.pk),
                    cand.original.external_id,
                    cand.system.name,
                    control_kind is not None,
                    control_kind,
                    crit,
                    int(j.values[crit]),
                    float(j.seconds),
                    j.submitted_at,
                )
            )
    frame = pd.DataFrame.from_records(records, columns=list(JUDGMENT_FRAME_COLUMNS))
    return frame.astype(
        {
            "judge": object,
            "item": object,
            "original": object,
            "system": object,
            "is_control": bool,
            "control_kind": object,
            "criterion": object,
            "score": "int64",
            "seconds": "float64",
        }
    )


def assert_same_frame(new: pd.DataFrame, ref: pd.DataFrame) -> None:
    assert list(new.columns) == list(ref.columns)
    assert new.columns.dtype == ref.columns.dtype
    assert [str(d) for d in new.dtypes] == [str(d) for d in ref.dtypes]
    assert new.index.equals(ref.index) and type(new.index) is type(ref.index)
    pd.testing.assert_frame_equal(new, ref, check_exact=True)
    # assert_frame_equal takes None and NaN for the same; the frame's contract is exact.
    for col in new.columns:
        if new[col].dtype == object:
            assert [type(v) for v in new[col]] == [type(v) for v in ref[col]], col
    assert list(new["control_kind"].map(repr)) == list(ref["control_kind"].map(repr))


def _score_fn(seed):
    def fn(item):
        rng = random.Random(f"{seed}:{item.token}")
        return scores(*(rng.randint(1, 5) for _ in CRITERIA))

    return fn


def _revise(study, judge, n, *, seed):
    """Rate ``judge``'s first ``n`` items again (twice for every third one)."""
    rng = random.Random(seed)
    tokens = list(
        assignment_for_judge(study=study, judge=judge).items.order_by("position").values_list("token", flat=True)[:n]
    )
    for i, token in enumerate(tokens):
        for _ in range(2 if i % 3 == 0 else 1):
            item = item_for_judge(study=study, judge=judge, token=token)
            judgment_submit(
                study=study,
                judge=judge,
                token=token,
                key=new_key(),
                scores=scores(*(rng.randint(1, 5) for _ in CRITERIA)),
                serve_stamp=item.serve_stamp,
            )


def _rate_some(study, judge, *, only=None, limit=None, seed=0):
    assignment = assignment_for_judge(study=study, judge=judge)
    fn = _score_fn(seed)
    n = 0
    for token in assignment.items.order_by("position").values_list("token", flat=True):
        item = item_for_judge(study=study, judge=judge, token=token)
        if only is not None and not only(item):
            continue
        judgment_submit(
            study=study, judge=judge, token=token, key=new_key(), scores=fn(item), serve_stamp=item.serve_stamp
        )
        n += 1
        if limit is not None and n >= limit:
            break
    return n


@pytest.fixture
def varied_study(study, add_judge):
    """The fixture study with five judges (one username capitalised, to check the
    database's order is kept), opened with PEM's default controls (25 items each)."""
    for name in JUDGES:
        add_judge(study, name)
    design_update(study=study, changes={"seed": 99})
    study_judging_open(study=study)
    study.refresh_from_db()
    return study


def _judge(name):
    from django.contrib.auth.models import User

    return User.objects.get(username=name)


@pytest.mark.parametrize("chunk_size", [None, 7])
def test_frame_equals_the_reference_on_a_varied_study(varied_study, researcher, monkeypatch, chunk_size):
    if chunk_size is not None:  # chunk boundaries in the middle of judges
        monkeypatch.setattr(absolute_frame, "FRAME_CHUNK_SIZE", chunk_size)  # where judgments_frame reads it
    study = varied_study
    ann, bob, cyd, dan, eve = (_judge(n) for n in JUDGES)
    for i, judge in enumerate((ann, bob, cyd, dan)):
        rate_all_via_service(study, judge, score_fn=_score_fn(i))
    _rate_some(study, eve, limit=11, seed=9)  # part of an assignment
    _revise(study, ann, 6, seed=1)
    _revise(study, eve, 4, seed=2)
    judge_exclusion_set(study=study, judge=dan, excluded=True, decided_by=researcher)
    judge_exclusion_set(study=study, judge=cyd, excluded=True, decided_by=researcher)
    judge_exclusion_set(study=study, judge=cyd, excluded=False, decided_by=researcher)  # re-included

    # superseded revisions: ann 2 + 1 + 1 + 2 + 1 + 1, eve 2 + 1 + 1 + 2
    assert Judgment.objects.filter(study=study, is_latest=False).count() == 8 + 6
    frame = judgments_frame(study=study)
    assert_same_frame(frame, reference_frame(study))
    assert set(frame["judge"]) == {"ann", "Bob", "cyd", "eve"}
    assert len(frame) == (3 * 25 + 11) * len(CRITERIA)
    assert frame["is_control"].any() and (~frame["is_control"]).any()
    assert set(frame.loc[frame["is_control"], "control_kind"]) == {"identical", "random", "unigram"}

    full = judgments_frame(study=study, include_excluded_judges=True)
    assert_same_frame(full, reference_frame(study, include_excluded_judges=True))
    assert set(full["judge"]) == set(JUDGES) and len(full) == (4 * 25 + 11) * len(CRITERIA)
    # revisions: the latest scores only
    latest = Judgment.objects.filter(study=study, judge=ann, is_latest=True, revision__gt=1).select_related("item")
    assert latest.count() == 6
    for j in latest:
        got = full.loc[(full["judge"] == "ann") & (full["item"] == str(j.item.candidate_id))]
        assert list(got["criterion"]) == list(CRITERIA)
        assert list(got["score"]) == [j.values[c] for c in CRITERIA]


def test_frame_without_control_rows_equals_the_reference(varied_study, researcher):
    study = varied_study
    control_ids = set(
        Candidate.objects.filter(original__study=study, system__kind__startswith="control").values_list("pk", flat=True)
    )
    assert control_ids

    def not_a_control(item):
        return not Candidate.objects.filter(
            pk__in=control_ids, text=item.paraphrase, original__text=item.original
        ).exists()

    _rate_some(study, _judge("ann"), only=not_a_control, seed=3)
    _rate_some(study, _judge("Bob"), only=not_a_control, limit=4, seed=4)
    frame = judgments_frame(study=study)
    assert len(frame) and not frame["is_control"].any()
    assert_same_frame(frame, reference_frame(study))


def test_every_judge_excluded_or_no_judgments_gives_the_reference_empty_frame(varied_study, researcher):
    study = varied_study
    assert_same_frame(judgments_frame(study=study), reference_frame(study))
    ann = _judge("ann")
    _rate_some(study, ann, limit=3, seed=5)
    judge_exclusion_set(study=study, judge=ann, excluded=True, decided_by=researcher)
    frame = judgments_frame(study=study)
    assert frame.empty
    assert_same_frame(frame, reference_frame(study))
    assert_same_frame(
        judgments_frame(study=study, include_excluded_judges=True), reference_frame(study, include_excluded_judges=True)
    )


def test_string_columns_share_one_object_per_distinct_value(varied_study):
    study = varied_study
    rate_all_via_service(study, _judge("ann"), score_fn=_score_fn(1))
    rate_all_via_service(study, _judge("Bob"), score_fn=_score_fn(2))
    frame = judgments_frame(study=study)
    for col in ("judge", "item", "original", "system", "criterion"):
        assert len({id(v) for v in frame[col]}) == frame[col].nunique(), col
