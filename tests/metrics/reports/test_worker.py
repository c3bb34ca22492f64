"""Reports built by a real Celery worker (in a thread, on the configured broker)."""

from __future__ import annotations

import io
import time
import zipfile

import pytest

from metrics.reports.models import Report, ReportPlot
from metrics.reports.services.queueing import report_create
from metrics.reports.tasks import report_build_task

from .conftest import make_judged_study

pytestmark = pytest.mark.django_db(transaction=True)


def _wait(report_id: int, timeout: float = 120) -> Report:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        report = Report.objects.get(pk=report_id)
        if report.is_finished:
            return report
        time.sleep(0.1)
    report = Report.objects.get(pk=report_id)
    raise AssertionError(f"report {report_id} did not finish: {report.status} {report.phase}")


def test_a_report_is_built_by_a_worker_and_a_second_delivery_changes_nothing(celery_worker, researcher):
    study = make_judged_study(researcher, n_originals=8, systems=("a", "b", "c"))
    report = report_create(study=study, created_by=researcher, settings={"n_boot": 50})
    report = _wait(report.pk)
    assert report.status == "succeeded", report.error
    assert report.started_at <= report.finished_at and report.progress_done == report.progress_total == 5
    assert report.result["summary"]["n_judges"] == 3
    plots = list(ReportPlot.objects.filter(report=report).values_list("pk", "slug"))
    assert [slug for _, slug in plots] == ["criterion-vs-overall", "system-ranking", "judge-distributions"]

    # The same message delivered again, then another report: the worker takes them in
    # order, so when the second report is done the duplicate has been handled.
    report_build_task.delay(report.pk)
    other = _wait(report_create(study=study, created_by=researcher, settings={"n_boot": 60}).pk)
    assert other.status == "succeeded"
    again = Report.objects.get(pk=report.pk)
    assert (again.status, again.finished_at, again.result) == ("succeeded", report.finished_at, report.result)
    assert list(ReportPlot.objects.filter(report=report).values_list("pk", "slug")) == plots


def test_a_report_asked_for_through_the_api_is_built_by_the_worker_and_exported(celery_worker, researcher, api_client):
    study = make_judged_study(researcher, name="API and worker", n_originals=8, systems=("a", "b", "c"))
    api_client.force_authenticate(researcher)
    created = api_client.post(f"/api/studies/{study.pk}/reports/create/", {"n_boot": 50}, format="json")
    assert created.status_code == 201
    report = _wait(created.json()["id"])
    assert report.status == "succeeded", report.error
    body = api_client.get(f"/api/studies/{study.pk}/reports/{report.pk}/").json()
    zipped = api_client.get(body["exports"]["zip"])
    names = zipfile.ZipFile(io.BytesIO(zipped.content)).namelist()
    assert any(n.endswith("/report.html") for n in names) and any(n.endswith("/tables/table1.csv") for n in names)
