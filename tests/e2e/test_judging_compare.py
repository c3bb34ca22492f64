"""In real Chromium: a judge compares pairs side by side by keyboard only (← ↓ → and 1/2/3,
Enter, Backspace to go back), and the stored answers map "A" to the candidate actually shown on the left."""

import pytest
from playwright.sync_api import expect

from annotation.enums import Role
from annotation.services.membership import study_member_add
from tests.conftest import browser_login, enter_on_autofocus, judge_keys_ready
from tests.factories import study_with_data

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

#: The keys pressed in turn, and the answer each one means.
#: Page loads after Enter may be slow on the shared CI machine: wait this long for the next page.
LOAD = 30_000
KEYS = [("ArrowLeft", "A"), ("ArrowDown", "tie"), ("ArrowRight", "B"), ("1", "A"), ("2", "tie"), ("3", "B")]


def test_judge_compares_pairs_by_keyboard_and_answers_map_to_the_shown_sides(page, live_server, researcher, make_user):
    from annotation.judging.protocols.side_by_side.models import ComparisonItem, ComparisonJudgment
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open

    study = study_with_data(owner=researcher, n_originals=3, systems=("alpha", "beta", "gamma"))
    ann = make_user("ann")
    study_member_add(study=study, user=ann, role=Role.JUDGE)
    design_update(
        study=study,
        changes={"protocol": "comparison", "seed": 3, "control_counts": {"identical": 1, "random": 0, "unigram": 0}},
    )
    study_judging_open(study=study)
    total = ComparisonItem.objects.filter(assignment__judge=ann).count()
    assert total == 3 * 3 + 3
    page.set_default_timeout(45_000)
    browser_login(page, "ann")
    page.goto(f"/judge/studies/{study.pk}/instructions/")
    enter_on_autofocus(page)
    expect(page.locator("#item-h")).to_have_text(f"1 of {total}", timeout=LOAD)

    shown: dict[str, tuple[str, str, str]] = {}  # token → (left text, right text, answer)
    for n in range(total):
        token = page.locator('#rating-form input[name="token"]').input_value()
        left = page.locator("#side-a .sentence-text").inner_text()
        right = page.locator("#side-b .sentence-text").inner_text()
        # the page's module script has run (it marks the current question) before any key
        expect(page.locator(".criterion.is-current")).to_have_count(1)
        # Enter before answering is refused and stores nothing
        if n == 0:
            page.keyboard.press("Enter")
            expect(page.locator("#rate-status")).to_contain_text("Answer every question first")
            assert not ComparisonJudgment.objects.exists()
        key, answer = KEYS[n % len(KEYS)]
        page.keyboard.press(key)
        expect(page.locator(f'input[name="preference"][value="{answer}"]')).to_be_checked()
        page.keyboard.press("Enter")
        shown[token] = (left, right, answer)
        if n + 1 < total:
            expect(page.locator("#item-h")).to_have_text(f"{n + 2} of {total}", timeout=LOAD)
    expect(page.locator("#done-h")).to_be_visible(timeout=LOAD)

    items = {
        it.token: it for it in ComparisonItem.objects.filter(assignment__judge=ann).select_related("left", "right")
    }
    assert set(shown) == set(items)
    for token, (left, right, answer) in shown.items():
        it = items[token]
        assert (it.left.text, it.right.text) == (left, right)  # the recorded sides are the shown ones
        assert it.judgments.get(is_latest=True).values == {"preference": answer}

    # Backspace goes back to the last pair (B is an answer's name here, not "back"); a change there is a revision
    judge_keys_ready(page)
    page.keyboard.press("Backspace")
    expect(page.locator("#item-h")).to_have_text(f"Changing pair {total} of {total}", timeout=LOAD)
    last_token = page.locator('#rating-form input[name="token"]').input_value()
    expect(page.locator(".criterion.is-current")).to_have_count(1)
    page.keyboard.press("ArrowRight" if shown[last_token][2] != "B" else "ArrowLeft")
    page.keyboard.press("Enter")
    expect(page.locator("#done-h")).to_be_visible(timeout=LOAD)
    latest = items[last_token].judgments.get(is_latest=True)
    assert latest.revision == 2 and latest.values["preference"] != shown[last_token][2]
