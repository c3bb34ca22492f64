"""In real Chromium, the field study's whole path as two Prolific participants would walk it (issue 18).

One study, one join link with PROLIFIC_PID/STUDY_ID/SESSION_ID, training with a pass rule and an
attention check. Participant 1 fails the training and gets the screen-out code; participant 2
passes, rates by keyboard through an attention check, finishes and is sent back with the
completion code. The researcher's participants export then lists both.

With ``PARAEVAL_TOUR=1`` the key screens are saved to docs/tour/field-*.png (the README and
docs/field-studies.md show them); otherwise nothing committed is rewritten.
"""

import csv
import io
import os
import re
import secrets
from pathlib import Path

import pytest
from django.test import Client
from playwright.sync_api import expect

from tests.conftest import browser_login, enter_on_autofocus, watch_console
from tests.e2e import test_field_study, test_training

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TOUR_DIR = Path(__file__).resolve().parents[2] / "docs" / "tour"

field_study = test_field_study.field_study  # consent text, questions before and after, one control per judge
answer_pair = test_training.answer_pair


def tour_shot(page, name: str) -> None:
    """docs/tour/field-NAME.png, only when PARAEVAL_TOUR is set (viewport only: small files)."""
    if os.environ.get("PARAEVAL_TOUR"):
        TOUR_DIR.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(TOUR_DIR / f"field-{name}.png"), full_page=False)


@pytest.fixture
def screening_study(field_study):
    from annotation.judging import screening

    test_training.training_add(field_study)  # three training pairs, each within ±1 on adequacy, no retry
    screening.screening_settings_update(study=field_study, changes={"attention_count": 1, "attention_policy": "warn"})
    return field_study


@pytest.fixture
def new_page(browser, live_server):
    """A fresh browser context per participant (no shared cookies); closed, and checked for JS errors, at the end."""
    opened = []

    def make(width=1000, height=700):
        context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": height})
        context.set_default_timeout(15_000)
        pg = context.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda exc: errors.append(str(exc)))
        opened.append((context, errors, watch_console(pg)))
        return pg

    yield make
    for context, errors, csp in opened:
        context.close()
        assert not errors, f"JavaScript errors on the page: {errors}"
        assert not csp, f"Content-Security-Policy errors in the console: {csp}"


def prolific_ids() -> dict:
    return {
        "PROLIFIC_PID": secrets.token_hex(12),
        "STUDY_ID": secrets.token_hex(12),
        "SESSION_ID": secrets.token_hex(12),
    }


def join_and_start_training(page, link, ids: dict, *, shots: bool = False) -> None:
    """Join link → consent → welcome → questions → instructions → the first training pair."""
    query = "&".join(f"{k}={v}" for k, v in ids.items())
    page.goto(f"/join/{link.token}/?{query}")
    expect(page.locator("#consent-text")).to_contain_text("We keep your ratings")
    if shots:
        tour_shot(page, "1-consent")
    page.get_by_role("button", name="I agree, start").click()
    expect(page.get_by_role("heading", name="Welcome")).to_be_visible()
    page.get_by_role("link", name="Begin").click()
    expect(page.get_by_role("heading", name="A few questions before you start")).to_be_visible()
    page.get_by_label("Your native language").fill("Deutsch")
    page.get_by_role("radio", name="5").check()
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("heading", name="How to rate")).to_be_visible()
    enter_on_autofocus(page)


