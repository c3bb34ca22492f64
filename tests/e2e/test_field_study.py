"""In real Chromium, as a Prolific participant would: the join link with PROLIFIC_PID, consent, questions,
every item rated by keyboard, the completion code and the redirect back; then the researcher's export."""

import csv
import io
import re
import secrets

import pytest
from django.test import Client
from playwright.sync_api import expect

from tests.conftest import enter_on_autofocus, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def field_study(study):
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from annotation.participation import services

    design_update(study=study, changes={"seed": 3, "control_counts": {"identical": 1, "random": 0, "unigram": 0}})
    study_judging_open(study=study)  # no judges: they all come through the link
    services.participation_settings_update(
        study=study,
        consent_text="You will rate sentences. We keep your ratings and answers for research.",
        questions_before=[
            {"name": "native_language", "type": "language", "label": "Your native language", "required": True},
            {
                "name": "english",
                "type": "scale",
                "label": "How well do you read English?",
                "required": True,
                "choices": ["1", "2", "3", "4", "5"],
            },
        ],
        questions_after=[{"name": "comments", "type": "text", "label": "Anything you want to tell us?"}],
    )
    return study


def test_prolific_participant_walks_from_join_link_to_completion_and_is_exported(
    page, live_server, field_study, researcher
):
    from annotation.models import Participant
    from annotation.participation import services

    link = services.join_link_create(
        study=field_study,
        role="judge",
        platform="prolific",
        completion_code="CPL4E2E0",
        completion_url=f"{live_server.url}/accounts/login/?from=prolific&cc={{code}}",
    )
    pid, sid, sess = (secrets.token_hex(12) for _ in range(3))
    page.goto(f"/join/{link.token}/?PROLIFIC_PID={pid}&STUDY_ID={sid}&SESSION_ID={sess}")
    expect(page.locator("#consent-text")).to_contain_text("We keep your ratings")
    screenshot(page, "field-consent")
    page.get_by_role("button", name="I agree, start").click()

    expect(page.get_by_role("heading", name="Welcome")).to_be_visible()
    resume = page.locator("#resume-url").input_value()
    assert re.search(r"/participate/resume/[A-Za-z0-9_-]{40,}/$", resume)
    page.get_by_role("link", name="Begin").click()

    expect(page.get_by_role("heading", name="A few questions before you start")).to_be_visible()
    page.get_by_label("Your native language").fill("Español")
    page.get_by_role("radio", name="4").check()
    screenshot(page, "field-questions")
    page.get_by_role("button", name="Continue").click()

    expect(page.get_by_role("heading", name="How to rate")).to_be_visible()
    enter_on_autofocus(page)
    total = 15  # 5 originals × (2 systems + 1 control)
    for n in range(1, total + 1):
        expect(page.locator("#item-h")).to_have_text(f"{n} of {total}")
        expect(page.locator(".criterion.is-current")).to_have_count(1)
        for key in "4434" if n % 2 else "5523":
            page.keyboard.press(key)
        page.keyboard.press("Enter")

    expect(page.get_by_role("heading", name=re.compile("All done"))).to_be_visible()
    page.get_by_role("link", name="Answer the questions").click()
    page.get_by_label("Anything you want to tell us?").fill("Clear instructions.")
    page.get_by_role("button", name="Continue").click()

    expect(page.locator("#completion-code")).to_have_text("CPL4E2E0")
    expect(page.locator("#completion-link")).to_have_attribute(
        "href", f"{live_server.url}/accounts/login/?from=prolific&cc=CPL4E2E0"
    )
    # The page sends the participant back to the platform by itself after a few seconds
    # (here a local page stands in for Prolific's; where it goes from there is not ours).
    with page.expect_request(re.compile(r"/accounts/login/\?from=prolific&cc=CPL4E2E0$"), timeout=20_000) as sent:
        screenshot(page, "field-completion")
    assert sent.value.is_navigation_request()

    p = Participant.objects.get()
    assert p.platform_id == pid and p.completed_at is not None
    client = Client()
    client.force_login(researcher)
    text = b"".join(client.get(f"/studies/{field_study.pk}/participants.csv").streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 1
    row = rows[0]
    assert (row["platform"], row["platform_id"], row["platform_study_id"], row["platform_session_id"]) == (
        "prolific",
        pid,
        sid,
        sess,
    )
    assert row["status"] == "completed" and row["items_done"] == str(total) and row["items_total"] == str(total)
    assert row["completion_code"] == "CPL4E2E0" and float(row["active_seconds"]) > 0
    assert row["before:native_language"] == "Español" and row["before:english"] == "4"
    assert row["after:comments"] == "Clear instructions."
