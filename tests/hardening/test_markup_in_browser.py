"""Script and markup in people's texts stay text, in real Chromium, on every page a
judge, an annotator and a researcher sees.

The world (conftest ``build_world``) puts ``<script>alert(…)</script>``,
``<img src=x onerror=alert(…)>`` and ``"><svg onload=alert(…)>`` into the study's
name and description, every original and candidate, system names, the judging
criteria's names, help texts and point labels, alignment tokens and pair ids,
resource and model names, and an upload's file name. Each page is opened (and the
rating page and the grid are used: a judgment is entered by keyboard, grid cells
are clicked), and then:

* no dialog opened (``alert``);
* the DOM holds no element the payloads would create (``img[src=x]``, an element
  with an ``on…`` attribute, ``svg[onload]``, inline ``<script>`` other than JSON
  data blocks, ``iframe``) — the Content-Security-Policy would block the handlers
  anyway, so an injected element is the real evidence;
* no JavaScript error, and the page shows the payload as visible text where it
  displays that text (so the check is not vacuous).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.conftest import browser_login

from .conftest import build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIND_INJECTED = """() => {
  const bad = [];
  for (const el of document.querySelectorAll('img[src="x"], svg[onload], iframe, object, embed'))
    bad.push(el.outerHTML.slice(0, 120));
  for (const s of document.querySelectorAll('script'))
    if (!s.src && s.type !== 'application/json') bad.push('inline script: ' + s.textContent.slice(0, 80));
  for (const el of document.querySelectorAll('*'))
    for (const a of el.attributes) if (a.name.startsWith('on')) bad.push(el.tagName + '[' + a.name + ']');
  return bad;
}"""


class Visit:
    """Opens pages, records dialogs and injected elements, and says what it found."""

    def __init__(self, page):
        self.page = page
        self.dialogs: list[str] = []
        self.leave_prompts: list[str] = []
        self.problems: list[str] = []
        self.shown: dict[str, bool] = {}
        page.on("dialog", self._dialog)

    def _dialog(self, dialog):
        if dialog.type == "beforeunload":
            # The grid asks before leaving with unsaved edits; that prompt is the
            # page's own, not a payload. Leave (dismissing would cancel navigation).
            self.leave_prompts.append(self.page.url)
            dialog.accept()
            return
        self.dialogs.append(f"{self.page.url}: {dialog.type} {dialog.message!r}")
        dialog.dismiss()

    def check(self, label: str) -> None:
        self.page.wait_for_load_state("load")
        injected = self.page.evaluate(FIND_INJECTED)
        if injected:
            self.problems.append(f"{label} ({self.page.url}): injected {injected[:5]}")
        self.shown[label] = "alert(" in self.page.inner_text("body")

    def open(self, url: str, label: str | None = None) -> None:
        response = self.page.goto(url)
        if response is None or response.status >= 400:
            self.problems.append(f"{url}: HTTP {response.status if response else '?'}")
        self.check(label or url)


def test_markup_in_texts_is_inert_for_judges_annotators_and_researchers(page, browser, live_server):
    w = build_world()
    visit = Visit(page)
    s = w.study

    browser_login(page, "w-judge")
    for url in (
        "/judge/",
        f"/judge/studies/{s}/instructions/",
        f"/judge/studies/{s}/",
        f"/judge/studies/{s}/items/{w.token}/",
    ):
        visit.open(url)
    visit.open(f"/judge/studies/{s}/", "rating page")
    page.locator(".criterion.is-current").wait_for()  # the page's script has taken the keyboard
    for key in "4432":
        page.keyboard.press(key)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    visit.check("rating page after a judgment")
    page.context.clear_cookies()

    browser_login(page, "w-annot")
    for url in ("/alignment/", "/alignment/guidelines/", f"/alignment/tasks/{w.submitted_assignment}/"):
        visit.open(url)
    visit.open(f"/alignment/tasks/{w.assignment}/", "grid")
    cells = page.locator("button.cell")
    for k in range(min(3, cells.count())):
        cells.nth(k).click(force=True)
    # The clicks are saved as a draft after a short pause; wait for that save so the
    # session is not cleared under it (a save refused then would leave unsaved edits).
    expect(page.locator("#save-status")).to_have_text("Saved")
    visit.check("grid after clicks")
    page.context.clear_cookies()

    browser_login(page, "w-owner")
    researcher_pages = [
        "/studies/",
        f"/studies/{s}/",
        f"/studies/{s}/generate/",
        f"/studies/{s}/judging/design/",
        f"/studies/{s}/judging/progress/",
        f"/studies/{s}/judging/qc/",
        f"/studies/{s}/alignment/",
        f"/studies/{s}/alignment/pairs/",
        f"/studies/{s}/alignment/pairs/{w.pair}/",
        f"/studies/{s}/alignment/pairs/{w.pair}/?source=system:{w.alignment_system}",
        f"/studies/{s}/alignment/scoring/",
        f"/studies/{s}/alignment/scoring/{w.scoring_run}/",
        f"/studies/{s}/metrics/",
        f"/studies/{s}/metrics/runs/{w.metric_run}/",
    ]
    if w.report is not None:
        researcher_pages += [f"/studies/{s}/report/", f"/studies/{s}/reports/{w.report}/"]
    for url in researcher_pages:
        visit.open(url)
    # An import that fails shows the uploaded file's name in its error list.
    visit.open(f"/studies/{s}/", "study page")
    page.locator("#import-form input[type=file]").set_input_files(
        {"name": 'bad <img src=x onerror=alert("xss-7")>.csv', "mimeType": "text/csv", "buffer": b"nonsense\n"}
    )
    with page.expect_navigation():
        page.locator("#import-form button[type=submit]").click()
    visit.check("study page with import errors")

    assert visit.dialogs == []
    assert visit.leave_prompts == []  # every edit was saved before the page was left
    assert visit.problems == []
    # The payloads were on screen as text (escaped), not silently dropped.
    for label in (
        "rating page",
        "rating page after a judgment",
        "grid",
        f"/judge/studies/{s}/instructions/",
        f"/studies/{s}/",
        "study page with import errors",
        f"/studies/{s}/alignment/pairs/{w.pair}/",
    ):
        assert visit.shown[label], f"{label}: the hostile text is not shown"


def test_the_checks_above_catch_markup_that_does_run(page):
    """The detector itself: a page that does render the payloads raw (no CSP here) is caught."""
    visit = Visit(page)
    page.set_content('<p>x</p><img src="x" onerror="alert(1)"><svg onload="alert(2)"></svg><script>alert(3)</script>')
    visit.check("raw page")
    page.wait_for_timeout(200)
    assert visit.dialogs and len(visit.problems) == 1 and "img" in visit.problems[0]
