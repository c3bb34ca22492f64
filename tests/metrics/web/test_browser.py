"""In real Chromium: a researcher starts a metric run, watches it finish through a real worker, opens it."""

from __future__ import annotations

import re

import pytest

from metrics.models import MetricRun
from tests.conftest import browser_login, screenshot

from .conftest import make_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_researcher_starts_a_run_and_sees_its_score_when_the_worker_is_done(page, celery_worker, researcher):
    study = make_study(researcher)
    browser_login(page, "rita")
    page.goto(f"/studies/{study.pk}/")
    page.get_by_role("link", name="Metrics").click()
    assert page.get_by_role("heading", name="Start a run").is_visible()

    # Only the chosen metric's parameters are shown.
    page.get_by_label("Metric", exact=True).select_option("chrf")
    assert page.locator('fieldset[data-metric="chrf"]').is_visible()
    assert not page.locator('fieldset[data-metric="bleu"]').is_visible()
    page.get_by_label("beta").fill("3")
    page.get_by_role("button", name="Start run").click()

    run = MetricRun.objects.get(study=study)
    assert run.params["beta"] == 3
    row = page.locator(f"#run-{run.pk}")
    # runs.js polls the status and reloads the page when the worker has finished.
    row.locator(".status-succeeded").wait_for(timeout=30_000)
    run.refresh_from_db()
    assert f"{run.corpus_score:.4f}" in row.inner_text()
    screenshot(page, "metric-runs")

    row.get_by_role("link", name=str(run.pk)).click()
    assert page.get_by_role("heading", name=f"Run #{run.pk}: chrf").is_visible()
    assert re.search(r"page 1 of 1 \(21 scores\)", page.content())
    assert page.locator("#system-scores").get_by_text("control:identical").is_visible()
    screenshot(page, "metric-run-detail")
