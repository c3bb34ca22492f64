"""Opening judging as a background job: the rule, the job's steps, idempotency, resuming,
failures and what judges see meanwhile (the researcher's page and API: test_open_job_page.py;
a real worker: test_open_job_worker.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User

from annotation.enums import StudyStatus
from annotation.judging.enums import JudgesMode
from annotation.judging.errors import CannotOpen, DesignFrozen
from annotation.judging.models import Assignment, JudgingDesign, OpenJob
from annotation.judging.services.assignments import assignment_ensure_for_judge
from annotation.judging.services.design import design_update
from annotation.judging.services.open_job import open_job_begin, open_job_run, open_job_write
from annotation.judging.services.opening import study_judging_open, study_judging_reset
from annotation.judging.services.queueing import jobs_requeue_stale, study_judging_open_start
from annotation.models import Candidate, Original, System

from .conftest import api_login
from .open_job_helpers import counts, reference, snapshot

# --- the rule: small at once, large in a worker ---------------------------------------------------


@pytest.mark.django_db
def test_a_small_study_opens_in_the_request_with_a_finished_job(three_judges, researcher):
    study = three_judges
    job = study_judging_open_start(study=study, user=researcher)
    assert job.status == "succeeded" and job.percent == 100 and job.progress_done == job.progress_total == 3
    assert job.summary == {"controls_created": 15, "items": 25, "judges": 3, "assignment_items": 75}
    study.refresh_from_db()
    assert study.status == StudyStatus.OPEN and JudgingDesign.objects.get(study=study).opened_by == researcher


@pytest.mark.django_db
def test_over_the_threshold_the_job_is_queued_and_nothing_is_written_yet(three_judges, researcher, settings):
    study = three_judges
    settings.PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS = 74  # 3 judges × 25 items = 75 assignment items
    job = study_judging_open_start(study=study, user=researcher)
    assert job.status == "queued" and job.progress_total == 3 and job.progress_done == 0
    assert counts(study) == (0, 0, 0, 0)
    study.refresh_from_db()
    assert study.status == StudyStatus.DRAFT


@pytest.mark.django_db
def test_k_mode_size_counts_k_judges_per_item(study, add_judge, settings):
    for name in ("ann", "bob", "cy", "dee"):
        add_judge(study, name)
    design_update(study=study, changes={"judges_mode": JudgesMode.K_PER_ITEM, "judges_per_item": 2})
    settings.PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS = 50  # 2 × 25 = 50: not more than the threshold
    assert study_judging_open_start(study=study).status == "succeeded"


# --- up-front refusals stay in the request --------------------------------------------------------


@pytest.mark.django_db
def test_refusals_are_raised_before_any_job_exists(study, add_judge, researcher):
    from tests.factories import StudyFactory

    with pytest.raises(CannotOpen, match="no originals"):
        study_judging_open_start(study=StudyFactory(owner=researcher), background=True)
    add_judge(study, "ann")
    design_update(study=study, changes={"judges_mode": JudgesMode.K_PER_ITEM, "judges_per_item": 2})
    with pytest.raises(CannotOpen, match="needs at least 2 judges"):
        study_judging_open_start(study=study, background=True)
    assert not OpenJob.objects.exists()


# --- while the job is queued or running -----------------------------------------------------------


@pytest.mark.django_db
def test_while_opening_nothing_else_can_open_reset_or_change_the_design(three_judges):
    study = three_judges
    study_judging_open_start(study=study, background=True)
    with pytest.raises(CannotOpen, match="being opened"):
        study_judging_open_start(study=study, background=True)
    with pytest.raises(CannotOpen, match="being opened"):
        study_judging_open_start(study=study)
    with pytest.raises(CannotOpen, match="being opened"):
        study_judging_open(study=study)
    with pytest.raises(CannotOpen, match="being opened"):
        study_judging_reset(study=study)
    with pytest.raises(DesignFrozen, match="being opened"):
        design_update(study=study, changes={"seed": 1})
    assert OpenJob.objects.filter(study=study).count() == 1


@pytest.mark.django_db
def test_judges_see_a_study_not_started_until_every_assignment_is_written(three_judges, client, api_client):
    study = three_judges
    job = study_judging_open_start(study=study, background=True)
    job = open_job_begin(job.pk)
    assert open_job_write(job, limit=1) == 1  # a worker died after the first judge
    job.refresh_from_db()
    assert job.status == "running" and job.progress_done == 1 and job.progress_total == 3
    written = Assignment.objects.get(study=study).judge
    study.refresh_from_db()
    assert study.status == StudyStatus.DRAFT
    for judge in User.objects.filter(username__in=["ann", "bob", "cy"]):
        # no assignment is handed out, built late, or shown, whether written or not
        assert assignment_ensure_for_judge(study=study, judge=judge) is None
        client.force_login(judge)
        home = client.get("/judge/").content.decode()
        assert "Rating has not started yet" in home and " rated" not in home
        r = api_login(api_client, judge).get(f"/api/judging/studies/{study.pk}/items/next/")
        assert r.status_code == 409 and "not open" in r.json()["detail"]
    assert Assignment.objects.filter(study=study).count() == 1 and Assignment.objects.get(study=study).judge == written


@pytest.mark.django_db
def test_the_rating_page_says_not_open_while_opening(three_judges, client):
    study = three_judges
    job = open_job_begin(study_judging_open_start(study=study, background=True).pk)
    open_job_write(job, limit=2)
    client.force_login(User.objects.get(username="ann"))
    page = client.get(f"/judge/studies/{study.pk}/")
    assert page.status_code == 200 and "Rating in this study has not started yet" in page.content.decode()
    assert not Assignment.objects.filter(
        study=study, judge__username="ann", instructions_seen_at__isnull=False
    ).exists()


# --- the job: same result, idempotent, resumable --------------------------------------------------


@pytest.mark.django_db
def test_the_job_builds_what_opening_in_one_transaction_builds(three_judges, researcher):
    study = three_judges
    summary, expected = reference(study)
    job = study_judging_open_start(study=study, user=researcher, background=True)
    job = open_job_run(job_id=job.pk)
    assert job.status == "succeeded", job.error
    assert job.summary == {
        "controls_created": summary.controls_created,
        "items": summary.items,
        "judges": summary.judges,
        "assignment_items": summary.assignment_items,
    }
    assert job.progress_done == job.progress_total == 3 and job.percent == 100 and job.finished_at
    assert snapshot(study) == expected
    study.refresh_from_db()
    design = JudgingDesign.objects.get(study=study)
    assert study.status == StudyStatus.OPEN and design.is_frozen and design.opened_by == researcher


@pytest.mark.django_db
def test_running_the_job_twice_writes_once(three_judges):
    study = three_judges
    job = study_judging_open_start(study=study, background=True)
    open_job_run(job_id=job.pk)
    before = (counts(study), snapshot(study))
    again = open_job_run(job_id=job.pk)
    assert again.status == "succeeded" and (counts(study), snapshot(study)) == before
    assert counts(study) == (3, 15, 3, 75)


@pytest.mark.django_db
def test_a_job_requeued_after_its_worker_died_resumes_and_builds_the_same(three_judges):
    study = three_judges
    _, expected = reference(study)
    job = study_judging_open_start(study=study, background=True)
    job = open_job_begin(job.pk)
    open_job_write(job, limit=2)  # the worker died here
    # a later judge joins meanwhile: the job keeps the judges it started with
    from annotation.services.membership import study_member_add
    from tests.factories import UserFactory

    late = UserFactory(username="late")
    study_member_add(study=study, user=late, role="judge")
    assert jobs_requeue_stale(stale_after=None) == 0  # running, not queued
    OpenJob.objects.filter(pk=job.pk).update(updated_at=job.updated_at - timedelta(hours=1))
    assert jobs_requeue_stale(stale_after=timedelta(minutes=30)) == 1
    # the resent message's run (a second begin must not rebuild the controls)
    job = open_job_run(job_id=job.pk)
    assert job.status == "succeeded", job.error
    assert snapshot(study) == expected and counts(study) == (3, 15, 3, 75)
    assert job.summary["judges"] == 3
    # the late judge gets their own list when they come, as after any opening
    assert assignment_ensure_for_judge(study=study, judge=late).joined_late


@pytest.mark.django_db
def test_two_runs_of_one_job_interleaved_write_each_assignment_once(three_judges):
    study = three_judges
    job = study_judging_open_start(study=study, background=True)
    first = open_job_begin(job.pk)
    second = open_job_begin(job.pk)  # a duplicate delivery starts before the first wrote anything
    assert open_job_write(first, limit=1) == 1
    assert open_job_write(second) == 2  # skips the one already written
    assert open_job_write(first) == 0
    assert open_job_run(job_id=job.pk).status == "succeeded"
    assert counts(study) == (3, 15, 3, 75)


@pytest.mark.django_db
def test_a_resent_opening_claims_its_job_so_a_live_one_is_not_run_twice(three_judges):
    from annotation.judging.tasks import open_job_run_task
    from config.recovery import REQUEUE_HEADER

    study = three_judges
    job = study_judging_open_start(study=study, background=True)
    job = open_job_begin(job.pk)
    open_job_write(job, limit=1)  # a live worker is writing; its heartbeat is fresh
    resent = {REQUEUE_HEADER: 300.0}
    open_job_run_task.apply(args=(job.pk,), headers=resent)  # e.g. beat and a starting worker both resent it
    job.refresh_from_db()
    assert job.status == "running" and counts(study)[2] == 1  # dropped: nothing more written, not finished
    # Its worker died: no heartbeat for longer than the stale period, so the resent copy takes over.
    OpenJob.objects.filter(pk=job.pk).update(updated_at=job.updated_at - timedelta(hours=1))
    open_job_run_task.apply(args=(job.pk,), headers=resent)
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    assert counts(study) == (3, 15, 3, 75)


@pytest.mark.django_db
def test_queued_jobs_are_resent_and_finished_ones_are_not(three_judges):
    study = three_judges
    job = study_judging_open_start(study=study, background=True)
    assert jobs_requeue_stale() == 1
    open_job_run(job_id=job.pk)
    assert jobs_requeue_stale(stale_after=timedelta(0)) == 0


# --- failures in the job ----------------------------------------------------------------------------


@pytest.mark.django_db
def test_controls_that_cannot_be_built_fail_the_job_and_leave_a_draft(researcher, add_judge):
    from tests.factories import study_with_data

    lonely = study_with_data(n_originals=1, owner=researcher, name="Lonely")  # no other original for a random control
    add_judge(lonely, "ann")
    job = study_judging_open_start(study=lonely, background=True)
    job = open_job_run(job_id=job.pk)
    assert job.status == "failed" and "controls cannot be built" in job.error and job.finished_at
    lonely.refresh_from_db()
    assert lonely.status == StudyStatus.DRAFT and not JudgingDesign.objects.get(study=lonely).is_frozen
    assert counts(lonely) == (0, 0, 0, 0)
    # the failure does not block: fix the design and open again
    design_update(study=lonely, changes={"control_counts": {"identical": 1, "random": 0, "unigram": 1}})
    assert open_job_run(job_id=study_judging_open_start(study=lonely, background=True).pk).status == "succeeded"


@pytest.mark.django_db
def test_data_changed_while_opening_fails_the_job_and_undoes_its_writes(three_judges):
    study = three_judges
    job = open_job_begin(study_judging_open_start(study=study, background=True).pk)
    open_job_write(job, limit=1)
    assert counts(study) != (0, 0, 0, 0)
    original = Original.objects.filter(study=study).first()
    Candidate.objects.create(original=original, system=System.objects.create(study=study, name="new"), text="New text.")
    job = open_job_run(job_id=job.pk)
    assert job.status == "failed" and "data changed" in job.error
    assert counts(study) == (0, 0, 0, 0)
    study.refresh_from_db()
    assert study.status == StudyStatus.DRAFT


@pytest.mark.django_db
def test_a_resumed_job_in_k_mode_builds_the_same_balanced_plan(study, add_judge):
    for name in ("ann", "bob", "cy", "dee", "eve"):
        add_judge(study, name)
    design_update(study=study, changes={"judges_mode": JudgesMode.K_PER_ITEM, "judges_per_item": 2, "seed": 9})
    _, expected = reference(study)
    job = open_job_begin(study_judging_open_start(study=study, background=True).pk)
    open_job_write(job, limit=3)
    job = open_job_run(job_id=job.pk)
    assert job.status == "succeeded" and job.summary["assignment_items"] == 50
    assert snapshot(study) == expected


# --- judgments imported into the draft (issue 38 item 4) ------------------------------------------


def _import_for_ann(study):
    from annotation.judging.protocols.absolute.imports import judgments_import_file

    judgments_import_file(
        study=study,
        data=b"judge,original_id,system,criterion,value\nann,s0,human,overall,4\nann,s1,machine,overall,2\n",
        filename="j.csv",
    )


def _ann_after_opening(study):
    from annotation.judging.protocols.absolute.models import AssignmentItem, Judgment

    ann = Assignment.objects.get(study=study, judge__username="ann")
    items = AssignmentItem.objects.filter(assignment=ann)
    return ann, items.count(), items.filter(done_at__isnull=False).count(), Judgment.objects.filter(item__in=items)


@pytest.mark.django_db
def test_a_draft_with_imported_judgments_opens_onto_the_imported_judges_assignment(three_judges):
    study = three_judges
    _import_for_ann(study)
    summary = study_judging_open(study=study)
    study.refresh_from_db()
    assert study.status == StudyStatus.OPEN and summary.judges == 3
    ann, n_items, n_done, judgments = _ann_after_opening(study)
    assert n_items == ann.n_items == 25 and n_done == 2  # the plan; the imported two are in it, done
    assert judgments.count() == 2 and {j.values["overall"] for j in judgments} == {4, 2}
    assert ann.seed != 0 and ann.instructions_seen_at is None  # the plan's seed; instructions still to read
    order = snapshot(study)[1]["ann"][2]
    assert len(set(order)) == 25 and order[:2] == [("s0", "human"), ("s1", "machine")]  # imported first


@pytest.mark.django_db
def test_a_draft_with_imported_judgments_opens_in_the_background_and_a_failure_keeps_them(
    three_judges, settings, monkeypatch
):
    import annotation.judging.services.open_job as open_job_module

    study = three_judges
    _import_for_ann(study)
    settings.PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS = 1
    job = study_judging_open_start(study=study)
    assert job.status == "queued"

    def finish_fails(job_id):  # every assignment written, then the run fails: its undo runs
        raise RuntimeError("the worker's last step failed")

    monkeypatch.setattr(open_job_module, "_open_job_finish", finish_fails)
    assert open_job_run(job_id=job.pk).status == "failed"
    monkeypatch.undo()
    ann, n_items, n_done, judgments = _ann_after_opening(study)
    assert (n_items, n_done, judgments.count(), ann.n_items) == (2, 2, 2, 2)
    assert Assignment.objects.filter(study=study).count() == 1

    job = study_judging_open_start(study=study)
    assert open_job_run(job_id=job.pk).status == "succeeded"
    ann, n_items, n_done, judgments = _ann_after_opening(study)
    assert (n_items, n_done, judgments.count()) == (25, 2, 2)
    assert Assignment.objects.filter(study=study).count() == 3


@pytest.mark.django_db
def test_the_api_opens_a_draft_with_imported_judgments(three_judges, researcher, api_client):
    study = three_judges
    _import_for_ann(study)
    r = api_login(api_client, researcher).post(f"/api/judging/studies/{study.pk}/open/")
    assert r.status_code in (200, 201, 202), r.content
    study.refresh_from_db()
    assert study.status == StudyStatus.OPEN
    assert _ann_after_opening(study)[1:3] == (25, 2)
