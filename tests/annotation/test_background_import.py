"""Large imports run in a real Celery worker and report progress in our own table."""

import time
from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.utils import timezone

from annotation.models import Candidate, ImportJob
from annotation.services.imports import import_job_run
from annotation.services.queueing import jobs_requeue_stale, study_import_file
from annotation.services.studies import study_create


def _wait_for(job_id, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = ImportJob.objects.get(pk=job_id)
        if job.is_finished:
            return job
        time.sleep(0.2)
    raise AssertionError(f"import job {job_id} did not finish: {ImportJob.objects.get(pk=job_id).status}")


def _big_file(n):
    lines = ["original_id,original,system,candidate"]
    lines += [f"{i},Original sentence number {i}.,human,Paraphrase number {i}." for i in range(n)]
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.django_db(transaction=True)
def test_import_over_the_threshold_runs_in_a_real_worker(celery_worker, researcher, settings):
    settings.PARAEVAL_IMPORT_BACKGROUND_ROWS = 100
    study = study_create(name="Big", owner=researcher)
    job = study_import_file(study=study, data=_big_file(2500), filename="big.csv", user=researcher)
    assert job.status == "queued"
    job = _wait_for(job.pk)
    assert job.status == "succeeded", job.error
    assert job.percent == 100 and job.progress_done == 2500
    assert Candidate.objects.filter(original__study=study).count() == 2500


@pytest.mark.django_db(transaction=True)
def test_failed_background_import_records_the_error_and_writes_nothing(celery_worker, researcher, settings):
    settings.PARAEVAL_IMPORT_BACKGROUND_ROWS = 10
    study = study_create(name="Bad big", owner=researcher)
    data = _big_file(50) + b"x,,human,oops\n"
    job = _wait_for(study_import_file(study=study, data=data, filename="big.csv").pk)
    assert job.status == "failed"
    assert "big.csv, line 52, column 'original': empty text" in job.error
    assert Candidate.objects.filter(original__study=study).count() == 0


@pytest.mark.django_db(transaction=True)
def test_running_the_same_import_job_twice_writes_once(researcher, settings):
    settings.PARAEVAL_IMPORT_BACKGROUND_ROWS = 10
    study = study_create(name="Twice", owner=researcher)
    job = study_import_file(study=study, data=_big_file(30), filename="t.csv")
    import_job_run(job_id=job.pk)
    import_job_run(job_id=job.pk)
    assert Candidate.objects.filter(original__study=study).count() == 30


def test_progress_page_endpoint_reports_percent(client, researcher, study):
    job = study_import_file(study=study, data=_big_file(5).replace(b"human", b"new"), filename="s.csv")
    client.force_login(researcher)
    r = client.get(f"/studies/{study.pk}/imports/{job.pk}/").json()
    assert r["status"] == "succeeded" and r["percent"] == 100


@pytest.mark.django_db
def test_a_queued_import_carries_its_upload_so_a_worker_without_the_web_machines_storage_runs_it(
    researcher, settings, tmp_path
):
    settings.PARAEVAL_IMPORT_BACKGROUND_ROWS = 10
    settings.MEDIA_ROOT = tmp_path / "web-machine"
    study = study_create(name="Two machines", owner=researcher)
    job = study_import_file(study=study, data=_big_file(30), filename="t.csv")
    assert not job.file and bytes(ImportJob.objects.get(pk=job.pk).upload) == _big_file(30)
    settings.MEDIA_ROOT = tmp_path / "worker-machine"  # the worker shares the database, not the disk
    job = import_job_run(job_id=job.pk)
    assert job.status == "succeeded", job.error
    assert Candidate.objects.filter(original__study=study).count() == 30
    assert bytes(job.upload) == b""  # the bytes are not kept once the rows are written


@pytest.mark.django_db
def test_a_job_whose_file_is_missing_on_the_worker_ends_failed_with_the_reason_and_is_not_resent(
    researcher, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path / "web-machine"
    study = study_create(name="Old job", owner=researcher)
    # A job queued before uploads travelled in the database: its file is on the web machine only.
    job = ImportJob(study=study, filename="old.csv", format="csv", phase="queued")
    job.file.save("old.csv", ContentFile(_big_file(5)), save=False)
    job.save()
    settings.MEDIA_ROOT = tmp_path / "worker-machine"
    job = import_job_run(job_id=job.pk)
    assert job.status == "failed" and job.finished_at is not None
    assert "the upload is not readable on this worker" in job.error
    assert "storage every worker shares (MEDIA_ROOT)" in job.error
    assert str(tmp_path) not in job.error  # no server path shown to the researcher
    ImportJob.objects.filter(pk=job.pk).update(updated_at=timezone.now() - timedelta(hours=1))
    assert jobs_requeue_stale(stale_after=timedelta(seconds=1), queued_after=timedelta(seconds=1)) == 0
