"""Opening judging as a background job in a real worker: a large study, a requeued job that
resumes and reports failures, and a job queued while the broker was down, run by requeue later."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from annotation.enums import StudyStatus
from annotation.judging.models import OpenJob
from annotation.judging.protocols.absolute.models import AssignmentItem
from annotation.judging.services.open_job import open_job_begin, open_job_write
from annotation.judging.services.queueing import study_judging_open_start

from .conftest import api_login
from .open_job_helpers import counts

# --- a real worker ------------------------------------------------------------------------------------


def _wait(job_id: int, timeout: float = 90) -> OpenJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = OpenJob.objects.get(pk=job_id)
        if job.is_finished:
            return job
        time.sleep(0.2)
    raise AssertionError(f"open job {job_id} did not finish: {OpenJob.objects.get(pk=job_id).status}")


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_opens_a_large_study(celery_worker, researcher, add_judge, settings):
    from tests.factories import study_with_data

    settings.PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS = 1000
    big = study_with_data(n_originals=100, systems=("s1", "s2"), owner=researcher, name="Worker big")
    for i in range(6):
        add_judge(big, f"j{i}")
    job = study_judging_open_start(study=big, user=researcher)
    assert job.status == "queued"
    job = _wait(job.pk)
    assert job.status == "succeeded", job.error
    assert job.summary == {"controls_created": 300, "items": 500, "judges": 6, "assignment_items": 3000}
    assert AssignmentItem.objects.filter(assignment__study=big).count() == 3000
    big.refresh_from_db()
    assert big.status == StudyStatus.OPEN


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_resumes_a_requeued_job_and_reports_failures(celery_worker, three_judges, researcher):
    study = three_judges
    job = open_job_begin(study_judging_open_start(study=study, background=True).pk)
    open_job_write(job, limit=1)  # as if its worker died after one judge
    OpenJob.objects.filter(pk=job.pk).update(updated_at=job.updated_at - timedelta(hours=1))
    from django.core.management import call_command

    call_command("requeue_jobs", "--stale-minutes", "30")
    job = _wait(job.pk)
    assert job.status == "succeeded", job.error
    assert counts(study) == (3, 15, 3, 75)

    from tests.factories import study_with_data

    lonely = study_with_data(n_originals=1, owner=researcher, name="Lonely worker")
    job = _wait(study_judging_open_start(study=lonely, background=True).pk)
    assert job.status == "failed" and "controls cannot be built" in job.error


@pytest.mark.django_db(transaction=True)
def test_with_the_broker_down_the_request_answers_and_requeue_runs_the_job_later(
    api_client, researcher, three_judges, settings
):
    from django.core.management import call_command

    from config.celery import app
    from tests.brokers import broker_at, dead_broker_url
    from tests.conftest import thread_worker

    settings.PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS = 10
    with broker_at(dead_broker_url()):
        r = api_login(api_client, researcher).post(f"/api/judging/studies/{three_judges.pk}/open/")
    assert r.status_code == 202 and r.json()["status"] == "queued"
    with thread_worker(app):
        call_command("requeue_jobs", "--stale-minutes", "0")
        job = _wait(r.json()["id"])
    assert job.status == "succeeded", job.error
    assert counts(three_judges) == (3, 15, 3, 75)
