"""A ranking field study in real Chromium (issue 25): a Prolific participant comes through the
join link, does the training (two sets with a reference order; the first answered wrong, the
feedback page after each, one right of two needed), then ranks the real sets by keys with one
attention set among them (a copy of the original ranked first, the unrelated sentence last),
and gets the completion code; the QC page shows the participant's attention result."""

from __future__ import annotations

import re
import secrets

import pytest
from playwright.sync_api import expect

from tests.conftest import browser_login
from tests.factories import study_with_data

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LOAD = 30_000
CODE = "RANKFIELD1"
TRAINING = [
    {
        "original": "The meeting was moved to Friday.",
        "p1": "The meeting was cancelled.",
        "p2": "The meeting is now on Friday.",
        "p3": "On Friday the meeting takes place now.",
        "reference": "2 = 3 > 1",
        "explanation": "Paraphrase 1 changes the meaning.",
    },
    {
        "original": "She bought three apples.",
        "p1": "She purchased three apples.",
        "p2": "She sold apples.",
        "p3": "Three apples were bought by her.",
        "reference": "1 = 3 > 2",
        "explanation": "2 changes the meaning.",
    },
]


def _screen(pg) -> list[int]:
    return [int(p) for p in pg.locator("#rank-list .rank-card").evaluate_all("els => els.map(e => e.dataset.place)")]


def _by_keys(pg, target: list[int]) -> None:
    """Put the cards in ``target`` order (places, best first) with the digit and ↑ keys."""
    expect(pg.locator("#rank-list[data-ready]")).to_have_count(1, timeout=LOAD)
    for i, place in enumerate(target):
        pg.keyboard.press(str(place))
        expect(pg.locator(f'.rank-card[data-place="{place}"]')).to_have_class(re.compile(r"\bis-selected\b"))
        for _ in range(_screen(pg).index(place) - i):
            pg.keyboard.press("ArrowUp")
    assert _screen(pg) == target


def test_a_prolific_participant_trains_meets_an_attention_set_and_gets_the_code(page, live_server, researcher):
    from annotation.judging import screening, training
    from annotation.judging.models import AttentionCheck, TrainingAnswer
    from annotation.judging.protocols.ranking.models import RankingItem, RankingJudgment
    from annotation.judging.protocols.ranking.screening import attention_layout
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from annotation.models import Participant
    from annotation.participation import services as participation

    study = study_with_data(owner=researcher, n_originals=3, systems=("alpha", "beta", "gamma"), name="Rank field")
    design_update(
        study=study,
        changes={
            "protocol": "ranking",
            "ranking_k": 3,
            "seed": 4,
            "control_counts": {"identical": 1, "random": 0, "unigram": 0},
        },
    )
    study_judging_open(study=study)
    for row in TRAINING:
        training.training_item_add(study=study, row=row, from_text=True)
    screening.screening_settings_update(
        study=study,
        changes={
            "training_required": 1,
            "training_retries": 0,
            "attention_count": 1,
            "attention_policy": "end",
            "attention_max_failures": 1,
        },
    )
    link = participation.join_link_create(
        study=study, role="judge", platform="prolific", created_by=researcher, completion_code=CODE
    )
    bad: list[str] = []
    js_errors: list[str] = []
    ctx = page.context.browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    pg.on("response", lambda r: bad.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    pg.on("pageerror", lambda exc: js_errors.append(str(exc)))
    ids = {k: secrets.token_hex(12) for k in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")}
    pg.goto(f"/join/{link.token}/?" + "&".join(f"{k}={v}" for k, v in ids.items()))
    pg.locator("#consent-accept").click()
    pg.locator("#start-link").click()
    if pg.locator('form[action$="/instructions/"] button[type="submit"]').count():
        pg.locator('form[action$="/instructions/"] button[type="submit"]').click()

    # the training: the first set wrong (2 above 3 and 1 first), the second right, feedback after each
    pg.wait_for_url("**/training/", timeout=LOAD)
    answered, feedbacks = 0, []
    while "/training/" in pg.url:
        expect(pg.locator("#training-feedback, #rating-form").first).to_be_visible(timeout=LOAD)
        if pg.locator("#training-feedback").count():
            feedbacks.append(pg.locator("#feedback-table").inner_text())
            expect(pg.locator("#feedback-explanation")).to_be_visible()
            pg.locator("#continue-button").click()
            pg.wait_for_url(lambda url: "/feedback/" not in url, timeout=LOAD)
            continue
        _by_keys(pg, [1, 2, 3] if answered == 0 else [3, 1, 2])
        pg.keyboard.press("Enter")
        pg.wait_for_url("**/training/feedback/", timeout=LOAD)
        answered += 1
    assert answered == 2
    assert "Not the same as ours" in feedbacks[0] and "Not the same as ours" not in feedbacks[1]
    assert [a.correct for a in TrainingAnswer.objects.filter(assignment__study=study).order_by("id")] == [False, True]

    # the real sets, one attention set among them, by keys
    checks, sets = [], 0
    while True:
        expect(pg.locator("#rating-form, #done-h").first).to_be_visible(timeout=LOAD)
        if pg.locator("#done-h").count():
            break
        token = pg.locator('#rating-form input[name="token"]').input_value()
        check = AttentionCheck.objects.filter(token=token).first()
        if check is not None:
            _item, texts, copy, unrelated = attention_layout(check=check)
            original = pg.locator(".compare-original .sentence-text").inner_text()
            assert pg.locator(f'.rank-card[data-place="{copy}"] .sentence-text').inner_text() == original
            rest = [p for p in range(1, 4) if p not in (copy, unrelated)]
            _by_keys(pg, [copy, *rest, unrelated])
            checks.append(token)
        else:
            _by_keys(pg, _screen(pg))
            sets += 1
        pg.keyboard.press("Enter")
        expect(pg.locator(f'input[name="token"][value="{token}"]')).to_have_count(0, timeout=LOAD)
    expect(pg.locator("#completion-code")).to_have_text(CODE)
    ctx.close()

    assert len(checks) == 1 and AttentionCheck.objects.get(token=checks[0]).passed
    assert Participant.objects.filter(study=study, completed_at__isnull=False).count() == 1
    assert sets == RankingItem.objects.filter(assignment__study=study).count()
    assert RankingJudgment.objects.filter(study=study).count() == sets  # the check is no judgment
    username = RankingItem.objects.filter(assignment__study=study).first().assignment.judge.username

    browser_login(page, "rita")
    page.goto(f"/studies/{study.pk}/judging/qc/")
    expect(page.locator(f'#ranking-qc-table tr[data-judge="{username}"] td[data-field="attention"]')).to_have_text(
        "1 of 1"
    )
    page.goto(f"/studies/{study.pk}/judging/design/")
    expect(page.locator("#training-items tbody tr")).to_have_count(2)
    expect(page.locator("#training-items")).to_contain_text("2 = 3 > 1")
    assert bad == [] and js_errors == []
