"""The broker is down: judging goes on, and work queued meanwhile runs once it is back.

The Celery app is pointed at a dead port (nothing listens there) for the first
half of the test. A judge reads the instructions, rates on the page and through the
API; a researcher starts a background import, a metric run, an aligner run and a
report. No request fails: each answers as usual (the jobs are recorded as queued in
paraeval's own tables, the publish gives up after its short retry policy). Then the
broker is back, a real worker runs, ``manage.py requeue_jobs`` sends the waiting
jobs again, and each finishes: every imported row is there, the metric run has
exactly one score per candidate, the report and the aligner run succeed.
"""

from __future__ import annotations

import io
import time

import pytest
from django.core.management import call_command

from config.jobs.enums import JobStatus
from tests.brokers import assert_broker_unreachable, broker_at, dead_broker_url

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def wait_finished(model, pk: int, timeout: float = 90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        obj = model.objects.get(pk=pk)
        if obj.is_finished:
            return obj
        time.sleep(0.2)
    obj = model.objects.get(pk=pk)
    raise AssertionError(f"{model.__name__} {pk} did not finish: {obj.status} {obj.phase}")


def test_judging_goes_on_while_the_broker_is_down_and_queued_work_runs_when_it_is_back(
    researcher, study, judge, settings, client
):
    from rest_framework.test import APIClient

    from annotation.alignment.models import AlignerRun
    from annotation.alignment.services.pairs import pairs_import_file
    from annotation.judging.protocols.absolute.models import Judgment
    from annotation.judging.protocols.absolute.selectors import item_next_for_judge
    from annotation.judging.selectors.judge import assignment_for_judge
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from annotation.models import Candidate, ImportJob
    from config.celery import app
    from metrics.models import MetricRun, MetricScore
    from tests.conftest import thread_worker

    design_update(study=study, changes={"seed": 3})
    study_judging_open(study=study)
    pairs_import_file(study=study, data=b"sentence1,sentence2\nA b c.,A c b.\nD e.,E d.\n", filename="p.csv")
    settings.PARAEVAL_IMPORT_BACKGROUND_ROWS = 3
    judge_api, researcher_api = APIClient(), APIClient()
    judge_api.force_authenticate(judge)
    researcher_api.force_authenticate(researcher)
    client.force_login(judge)
    s = study.pk

    with broker_at(dead_broker_url()):
        assert_broker_unreachable()
        # the judge: instructions, the rating page, a judgment by form and one by the API
        assert client.post(f"/judge/studies/{s}/instructions/").status_code == 302
        assert client.get(f"/judge/studies/{s}/").status_code == 200
        item = item_next_for_judge(assignment=assignment_for_judge(study=study, judge=judge))
        form = {
            "token": item.token,
            "serve": item.serve_stamp,
            "key": "broker-down-form-1",
            "adequacy": 4,
            "fluency": 4,
            "dissimilarity": 2,
            "overall": 3,
        }
        assert client.post(f"/judge/studies/{s}/submit/", form).status_code == 302
        nxt = judge_api.get(f"/api/judging/studies/{s}/items/next/").json()["item"]
        r = judge_api.post(
            f"/api/judging/studies/{s}/judgments/",
            {
                "item": nxt["token"],
                "key": "broker-down-api-1",
                "serve_stamp": nxt["serve_stamp"],
                "scores": {"adequacy": 5, "fluency": 4, "dissimilarity": 1, "overall": 4},
            },
            format="json",
        )
        assert r.status_code == 201, r.content
        assert Judgment.objects.filter(study=study).count() == 2

        # the researcher queues work of every kind
        rows = "original_id,original,late\n" + "".join(
            f"s{i},Original sentence {i} says something plain.,Late {i}.\n" for i in range(5)
        )
        r = researcher_api.post(
            f"/api/studies/{s}/import/", {"file": io.BytesIO(rows.encode()), "format": "csv"}, format="multipart"
        )
        assert r.status_code == 202, r.content
        job_id = r.json()["id"]
        r = researcher_api.post(f"/api/studies/{s}/metric-runs/create/", {"metric": "pinc"}, format="json")
        assert r.status_code == 201, r.content
        run_id = r.json()["id"]
        client.force_login(researcher)
        r = client.post(
            f"/studies/{s}/alignment/aligner/", {"aligner-system_name": "aligner", "aligner-use_wordnet": ""}
        )
        assert r.status_code == 302
        aligner_id = AlignerRun.objects.get(study=study).pk
        report_id = None
        from django.apps import apps

        if apps.is_installed("metrics.reports"):
            r = researcher_api.post(f"/api/studies/{s}/reports/create/", {"n_boot": 50}, format="json")
            assert r.status_code == 201, r.content
            report_id = r.json()["id"]
        assert ImportJob.objects.get(pk=job_id).status == JobStatus.QUEUED
        assert MetricRun.objects.get(pk=run_id).status == JobStatus.QUEUED

    # The broker is back: a worker runs, the waiting jobs are sent again.
    with thread_worker(app):
        out = io.StringIO()
        call_command("requeue_jobs", stdout=out)
        # (Counts are not checked: on a shared broker another test's leftover message may
        # already have started one of these jobs; every task is idempotent.)
        assert all(kind in out.getvalue() for kind in ("import", "metric run", "alignment", "report"))
        if report_id is not None:
            from metrics.reports.models import Report
        job = wait_finished(ImportJob, job_id)
        run = wait_finished(MetricRun, run_id)
        aligner = wait_finished(AlignerRun, aligner_id)
        report = wait_finished(Report, report_id) if report_id is not None else None

    assert job.status == JobStatus.SUCCEEDED, job.error
    assert Candidate.objects.filter(original__study=study, system__name="late").count() == 5
    assert run.status == JobStatus.SUCCEEDED, run.error
    n_candidates = Candidate.objects.filter(original__study=study).count()
    scores = list(MetricScore.objects.filter(run=run).values_list("candidate_id", flat=True))
    assert len(scores) == len(set(scores)) == run.n  # one score per candidate of the run
    assert run.n <= n_candidates
    assert aligner.status == JobStatus.SUCCEEDED, aligner.error
    if report is not None:
        assert report.status == JobStatus.SUCCEEDED, report.error
    assert Judgment.objects.filter(study=study).count() == 2
