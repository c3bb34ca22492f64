"""In real Chromium: a researcher opens a large study's judging, watches the job's progress bar
while judges still see the study as not started, and a worker's outcome appears on the page."""

import pytest
from playwright.sync_api import expect

from annotation.enums import Role
from annotation.services.membership import study_member_add
from tests.conftest import browser_login, screenshot, watch_console

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_researcher_opens_judging_in_the_background_and_sees_progress_then_the_outcome(
    page, browser, live_server, study, make_user, settings
):
    from annotation.judging.models import OpenJob
    from config.celery import app
    from tests.conftest import thread_worker

    settings.PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS = 10  # 3 judges × 25 items: a worker opens it
    for name in ("ann", "bob", "cy"):
        study_member_add(study=study, user=make_user(name), role=Role.JUDGE)
    browser_login(page, "rita")
    page.goto(f"/studies/{study.pk}/judging/design/")
    page.get_by_role("button", name="Open study for judging").click()

    # No worker runs yet: the job waits, and the page says so with its progress bar.
    card = page.locator("#open-job")
    expect(card.get_by_role("heading", name="Opening judging")).to_be_visible()
    expect(page.get_by_text("Judging is being opened in the background")).to_be_visible()
    expect(card.get_by_role("progressbar", name="Judges whose list is built")).to_be_visible()
    expect(card.locator('[data-field="detail"]')).to_have_text("0 of 3")
    expect(card.locator('[data-field="status"]')).to_have_text("waiting for a worker")
    expect(page.get_by_role("button", name="Open study for judging")).to_have_count(0)
    expect(page.get_by_role("button", name="Save design")).to_be_disabled()
    screenshot(page, "judging-opening")

    # A judge meanwhile: the study has not started.
    judge = browser.new_context(base_url=live_server.url)
    judge_page = judge.new_page()
    judge_csp = watch_console(judge_page)
    browser_login(judge_page, "ann")
    judge_page.goto("/judge/")
    expect(judge_page.get_by_text("Rating has not started yet")).to_be_visible()

    # A worker comes up, runs the job; the page polls, reloads and shows the outcome.
    with thread_worker(app):
        expect(
            page.get_by_text("Judging is open: 15 controls built, 3 judge(s) assigned 75 items in all.")
        ).to_be_visible(timeout=60_000)
    assert OpenJob.objects.get(study=study).status == "succeeded"
    expect(page.locator("#open-job")).to_have_count(0)
    expect(page.get_by_text("The design is frozen.")).to_be_visible()
    screenshot(page, "judging-opened")

    judge_page.goto("/judge/")
    expect(judge_page.get_by_text("0 of 25 rated")).to_be_visible()
    judge.close()
    assert judge_csp == []
