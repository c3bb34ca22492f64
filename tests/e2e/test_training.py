"""In real Chromium, by keyboard only: one judge fails the training and is screened out;
another passes it, sees feedback after each training pair, and goes on to real items."""

import re

import pytest
from playwright.sync_api import expect

from annotation.enums import Role
from annotation.services.membership import study_member_add
from tests.conftest import browser_login, enter_on_autofocus, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

#: Reference adequacy of the three training pairs.
REFERENCE = (5, 1, 3)


@pytest.fixture
def training_study(study, make_user):
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open

    for name in ("ann", "bob"):
        study_member_add(study=study, user=make_user(name), role=Role.JUDGE)
    design_update(study=study, changes={"seed": 7})
    study_judging_open(study=study)
    training_add(study)
    return study


def training_add(study):
    """The three training pairs (REFERENCE) and their pass rule: every pair within ±1 on adequacy, no retry."""
    from annotation.judging import screening, training

    for i, a in enumerate(REFERENCE, 1):
        training.training_item_add(
            study=study,
            row={
                "original": f"Training original {i}.",
                "candidate": f"Training paraphrase {i}.",
                "adequacy": a,
                "explanation": f"Explanation number {i}.",
            },
        )
    screening.screening_settings_update(
        study=study,
        changes={
            "training_criteria": ["adequacy"],
            "training_tolerance": 1,
            "training_required": 3,
            "training_retries": 0,
        },
    )


def start(page, study, who):
    browser_login(page, who)
    page.goto(f"/judge/studies/{study.pk}/")
    expect(page.get_by_role("heading", name="How to rate")).to_be_visible()
    enter_on_autofocus(page)


def answer_pair(page, n: int, keys: str, *, right: bool):
    expect(page.locator("#training-h")).to_have_text(f"Training: pair {n} of 3")
    expect(page.locator(".criterion.is-current")).to_have_count(1)  # rate.js has the keyboard
    for key in keys:
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    expect(page.locator("#feedback-h")).to_contain_text("Well done" if right else "Not quite")
    expect(page.locator("#feedback-explanation")).to_contain_text(f"Explanation number {n}.")


def test_a_judge_who_fails_the_training_is_screened_out(page, training_study):
    from annotation.judging.models import Assignment, TrainingAnswer
    from annotation.judging.protocols.absolute.models import Judgment

    start(page, training_study, "bob")
    answer_pair(page, 1, "1333", right=False)  # reference 5
    expect(page.locator("#feedback-table")).to_contain_text("Compared with ours")
    enter_on_autofocus(page)  # "Next training item" has the focus
    answer_pair(page, 2, "1333", right=True)
    enter_on_autofocus(page)
    answer_pair(page, 3, "5333", right=False)  # reference 3
    expect(page.locator("#training-result")).to_contain_text("You got 1 of 3 right")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Thank you for your time")).to_be_visible()
    screenshot(page, "judge-screened-out")
    page.goto(f"/judge/studies/{training_study.pk}/")  # no way back to the items
    expect(page).to_have_url(re.compile(r"/screened-out/$"))
    bob = Assignment.objects.get(judge__username="bob")
    assert bob.screened_out_rule == "training" and "1 of 3" in bob.screened_out_reason
    assert TrainingAnswer.objects.filter(assignment=bob).count() == 3
    assert not Judgment.objects.filter(judge=bob.judge).exists()


def test_a_judge_who_passes_goes_on_to_real_items_by_keyboard(page, training_study):
    from annotation.judging.models import Assignment, TrainingAnswer
    from annotation.judging.protocols.absolute.models import Judgment

    start(page, training_study, "ann")
    answer_pair(page, 1, "4333", right=True)
    screenshot(page, "judge-training-feedback")
    page.keyboard.press("Enter")
    answer_pair(page, 2, "2333", right=True)
    page.keyboard.press("Enter")
    answer_pair(page, 3, "3333", right=True)
    expect(page.locator("#training-result")).to_contain_text("Training passed")
    enter_on_autofocus(page)  # "Start rating"
    expect(page.locator("#item-h")).to_have_text("1 of 25")
    expect(page.locator(".criterion.is-current")).to_have_count(1)
    for key in "4423":
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    expect(page.locator("#item-h")).to_have_text("2 of 25")
    ann = Assignment.objects.get(judge__username="ann")
    assert ann.training_passed_at is not None and ann.screened_out_at is None
    assert TrainingAnswer.objects.filter(assignment=ann, correct=True).count() == 3
    assert [j.values for j in Judgment.objects.filter(judge=ann.judge)] == [
        {"adequacy": 4, "fluency": 4, "dissimilarity": 2, "overall": 3}
    ]


def test_an_attention_check_is_answered_by_keyboard_between_real_items(page, training_study):
    from annotation.judging import screening
    from annotation.judging.models import AttentionCheck, TrainingItem
    from annotation.judging.protocols.absolute.selectors import item_next_for_judge
    from annotation.judging.protocols.absolute.services import judgment_submit
    from annotation.judging.selectors.judge import assignment_for_judge

    TrainingItem.objects.filter(study=training_study).delete()  # no training here: straight to the items
    screening.screening_settings_update(
        study=training_study, changes={"attention_count": 1, "attention_policy": "warn"}
    )
    start(page, training_study, "ann")
    expect(page.locator("#item-h")).to_have_text("1 of 25")
    assignment = assignment_for_judge(study=training_study, judge=page_user("ann"))
    check = AttentionCheck.objects.get(assignment=assignment)
    while (item := item_next_for_judge(assignment=assignment)) and item.done < check.after_done:
        judgment_submit(
            study=training_study,
            judge=assignment.judge,
            token=item.token,
            key=f"server-{item.position:04d}",
            scores={"adequacy": 4, "fluency": 4, "dissimilarity": 3, "overall": 4},
            serve_stamp=item.serve_stamp,
        )
    page.goto(f"/judge/studies/{training_study.pk}/")
    expect(page.get_by_role("heading", name="Attention check")).to_be_visible()
    expect(page.locator("#attention-instruction")).to_contain_text(f"choose {int(check.expected)}")
    screenshot(page, "judge-attention-check")
    expect(page.locator(".criterion.is-current")).to_have_count(1)
    page.keyboard.press(str(int(check.expected)))
    page.keyboard.press("Enter")
    expect(page.locator("#item-h")).to_have_text(f"{check.after_done + 1} of 25")
    check.refresh_from_db()
    assert check.passed and check.answer == check.expected


def page_user(name):
    from django.contrib.auth.models import User

    return User.objects.get(username=name)
