"""In real Chromium, at 1280 px and at 375 px: the researcher's pages fit their boxes (the
Judge QC table with its Exclude buttons, the Metric runs' Actions column), drop-downs show
their whole choice, and the API pages raise no Content-Security-Policy error (the `page`
fixture fails a test on any CSP error in the console)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from metrics.models import MetricRun
from tests.conftest import browser_login
from tests.metrics.reports.conftest import make_judged_study, run_metric

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1280, 375)

#: [page width, widest page content, [(box, its content width, its width)] of boxes whose content sticks out]
OVERFLOW_JS = """() => {
  const doc = document.documentElement;
  const boxes = [...document.querySelectorAll('main section.card, main .card')]
    .filter(e => e.scrollWidth > e.clientWidth + 1)
    .map(e => [e.id || e.getAttribute('aria-labelledby') || e.className, e.scrollWidth, e.clientWidth]);
  return [doc.clientWidth, doc.scrollWidth, boxes];
}"""

#: Drop-downs whose chosen text is wider than the room inside them (name, text width, room).
CUT_SELECTS_JS = """() => {
  const ctx = document.createElement('canvas').getContext('2d');
  return [...document.querySelectorAll('select')].filter(s => s.offsetWidth).flatMap(s => {
    const cs = getComputedStyle(s); ctx.font = cs.font;
    const opt = s.options[s.selectedIndex]; if (!opt) return [];
    const text = ctx.measureText(opt.text).width;
    const room = s.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 20;  // 20: the arrow
    return text > room ? [[s.id || s.name, Math.round(text), Math.round(room)]] : [];
  });
}"""


@pytest.fixture
def judged(researcher):
    study = make_judged_study(researcher, name="Layout study", n_originals=6, systems=("human", "machine"), n_judges=3)
    run_metric(study, "bleu")
    return study


def _pages(study, run):
    return [
        "/studies/",
        f"/studies/{study.pk}/",
        f"/studies/{study.pk}/metrics/",
        f"/studies/{study.pk}/metrics/runs/{run.pk}/",
        f"/studies/{study.pk}/judging/qc/",
        f"/studies/{study.pk}/judging/progress/",
        f"/studies/{study.pk}/judging/design/",
        f"/studies/{study.pk}/alignment/",
        f"/studies/{study.pk}/report/",
    ]


def test_researcher_pages_fit_their_boxes_at_1280_and_375_px(page, judged):
    run = MetricRun.objects.get(study=judged)
    browser_login(page, "rita")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for url in _pages(judged, run):
            page.goto(url)
            expect(page.locator("main h1, main h2").first).to_be_visible()
            client, scroll, boxes = page.evaluate(OVERFLOW_JS)
            assert scroll <= client, f"{url} at {width}px scrolls sideways ({scroll}px wide)"
            assert boxes == [], f"{url} at {width}px: content sticks out of {boxes}"
            if width == 1280:
                assert page.evaluate(CUT_SELECTS_JS) == [], f"{url}: drop-downs cut their text"


def test_judge_qc_table_shows_every_exclude_button_inside_its_box_at_1280_px(page, judged):
    browser_login(page, "rita")
    page.goto(f"/studies/{judged.pk}/judging/qc/")
    table = page.locator("#qc-table")
    expect(table).to_be_visible()
    scroller = page.locator(".table-scroll").first
    assert scroller.evaluate("e => e.scrollWidth <= e.clientWidth"), "the QC table needs a sideways scroll at 1280 px"
    card = page.locator("section.card").first.bounding_box()
    buttons = page.get_by_role("button", name=re.compile(r"^Exclude "))
    expect(buttons).to_have_count(3)
    for i in range(3):
        box = buttons.nth(i).bounding_box()
        assert card["x"] <= box["x"] and box["x"] + box["width"] <= card["x"] + card["width"]


def test_judge_qc_table_scrolls_inside_its_box_on_a_phone(page, judged):
    page.set_viewport_size({"width": 375, "height": 800})
    browser_login(page, "rita")
    page.goto(f"/studies/{judged.pk}/judging/qc/")
    expect(page.locator("#qc-table")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    button = page.get_by_role("button", name="Exclude sim-judge-01")
    button.scroll_into_view_if_needed()
    expect(button).to_be_in_viewport()


def test_metric_runs_actions_sit_in_their_column_aligned_with_the_row(page, judged):
    run = MetricRun.objects.get(study=judged)
    browser_login(page, "rita")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"/studies/{judged.pk}/metrics/")
        row = page.locator(f"#run-{run.pk}")
        expect(row.get_by_role("link", name="CSV")).to_be_visible()
        cell = row.locator("td.actions-cell")
        assert cell.evaluate("e => getComputedStyle(e).display") == "table-cell"
        header = page.get_by_role("columnheader", name="Actions").bounding_box()
        box = cell.bounding_box()
        assert abs(box["x"] - header["x"]) < 1 and abs(box["width"] - header["width"]) < 1
        assert abs(box["y"] - row.bounding_box()["y"]) < 1


def test_api_docs_and_the_browsable_api_load_without_csp_errors_and_wrap_long_values(page, judged):
    judged.description = "A very long description " * 30
    judged.save()
    browser_login(page, "rita")
    page.goto("/api/docs/")
    expect(page.get_by_role("heading", name=re.compile("paraeval API"))).to_be_visible(timeout=30_000)
    page.goto("/api/studies/")
    expect(page.get_by_role("heading", name="Study List Api")).to_be_visible()
    info = page.locator(".response-info")
    expect(info).to_contain_text("A very long description")
    assert info.evaluate("e => e.scrollWidth <= e.clientWidth"), "the description runs off the page"
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(re.compile(r"/accounts/login/|/$"))
    # The page fixture asserts at teardown that no CSP error reached the console.


def test_a_forbidden_page_says_why(page, judged, make_user):
    make_user("jo")
    browser_login(page, "jo")
    page.goto(f"/studies/{judged.pk}/")
    expect(page.get_by_role("heading", name="You may not open this page")).to_be_visible()
    expect(page.get_by_text("Only this study's researchers may open this page.")).to_be_visible()
