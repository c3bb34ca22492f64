"""In real Chromium: a researcher starts a metric run, watches it finish through a real worker, opens it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from metrics.models import MetricRun
from tests.conftest import browser_login, screenshot

from .conftest import make_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_researcher_starts_a_run_and_sees_its_score_when_the_worker_is_done(page, celery_worker, researcher):
    study = make_study(researcher)
    browser_login(page, "rita")
    page.goto(f"/studies/{study.pk}/")
    page.get_by_role("link", name="Metrics").click()
    # Auto-waiting assertions throughout: an instant is_visible() right after a
    # navigation raced the page load and failed now and then.
    expect(page.get_by_role("heading", name="Start a run")).to_be_visible()

    # Only the chosen metric's parameters are shown, with its card.
    page.get_by_label("Metric", exact=True).select_option("chrf")
    expect(page.locator('fieldset[data-metric="chrf"]')).to_be_visible()
    expect(page.locator('fieldset[data-metric="chrf"] dl.metric-card')).to_contain_text("Character n-gram F-score")
    expect(page.locator('fieldset[data-metric="bleu"]')).to_be_hidden()
    page.get_by_label("beta").fill("3")
    page.get_by_role("button", name="Start run").click()
    expect(page.get_by_text("Run #")).to_be_visible()  # the queued message after the redirect

    run = MetricRun.objects.get(study=study)
    assert run.params["beta"] == 3
    row = page.locator(f"#run-{run.pk}")
    # runs.js polls the status and reloads the page when the worker has finished.
    expect(row.locator(".status-succeeded")).to_be_visible(timeout=30_000)
    run.refresh_from_db()
    expect(row).to_contain_text(f"{run.corpus_score:.4f}")
    screenshot(page, "metric-runs")

    row.get_by_role("link", name=str(run.pk)).click()
    expect(page.get_by_role("heading", name=f"Run #{run.pk}: chrf")).to_be_visible()
    expect(page.get_by_text(re.compile(r"page 1 of 1 \(21 scores\)"))).to_be_visible()
    expect(page.locator("#system-scores").get_by_text("control:identical")).to_be_visible()
    screenshot(page, "metric-run-detail")
