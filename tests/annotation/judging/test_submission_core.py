"""One submission core for every protocol (issue 24, item 8): the automatic QC check is queued
by the submission service, once, whichever door the judgment came through; the side-by-side
protocol stores its answers through the same core (keys, replays, revisions, screened-out)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from annotation.enums import SystemKind
from annotation.judging import screening
from annotation.judging.models import Assignment
from annotation.judging.protocols.absolute import screening as absolute_screening
from annotation.judging.protocols.absolute.models import AssignmentItem
from annotation.judging.protocols.absolute.selectors import JudgeItem, item_next_for_judge
from annotation.judging.protocols.absolute.services import judgment_submit
from annotation.judging.protocols.side_by_side import services as comparison
from annotation.judging.protocols.side_by_side.models import ComparisonJudgment
from annotation.judging.screening import ScreenedOut
from annotation.judging.selectors.judge import JudgeEntry, assignment_for_judge
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open

from .conftest import new_key, scores

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[3]


def _straight_line(study, judge):
    """Rate every item 3/3/3/3 through the service alone (no page, no API) until screened out."""
    assignment = assignment_for_judge(study=study, judge=judge)
    results = []
    while (item := item_next_for_judge(assignment=assignment)) is not None:
        try:
            results.append(
                judgment_submit(
                    study=study,
                    judge=judge,
                    token=item.token,
                    key=new_key(),
                    scores=scores(3, 3, 3, 3),
                    serve_stamp=item.serve_stamp,
                )
            )
        except ScreenedOut:
            break
    return results


@pytest.fixture
def worker_runs_qc(monkeypatch):
    """The queued automatic-QC check, run as the worker runs it (here at once, in this
    process); the list holds the assignment of every check the service queued."""
    from annotation.judging.tasks import qc_auto_check_task

    sent: list[int] = []

    def run(args, **kwargs):
        sent.append(args[0])
        absolute_screening.qc_auto_check_run(assignment_id=args[0])

    monkeypatch.setattr(qc_auto_check_task, "apply_async", run)
    return sent


def test_the_submission_service_itself_queues_the_qc_check_that_screens_out(opened_study, worker_runs_qc):
    screening.screening_settings_update(
        study=opened_study, changes={"qc_auto": True, "qc_auto_pvalue": 0.01, "qc_auto_min_controls": 8}
    )
    ann = User.objects.get(username="ann")
    results = _straight_line(opened_study, ann)
    assignment = Assignment.objects.get(study=opened_study, judge=ann)
    assert assignment.screened_out_rule == "qc"
    # the service (no door) queued one check per stored judgment, every submit alike
    assert worker_runs_qc == [assignment.pk] * len(results)
    controls = sum(
        AssignmentItem.objects.get(pk=r.judgment.item_id).candidate.system.kind != SystemKind.IMPORTED for r in results
    )
    assert controls == 8  # screened out by the check that ran after the 8th control
    assert len(results) < assignment.n_items


def test_a_replayed_key_does_not_queue_the_check_again(opened_study, worker_runs_qc):
    screening.screening_settings_update(
        study=opened_study, changes={"qc_auto": True, "qc_auto_pvalue": 0.01, "qc_auto_min_controls": 1}
    )
    ann = User.objects.get(username="ann")
    item = item_next_for_judge(assignment=assignment_for_judge(study=opened_study, judge=ann))
    key = new_key()
    first = judgment_submit(
        study=opened_study, judge=ann, token=item.token, key=key, scores=scores(), serve_stamp=item.serve_stamp
    )
    again = judgment_submit(
        study=opened_study, judge=ann, token=item.token, key=key, scores=scores(), serve_stamp=item.serve_stamp
    )
    assert (first.created, again.created) == (True, False)
    assert len(worker_runs_qc) == 1
    assert again.judgment.pk == first.judgment.pk


def test_the_doors_leave_the_screen_out_to_the_service():
    doors = [
        ROOT / "annotation/judging/web.py",
        ROOT / "annotation/judging/apis/protocol.py",
        *(ROOT / "annotation/judging/protocols").glob("*/views.py"),
        *(ROOT / "annotation/judging/protocols").glob("*/apis.py"),
    ]
    assert len(doors) >= 2 + 2 * 4
    for door in doors:
        text = door.read_text(encoding="utf-8")
        assert "after_judgment" not in text and "qc_auto_check" not in text, door


def test_both_protocols_items_share_one_judge_entry():
    assert issubclass(JudgeItem, JudgeEntry) and issubclass(comparison.JudgePair, JudgeEntry)


@pytest.fixture
def cmp_study(researcher, add_judge):
    from tests.factories import study_with_data

    study = study_with_data(owner=researcher, n_originals=3, systems=("alpha", "beta"), name="Compare core")
    add_judge(study, "ann")
    design_update(study=study, changes={"protocol": "comparison", "seed": 5})
    study_judging_open(study=study)
    study.refresh_from_db()
    return study


def test_a_screened_out_judge_cannot_answer_a_pair_and_a_retry_is_replayed(cmp_study):
    ann = User.objects.get(username="ann")
    assignment = Assignment.objects.get(study=cmp_study, judge=ann)
    pair = comparison.pair_next_for_judge(assignment=assignment)
    key = new_key()
    j1, created = comparison.side_by_side_submit(
        study=cmp_study, judge=ann, token=pair.token, key=key, answers={"preference": "A"}, serve_stamp=pair.serve_stamp
    )
    assert created and j1.revision == 1
    screening.screen_out(assignment=assignment, rule="attention", reason="test")
    j2, created = comparison.side_by_side_submit(
        study=cmp_study, judge=ann, token=pair.token, key=key, answers={"preference": "A"}, serve_stamp=pair.serve_stamp
    )
    assert (j2.pk, created) == (j1.pk, False)  # an acknowledged retry is answered as before
    with pytest.raises(ScreenedOut):
        comparison.side_by_side_submit(
            study=cmp_study,
            judge=ann,
            token=pair.token,
            key=new_key(),
            answers={"preference": "B"},
            serve_stamp=pair.serve_stamp,
        )
    assert ComparisonJudgment.objects.filter(judge=ann).count() == 1


# --- timing bounds (issue 38 item 15) --------------------------------------------------------------

#: What no person spends on an item: 1.7e308 (two of them overflowed PostgreSQL's sum), an
#: infinity, NaN, a negative time, and a second past the bound of a day.
OUT_OF_RANGE_SECONDS = (1.7e308, "1.7e308", float("inf"), "inf", float("nan"), "nan", -1.0, 86_401)


@pytest.mark.parametrize("active", OUT_OF_RANGE_SECONDS)
def test_the_submission_core_refuses_an_active_time_no_person_spends(opened_study, active):
    from annotation.judging.errors import JudgmentInvalid
    from annotation.judging.protocols.absolute.models import Judgment

    ann = User.objects.get(username="ann")
    item = item_next_for_judge(assignment=assignment_for_judge(study=opened_study, judge=ann))
    with pytest.raises(JudgmentInvalid, match="from 0 to 86400") as exc:
        judgment_submit(
            study=opened_study,
            judge=ann,
            token=item.token,
            key=new_key(),
            scores=scores(),
            serve_stamp=item.serve_stamp,
            active_seconds=active,
        )
    assert "active_seconds" in exc.value.field_errors
    assert not Judgment.objects.exists()


def test_a_day_of_active_time_is_still_accepted(opened_study):
    ann = User.objects.get(username="ann")
    item = item_next_for_judge(assignment=assignment_for_judge(study=opened_study, judge=ann))
    result = judgment_submit(
        study=opened_study,
        judge=ann,
        token=item.token,
        key=new_key(),
        scores=scores(),
        serve_stamp=item.serve_stamp,
        active_seconds=86_400,
    )
    assert result.judgment.active_seconds == 86_400


@pytest.mark.parametrize("active", (1.7e308, -1.0, "nan"))
def test_every_protocols_submission_refuses_an_out_of_range_active_time(cmp_study, active):
    from annotation.judging.errors import JudgmentInvalid

    ann = User.objects.get(username="ann")
    pair = comparison.pair_next_for_judge(assignment=Assignment.objects.get(study=cmp_study, judge=ann))
    with pytest.raises(JudgmentInvalid, match="active_seconds"):
        comparison.side_by_side_submit(
            study=cmp_study,
            judge=ann,
            token=pair.token,
            key=new_key(),
            answers={"preference": "A"},
            serve_stamp=pair.serve_stamp,
            active_seconds=active,
        )
    assert not ComparisonJudgment.objects.exists()


def test_the_api_answers_400_for_an_out_of_range_active_time(opened_study, api_client):
    from .conftest import api_login, api_next, api_submit

    client = api_login(api_client, User.objects.get(username="ann"))
    item = api_next(client, opened_study).json()["item"]
    r = api_submit(client, opened_study, item, active_seconds=1.7e308)
    assert r.status_code == 400 and "active_seconds" in r.json()
    r = client.post(
        f"/api/judging/studies/{opened_study.pk}/judgments/",
        json.dumps({"item": item["token"], "key": new_key(), "scores": scores(), "serve_stamp": item["serve_stamp"]})[
            :-1
        ]
        + ', "active_seconds": Infinity}',
        content_type="application/json",
    )
    assert r.status_code == 400
    assert api_submit(client, opened_study, item, active_seconds=12.5).status_code == 201


def test_stored_timings_out_of_range_become_unknown_and_the_rest_stay(opened_study):
    import importlib

    from django.apps import apps

    from annotation.judging.protocols.absolute.models import Judgment

    ann = User.objects.get(username="ann")
    assignment = assignment_for_judge(study=opened_study, judge=ann)
    for _ in range(3):
        item = item_next_for_judge(assignment=assignment)
        judgment_submit(
            study=opened_study,
            judge=ann,
            token=item.token,
            key=new_key(),
            scores=scores(),
            serve_stamp=item.serve_stamp,
        )
    first, second, third = Judgment.objects.order_by("pk")
    # As a client could store them before the bound (the model's field takes any float).
    Judgment.objects.filter(pk=first.pk).update(active_seconds=1.7e308, seconds=1.7e308)
    Judgment.objects.filter(pk=second.pk).update(active_seconds=-5.0)
    Judgment.objects.filter(pk=third.pk).update(active_seconds=42.0)
    migration = importlib.import_module("annotation.judging.migrations.0012_timing_out_of_range_unknown")
    migration.timings_out_of_range_unknown(apps, None)
    stored = dict(Judgment.objects.values_list("pk", "active_seconds"))
    assert stored == {first.pk: None, second.pk: None, third.pk: 42.0}
    assert Judgment.objects.get(pk=first.pk).seconds is None
    assert Judgment.objects.get(pk=third.pk).seconds is not None


def test_the_servers_own_time_counts_a_page_left_open_for_days_as_a_day(opened_study):
    import time

    from annotation.judging.tokens import serve_stamp_make

    ann = User.objects.get(username="ann")
    item = item_next_for_judge(assignment=assignment_for_judge(study=opened_study, judge=ann))
    three_days_ago = serve_stamp_make(item.token, now=time.time() - 3 * 86_400)
    result = judgment_submit(
        study=opened_study, judge=ann, token=item.token, key=new_key(), scores=scores(), serve_stamp=three_days_ago
    )
    assert result.judgment.seconds == 86_400
