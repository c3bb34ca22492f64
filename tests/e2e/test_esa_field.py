"""An ESA field study in real Chromium (issue 25): a Prolific participant comes through the join
link, answers the training (marks spans and scores; the first item wrong, the feedback page
after each), then annotates the real items with an attention item among them (answered as an
attentive reader does), and gets the completion code; the QC page shows the attention result."""

from __future__ import annotations

import secrets

import pytest
from playwright.sync_api import expect

from tests.conftest import browser_login
from tests.factories import study_with_data

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LOAD = 30_000
CODE = "ESAFIELD1"
TRAINING = [
    {
        "original": "The meeting was moved to Friday.",
        "candidate": "The meeting is now on Friday.",
        "score_min": "70",
        "major": "no",
        "explanation": "Nothing of the meaning is lost.",
    },
    {
        "original": "She bought three apples.",
        "candidate": "Rivers flow into the sea.",
        "score_max": "30",
        "major": "yes",
        "explanation": "An unrelated sentence keeps nothing.",
    },
]


def _mark_major(pg) -> None:
    """The paraphrase's first word, marked major with the keyboard (↓ then 2)."""
    pg.locator("#esa-span-list").click(position={"x": 1, "y": 1})
    pg.keyboard.press("ArrowDown")
    expect(pg.locator("#esa-new")).to_be_visible()
    pg.keyboard.press("2")
    expect(pg.locator("#esa-span-list .severity-major")).to_have_count(1)


def _submit(pg, score: int) -> None:
    pg.locator("#esa-score").fill(str(score))
    with pg.expect_navigation():
        pg.keyboard.press("Enter")


def test_a_prolific_participant_trains_meets_an_attention_item_and_gets_the_code(page, live_server, researcher):
    from annotation.judging import screening, training
    from annotation.judging.models import AttentionCheck, TrainingAnswer
    from annotation.judging.protocols.esa.models import EsaItem, EsaJudgment
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from annotation.models import Participant
    from annotation.participation import services as participation

    study = study_with_data(owner=researcher, n_originals=3, systems=("alpha", "beta"), name="ESA field")
    design_update(
        study=study,
        changes={"protocol": "esa", "seed": 9, "control_counts": {"identical": 1, "random": 0, "unigram": 0}},
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
    errors: list[str] = []
    ctx = page.context.browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    pg.on("response", lambda r: bad.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    ids = {k: secrets.token_hex(12) for k in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")}
    pg.goto(f"/join/{link.token}/?" + "&".join(f"{k}={v}" for k, v in ids.items()))
    pg.locator("#consent-accept").click()
    pg.locator("#start-link").click()
    if pg.locator('form[action$="/instructions/"] button[type="submit"]').count():
        pg.locator('form[action$="/instructions/"] button[type="submit"]').click()

    # training: the first item wrong (a major span and a low score on a faithful paraphrase)
    pg.wait_for_url("**/training/", timeout=LOAD)
    expect(pg.locator("#rating-form[data-ready]")).to_be_attached()
    expect(pg.locator("#esa-candidate")).to_have_text(TRAINING[0]["candidate"])
    _mark_major(pg)
    _submit(pg, 20)
    expect(pg.locator("#feedback-table")).to_contain_text("Lower than ours")
    expect(pg.locator("#feedback-table")).to_contain_text("Not the same as ours")
    expect(pg.locator("#feedback-spans li")).to_have_count(1)
    expect(pg.locator("#feedback-explanation")).to_contain_text("Nothing of the meaning is lost.")
    assert "70" not in pg.locator("#training-feedback").inner_text()  # never the reference
    with pg.expect_navigation():
        pg.locator("#continue-button").click()
    # the second right: a major span on the unrelated sentence, a low score
    expect(pg.locator("#esa-candidate")).to_have_text(TRAINING[1]["candidate"])
    expect(pg.locator("#rating-form[data-ready]")).to_be_attached()
    _mark_major(pg)
    _submit(pg, 10)
    expect(pg.locator("#feedback-table")).to_contain_text("Within range")
    expect(pg.locator("#training-result")).to_contain_text("The real items come next")  # not "pairs" (issue 42)
    with pg.expect_navigation():
        pg.locator("#continue-button").click()

    # the real items, an attention item among them
    met = []
    while True:
        expect(pg.locator("#rating-form, #done-h").first).to_be_visible(timeout=LOAD)
        if pg.locator("#done-h").count():
            break
        expect(pg.locator("#rating-form[data-ready]")).to_be_attached()
        token = pg.locator('#rating-form input[name="token"]').input_value()
        check = AttentionCheck.objects.filter(token=token).first()
        if check is not None:  # what an attentive reader does: a copy is fine, an unrelated sentence is not
            met.append(token)
            copy = pg.locator("#esa-candidate").text_content() == pg.locator("#esa-original").text_content()
            assert copy == (check.criterion == "copy")
            if not copy:
                _mark_major(pg)
            _submit(pg, 90 if copy else 10)
        else:
            _submit(pg, 60)
    expect(pg.locator("#completion-code")).to_have_text(CODE)
    assert not errors, errors
    ctx.close()

    participant = Participant.objects.get(study=study)
    assert participant.completed_at is not None
    answers = list(TrainingAnswer.objects.filter(assignment__study=study).order_by("id"))
    assert [a.correct for a in answers] == [False, True]
    assert answers[0].values["score"] == 20 and [s["severity"] for s in answers[0].values["spans"]] == ["major"]
    (check,) = AttentionCheck.objects.filter(assignment__study=study)
    assert met == [check.token] and check.passed
    n_items = EsaItem.objects.filter(assignment__study=study).count()
    assert EsaJudgment.objects.filter(study=study).count() == n_items == 3 * 2 + 3  # the check is no judgment

    browser_login(page, "rita")
    page.goto(f"/studies/{study.pk}/judging/qc/")
    username = check.assignment.judge.username
    expect(page.locator(f'#esa-qc-table tr[data-judge="{username}"] td[data-field="attention"]')).to_have_text("1 of 1")
    assert bad == [], bad
