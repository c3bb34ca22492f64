"""In real Chromium: a researcher builds the report of a simulated study through a real worker."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from metrics.reports.models import Report
from tests.conftest import browser_login, screenshot
from tests.metrics.reports.conftest import make_judged_study, make_study_data, open_judging, run_metric

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_researcher_builds_the_report_and_sees_tables_1_to_3_and_the_figures(page, celery_worker, researcher):
    study = make_judged_study(
        researcher, name="Simulated for the browser", n_originals=20, systems=("human", "machine", "mt"), n_judges=3
    )
    run_metric(study, "bleu")
    browser_login(page, "rita")
    page.goto(f"/studies/{study.pk}/")
    page.get_by_role("link", name="Report").click()
    expect(page.get_by_role("heading", name="Build the report")).to_be_visible()
    page.get_by_label("Bootstrap resamples").fill("100")
    page.get_by_role("button", name="Build report").click()

    report = Report.objects.get(study=study)
    # report.js polls the status and reloads the page when the worker has finished.
    expect(page.locator("#table-table1")).to_be_visible(timeout=60_000)
    report.refresh_from_db()
    assert report.status == "succeeded" and report.result["settings"]["n_boot"] == 100
    for heading in (
        "Table 1 — inter-judge correlation",
        "Table 2 — criteria vs overall",
        "Table 3 — metrics vs human overall",
        "Metric leaderboard",
        "Agreement per criterion",
        "Judge quality control",
        "System ranking on overall",
        "Figures",
    ):
        expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
    expect(page.locator("#table-table1")).to_contain_text("sim-judge-01")
    expect(page.locator("#table-table3")).to_contain_text("bleu")

    figure = page.locator("#plot-criterion-vs-overall img")
    figure.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=figure.element_handle())
    assert page.evaluate("() => [...document.images].every(i => i.complete && i.naturalWidth > 0)")
    expect(page.locator(".report-plot img")).to_have_count(4)
    screenshot(page, "researcher-report")

    with page.expect_download() as download:
        page.get_by_role("link", name="Standalone HTML").click()
    assert download.value.suggested_filename == f"simulated-for-the-browser-report{report.pk}.html"


def test_researcher_without_judgments_is_shown_how_to_get_some(page, researcher):
    study = open_judging(make_study_data(researcher, name="Nothing judged", n_originals=3))
    browser_login(page, "rita")
    page.goto(f"/studies/{study.pk}/report/")
    expect(page.get_by_role("heading", name="No judgments yet")).to_be_visible()
    expect(page.locator("#report-empty").get_by_role("link", name="judging design")).to_have_attribute(
        "href", f"/studies/{study.pk}/judging/design/"
    )
    expect(page.locator("pre.command")).to_contain_text(f"simulate_judges {study.pk} --judges 3")