def test_two_prolific_participants_one_screened_out_one_completed_and_exported(
    new_page, live_server, screening_study, researcher
):
    from annotation.judging.models import AttentionCheck
    from annotation.judging.protocols.absolute.models import Judgment
    from annotation.models import Participant
    from annotation.participation import services

    back = f"{live_server.url}/accounts/login/?from=prolific&cc={{code}}"  # a local page stands in for Prolific's
    link = services.join_link_create(
        study=screening_study,
        role="judge",
        platform="prolific",
        completion_url=back,
        completion_code="CPLWALK1",
        screen_out_code="SCRNWALK1",
    )

    # Participant 1 fails the training: the screen-out code, and the way back to Prolific with it.
    ids1 = prolific_ids()
    p1 = new_page()
    join_and_start_training(p1, link, ids1, shots=True)
    answer_pair(p1, 1, "1333", right=False)  # reference 5
    expect(p1.locator("#feedback-table")).to_contain_text("Compared with ours")
    p1.evaluate("window.scrollTo(0, 0)")
    tour_shot(p1, "2-training-feedback")
    enter_on_autofocus(p1)
    answer_pair(p1, 2, "1333", right=True)
    enter_on_autofocus(p1)
    answer_pair(p1, 3, "5333", right=False)  # reference 3
    expect(p1.locator("#training-result")).to_contain_text("You got 1 of 3 right")
    enter_on_autofocus(p1)
    expect(p1.locator("#end-code")).to_have_attribute("data-outcome", "screened_out")
    expect(p1.locator("#completion-code")).to_have_text("SCRNWALK1")
    expect(p1.locator("#completion-link")).to_have_attribute(
        "href", f"{live_server.url}/accounts/login/?from=prolific&cc=SCRNWALK1"
    )
    tour_shot(p1, "3-screen-out-code")
    p1.goto(f"/judge/studies/{screening_study.pk}/")  # no way back to the items
    expect(p1).to_have_url(re.compile(r"/screened-out/$"))
    expect(p1.locator("#completion-code")).to_have_text("SCRNWALK1")

    # Participant 2, in a browser of their own, passes and rates every item by keyboard.
    ids2 = prolific_ids()
    p2 = new_page()
    join_and_start_training(p2, link, ids2)
    for n, keys in enumerate(("4333", "2333", "3333"), 1):
        answer_pair(p2, n, keys, right=True)
        enter_on_autofocus(p2)  # next pair, then "Start rating"
    expect(p2.locator("#item-h")).to_have_text(re.compile(r"^1 of \d+$"))
    participant2 = Participant.objects.get(platform_id=ids2["PROLIFIC_PID"])
    check = AttentionCheck.objects.get(assignment__judge=participant2.user)
    total = int(p2.locator("#item-h").inner_text().split(" of ")[1])
    assert total == 15  # 5 originals × (2 systems + 1 control)
    for n in range(1, total + 1):
        if n == check.after_done + 1:
            expect(p2.get_by_role("heading", name="Attention check")).to_be_visible()
            expect(p2.locator("#attention-instruction")).to_contain_text(f"choose {int(check.expected)}")
            expect(p2.locator(".criterion.is-current")).to_have_count(1)
            tour_shot(p2, "4-attention-check")
            p2.keyboard.press(str(int(check.expected)))
            p2.keyboard.press("Enter")
        expect(p2.locator("#item-h")).to_have_text(f"{n} of {total}")
        expect(p2.locator(".criterion.is-current")).to_have_count(1)
        for key in ("4434", "5523", "3342")[n % 3]:  # varied, as a person would rate
            p2.keyboard.press(key)
        p2.keyboard.press("Enter")

    expect(p2.get_by_role("heading", name=re.compile("All done"))).to_be_visible()
    p2.get_by_role("link", name="Answer the questions").click()
    p2.get_by_role("button", name="Continue").click()  # the one after-question is optional
    expect(p2.locator("#completion-code")).to_have_text("CPLWALK1")
    expect(p2.locator("#completion-link")).to_have_attribute(
        "href", f"{live_server.url}/accounts/login/?from=prolific&cc=CPLWALK1"
    )
    with p2.expect_request(re.compile(r"/accounts/login/\?from=prolific&cc=CPLWALK1$"), timeout=20_000) as sent:
        tour_shot(p2, "5-completion-code")
    assert sent.value.is_navigation_request()
    check.refresh_from_db()
    assert check.passed

    # The researcher: the participants page, and the CSV they approve and pay from.
    r = new_page(1280, 800)  # the participants table needs the width
    browser_login(r, "rita")
    r.goto(f"/studies/{screening_study.pk}/participants/")
    expect(r.locator("body")).to_contain_text(ids1["PROLIFIC_PID"])
    expect(r.locator("body")).to_contain_text(ids2["PROLIFIC_PID"])
    r.locator("table").first.scroll_into_view_if_needed()
    tour_shot(r, "6-participants")

    client = Client()
    client.force_login(researcher)
    text = b"".join(client.get(f"/studies/{screening_study.pk}/participants.csv").streaming_content).decode()
    rows = {row["platform_id"]: row for row in csv.DictReader(io.StringIO(text))}
    assert set(rows) == {ids1["PROLIFIC_PID"], ids2["PROLIFIC_PID"]}
    for ids, status, code in ((ids1, "screened_out", "SCRNWALK1"), (ids2, "completed", "CPLWALK1")):
        row = rows[ids["PROLIFIC_PID"]]
        assert (row["platform"], row["platform_study_id"], row["platform_session_id"]) == (
            "prolific",
            ids["STUDY_ID"],
            ids["SESSION_ID"],
        )
        assert row["status"] == status and row["completion_code"] == code
    assert rows[ids2["PROLIFIC_PID"]]["items_done"] == str(total)
    participant1 = Participant.objects.get(platform_id=ids1["PROLIFIC_PID"])
    assert not Judgment.objects.filter(judge=participant1.user).exists()
    assert Judgment.objects.filter(judge=participant2.user).count() == total
