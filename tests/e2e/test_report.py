"""In real Chromium: a researcher builds the report of a simulated study through a real worker."""

from __future__ import annotations

import pytest

from metrics.reports.models import Report
from tests.conftest import browser_login, screenshot
from tests.metrics.reports.conftest import make_judged_study, make_study_data, open_judging, run_metric

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_researcher_builds_the_report_and_sees_tables_1_to_3_and_the_figures(page, celery_worker, researcher):
    study = make_judged_study(researcher, name="Simulated for the browser", n_originals=20,
                              systems=("human", "machine", "mt"), n_judges=3)
    run_metric(study, "bleu")
    browser_login(page, "rita")
    page.goto(f"/studies/{study.pk}/")
    page.get_by_role("link", name="Report").click()
    assert page.get_by_role("heading", name="Build the report").is_visible()
    page.get_by_label("Bootstrap resamples").fill("100")
    page.get_by_role("button", name="Build report").click()

    report = Report.objects.get(study=study)
    # report.js polls the status and reloads the page when the worker has finished.
    page.locator("#table-table1").wait_for(timeout=60_000)
    report.refresh_from_db()
    assert report.status == "succeeded" and report.result["settings"]["n_boot"] == 100
    for heading in ("Table 1 — inter-judge correlation", "Table 2 — criteria vs overall",
                    "Table 3 — metrics vs human overall", "Metric leaderboard", "Agreement per criterion",
                    "Judge quality control", "System ranking on overall", "Figures"):
        assert page.get_by_role("heading", name=heading, exact=True).is_visible(), heading
    assert "sim-judge-01" in page.locator("#table-table1").inner_text()
    assert "bleu" in page.locator("#table-table3").inner_text()

    figure = page.locator("#plot-criterion-vs-overall img")
    figure.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=figure.element_handle())
    assert page.evaluate("() => [...document.images].every(i => i.complete && i.naturalWidth > 0)")
    assert page.locator(".report-plot img").count() == 4
    screenshot(page, "researcher-report")

    with page.expect_download() as download:
        page.get_by_role("link", name="Standalone HTML").click()
    assert download.value.suggested_filename == f"simulated-for-the-browser-report{report.pk}.html"


def test_researcher_without_judgments_is_shown_how_to_get_some(page, researcher):
    study = open_judging(make_study_data(researcher, name="Nothing judged", n_originals=3))
    browser_login(page, "rita")
    page.goto(f"/studies/{study.pk}/report/")
    assert page.get_by_role("heading", name="No judgments yet").is_visible()
    assert page.locator("#report-empty").get_by_role("link", name="judging design").get_attribute("href") == f"/studies/{study.pk}/judging/design/"
    assert f"simulate_judges {study.pk} --judges 3" in page.locator("pre.command").inner_text()
