"""Automatic recovery of background work (``config/recovery.py``) without a worker: a resent
message claims its job only when no live worker holds it, the periodic pass resends a job that
waits its turn once per stale period, and the settings refuse a stale period shorter than three
heartbeats."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta

import pytest
from django.utils import timezone

from config.jobs.enums import JobStatus
from tests.recovery.recovery_helpers import ROOT, backdate, make_study

# --------------------------------------------------------------------------- claims (no broker)


@pytest.mark.django_db
def test_a_resent_message_claims_its_job_only_when_no_live_worker_holds_it(researcher, settings):
    from annotation.models import ImportJob
    from annotation.services.queueing import study_import_file
    from config.recovery import job_claim, jobs_to_resend

    settings.PARAEVAL_JOB_HEARTBEAT_SECONDS = 1
    study = make_study(researcher, "Claims", n=1)
    job = study_import_file(
        study=study, data=b"original_id,original,system,candidate\nx,a b.,s,b a.\n", filename="c.csv", background=True
    )
    stale = timedelta(minutes=5)
    # the first message takes a queued job; a resent copy arriving meanwhile finds it held
    assert job_claim(ImportJob, job.pk, stale_after=None) is True
    assert ImportJob.objects.get(pk=job.pk).status == JobStatus.RUNNING
    assert job_claim(ImportJob, job.pk, stale_after=stale) is False
    # its worker died (no heartbeat for longer than the stale period): exactly one resent copy wins
    backdate(ImportJob, job.pk)
    assert jobs_to_resend(ImportJob, stale_after=stale) == [job.pk]
    assert job_claim(ImportJob, job.pk, stale_after=stale) is True
    assert job_claim(ImportJob, job.pk, stale_after=stale) is False
    assert jobs_to_resend(ImportJob, stale_after=stale) == []
    # a finished job is never claimed, even long after
    ImportJob.objects.filter(pk=job.pk).update(status=JobStatus.SUCCEEDED)
    backdate(ImportJob, job.pk)
    assert job_claim(ImportJob, job.pk, stale_after=stale) is False
    # the stale period never goes below three heartbeats
    ImportJob.objects.filter(pk=job.pk).update(
        status=JobStatus.RUNNING, updated_at=timezone.now() - timedelta(seconds=2)
    )
    assert job_claim(ImportJob, job.pk, stale_after=timedelta(seconds=1)) is False


@pytest.mark.django_db
def test_the_periodic_pass_resends_a_job_that_waits_its_turn_once_per_stale_period(researcher):
    from annotation.models import ImportJob
    from annotation.services.queueing import study_import_file
    from config.recovery import jobs_to_resend

    study = make_study(researcher, "Waiting", n=1)
    job = study_import_file(
        study=study, data=b"original_id,original,system,candidate\nx,a b.,s,b a.\n", filename="w.csv", background=True
    )
    period = timedelta(minutes=5)
    assert jobs_to_resend(ImportJob, stale_after=period, queued_after=period) == []  # just queued
    backdate(ImportJob, job.pk)
    assert jobs_to_resend(ImportJob, stale_after=period, queued_after=period) == [job.pk]
    assert jobs_to_resend(ImportJob, stale_after=period, queued_after=period) == []  # not again right away
    assert jobs_to_resend(ImportJob, stale_after=None) == [job.pk]  # the command and worker start: every queued job


# --------------------------------------------------------------------------- settings


def test_settings_refuse_a_stale_period_shorter_than_three_heartbeats(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        PARAEVAL_VAR_DIR=str(tmp_path),
        PARAEVAL_JOB_HEARTBEAT_SECONDS="10",
        PARAEVAL_REQUEUE_STALE_SECONDS="20",
    )
    code = "from django.conf import settings; print(settings.CELERY_BEAT_SCHEDULE)"  # settings only: no app loading
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "PARAEVAL_REQUEUE_STALE_SECONDS must be at least 3" in proc.stderr
    env.update(PARAEVAL_REQUEUE_STALE_SECONDS="30", PARAEVAL_REQUEUE_INTERVAL_SECONDS="45")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "'task': 'paraeval.requeue_stale_jobs', 'schedule': 45.0" in proc.stdout


# --------------------------------------------------------------------------- the broker is down


class _DeadBrokerTask:
    name = "annotation.import_job_run"

    def apply_async(self, *args, **kwargs):
        from kombu.exceptions import OperationalError

        raise OperationalError("[Errno 111] Connection refused\n(while connecting to redis://queue:6379/0)")


def test_a_job_queued_or_resent_while_the_broker_is_down_logs_one_line_not_a_traceback(caplog):
    from config.jobs.services import job_enqueue
    from config.recovery import job_resend

    with caplog.at_level("WARNING"):
        assert job_enqueue(_DeadBrokerTask(), 7) is False
        assert job_resend(_DeadBrokerTask(), 8, stale_after=timedelta(minutes=5)) is False
    assert len(caplog.records) == 2
    for record in caplog.records:
        assert record.exc_info is None and record.exc_text is None
        message = record.getMessage()
        assert "\n" not in message and "OperationalError: [Errno 111] Connection refused" in message
    assert "annotation.import_job_run(7,) stays queued" in caplog.records[0].getMessage()
    assert "annotation.import_job_run(8) not resent" in caplog.records[1].getMessage()
