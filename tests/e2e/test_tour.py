"""The README's tour, walked in real Chromium on the demo study `make run` loads.

Each step saves a screenshot (var/screenshots/tour-*.png); `make tour` copies them
to docs/tour/ where the README shows them.
"""

import re

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from annotation.demo import DEMO_STUDY_NAME
from annotation.models import Study
from tests.conftest import browser_login, enter_on_autofocus, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def shot(page, name):
    screenshot(page, f"tour-{name}", full_page=False)


def test_the_readme_tour_on_the_demo_study(page, browser, live_server, tmp_path):
    call_command("load_demo", "--quiet-credentials")
    study = Study.objects.get(name=DEMO_STUDY_NAME)

    # 1. A judge rates, by keyboard only.
    browser_login(page, "judge1", "judge1-demo")
    # judge1 is also a judge of the demo's error-span and ranking studies (their own cards)
    page.locator("li.card", has=page.get_by_role("heading", name=study.participant_title, exact=True)).get_by_role(
        "link", name="Start"
    ).click()
    expect(page.get_by_role("heading", name="How to rate")).to_be_visible()
    shot(page, "1-judge-instructions")
    enter_on_autofocus(page)
    expect(page.get_by_text(re.compile(r"^1 of 2,100$"))).to_be_visible()
    expect(page.locator(".criterion.is-current")).to_have_count(1)  # the page has taken the keyboard
    for key in "5443":
        page.keyboard.press(key)
    shot(page, "2-judge-rating")
    page.keyboard.press("Enter")
    expect(page.get_by_text(re.compile(r"^2 of 2,100$"))).to_be_visible()
    page.context.clear_cookies()

    # 2. The annotator aligns a demo group, pre-filled by the aligner.
    from annotation.alignment.models import AlignmentAssignment

    browser_login(page, "annotator", "annotator-demo")
    page.goto("/alignment/next/")
    expect(page.get_by_role("button", name=re.compile(r"^beginning × beginning"))).to_have_count(1)
    # Show a pair where the translations differ (John 1:1 is word for word the same).
    task = next(
        a
        for a in AlignmentAssignment.objects.filter(annotator__username="annotator")
        .select_related("pair")
        .order_by("pair__position")
        if a.pair.external_id.endswith(" web") and len(set(a.pair.tokens1) ^ set(a.pair.tokens2)) >= 6
    )
    page.goto(f"/alignment/tasks/{task.pk}/")
    cell = page.get_by_role("button", name=re.compile(r" × ")).nth(len(task.pair.tokens2) + 1)
    cell.hover()
    shot(page, "3-annotator-grid")
    page.context.clear_cookies()

    # 3. The researcher: the study, its metric runs, and a report of simulated judges.
    browser_login(page, "researcher", "researcher-demo")
    page.goto(f"/studies/{study.pk}/")
    for system in ("human", "synonyms", "pivot-mt", "embed-nn"):
        expect(page.get_by_role("table", name="Candidates per system").get_by_text(system, exact=True)).to_have_count(1)
    shot(page, "4-researcher-study")
    page.get_by_role("link", name="Metrics").click()
    expect(page.get_by_role("heading", name="Start a run")).to_be_visible()
    shot(page, "5-researcher-metrics")
    call_command(
        "simulate_judges",
        DEMO_STUDY_NAME,
        "--judges",
        "3",
        "--seed",
        "1",
        "--profile",
        "fixtures/demo/simulation_profile.json",
    )
    call_command("report", DEMO_STUDY_NAME, "--out", str(tmp_path), "--n-boot", "100")
    page.get_by_role("link", name="Report").click()
    expect(page.get_by_text("Table 1").first).to_be_visible()
    shot(page, "6-researcher-report")
    page.get_by_role("heading", name="Figures").scroll_into_view_if_needed()
    shot(page, "7-researcher-report-figures")
