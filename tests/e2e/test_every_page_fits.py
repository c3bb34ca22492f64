"""In real Chromium, at 1280 px and at 375 px: every researcher page (each page of a study that
the URL configuration serves with a study id alone, found by walking it, so a new page is
covered without editing this file) and every page a join-link judge meets, in English and in
Arabic (right to left), fits its boxes, and no drop-down cuts its chosen text (issue 28)."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from playwright.sync_api import expect

from annotation.judging.models import Assignment
from annotation.judging.screening import screen_out
from annotation.models import Participant
from annotation.participation import services as participation
from metrics.models import MetricRun
from tests.conftest import browser_login
from tests.e2e.test_layout_and_policy import CUT_SELECTS_JS, OVERFLOW_JS, WIDTHS, judged  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STUDY_PAGE = re.compile(r"^studies/<int:study_id>/(?:[\w-]+/)*$")


def _routes(resolver=None, prefix=""):
    for p in (resolver or get_resolver()).url_patterns:
        if isinstance(p, URLResolver):
            yield from _routes(p, prefix + str(p.pattern))
        elif isinstance(p, URLPattern):
            yield prefix + str(p.pattern)


def researcher_pages(study, run, link) -> list[str]:
    """Every study page served with the study id alone, the study list and form, and the pages
    that need one more id; a route is a page when a GET answers 200 with HTML (POST-only routes
    answer 405, exports a file)."""
    pages = ["/studies/", "/studies/new/", "/accounts/"]
    pages += ["/" + r.replace("<int:study_id>", str(study.pk)) for r in _routes() if STUDY_PAGE.match(r)]
    pages += [f"/studies/{study.pk}/metrics/runs/{run.pk}/", f"/studies/{study.pk}/field/links/{link.pk}/preview/"]
    client = Client()
    client.force_login(study.owner)
    html = []
    for url in sorted(set(pages)):
        r = client.get(url)
        if r.status_code == 200 and "text/html" in r.get("Content-Type", "") and not r.streaming:
            html.append(url)
    return html


def _check(page, url: str, width: int) -> bool:
    response = page.goto(url)
    assert response is not None and response.status == 200, url
    expect(page.locator("main h1, main h2").first).to_be_visible()
    client, scroll, boxes = page.evaluate(OVERFLOW_JS)
    assert scroll <= client, f"{url} at {width}px scrolls sideways ({scroll}px wide)"
    assert boxes == [], f"{url} at {width}px: content sticks out of {boxes}"
    if width == 1280:
        assert page.evaluate(CUT_SELECTS_JS) == [], f"{url}: drop-downs cut their text"
    return True


def test_every_researcher_page_fits_its_boxes_at_1280_and_375_px(page, judged):  # noqa: F811
    run = MetricRun.objects.get(study=judged)
    link = participation.join_link_create(study=judged, role="judge", created_by=judged.owner)
    browser_login(page, "rita")
    seen = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for url in researcher_pages(judged, run, link):
            assert _check(page, url, width)
            seen.append(url)
    for must in (
        "/metrics/",
        "/field/",
        "/participants/",
        "/judging/design/",
        "/judging/qc/",
        "/report/",
        "/alignment/",
        "/preview/",
    ):
        assert any(must in url for url in seen), f"no {must} page was checked: {sorted(set(seen))}"


@pytest.mark.parametrize("language", ["en", "ar"])
def test_every_page_a_join_link_judge_meets_fits_at_1280_and_375_px(page, judged, language):  # noqa: F811
    judged.language = language
    judged.save(update_fields=["language"])
    link = participation.join_link_create(study=judged, role="judge", created_by=judged.owner)
    page.set_viewport_size({"width": 375, "height": 900})
    for width in WIDTHS:  # the consent page, before joining
        page.set_viewport_size({"width": width, "height": 900})
        assert _check(page, f"/join/{link.token}/", width)
    page.locator("#consent-accept").click()
    page.wait_for_load_state()
    participant = Participant.objects.get(link=link)
    pages = ["/judge/", f"/judge/studies/{judged.pk}/instructions/", f"/judge/studies/{judged.pk}/"]
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for url in pages:
            assert _check(page, url, width), url
    if language == "ar":
        assert page.evaluate("document.documentElement.dir") == "rtl"
    screen_out(assignment=Assignment.objects.get(judge=participant.user), rule="attention", reason="failed")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert _check(page, f"/judge/studies/{judged.pk}/screened-out/", width)
