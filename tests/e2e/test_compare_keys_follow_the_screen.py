"""In real Chromium, per page language (en, es, ar): on the side-by-side page the keys follow the
screen (issue 24, item 7). Whatever is drawn on the left is chosen by ← and 1, whatever is on
the right by → and 3, and the key printed under each answer is the one that chooses it: on the
mirrored Arabic page A is drawn on the right, so → chooses A. "B" never goes back there (it is
an answer's name); Backspace does."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation.enums import Role
from annotation.services.membership import study_member_add
from annotation.services.studies import study_update
from tests.conftest import browser_login, judge_keys_ready
from tests.factories import study_with_data

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LOAD = 30_000


def _x(page, selector: str) -> float:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return box["x"] + box["width"] / 2


@pytest.mark.parametrize("lang", ["en", "es", "ar"])
def test_compare_keys_choose_what_is_drawn_where_the_key_points(page, live_server, researcher, make_user, lang):
    from annotation.judging.protocols.side_by_side.models import ComparisonItem, ComparisonJudgment
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open

    study = study_with_data(owner=researcher, n_originals=2, systems=("alpha", "beta", "gamma"))
    study_update(study=study, changes={"language": lang})
    ann = make_user("ann")
    study_member_add(study=study, user=ann, role=Role.JUDGE)
    design_update(
        study=study,
        changes={"protocol": "comparison", "seed": 8, "control_counts": {"identical": 0, "random": 0, "unigram": 0}},
    )
    study_judging_open(study=study)
    total = ComparisonItem.objects.filter(assignment__judge=ann).count()
    page.set_default_timeout(45_000)
    browser_login(page, "ann")
    page.goto(f"/judge/studies/{study.pk}/instructions/")
    rtl = page.evaluate("document.documentElement.dir") == "rtl"
    assert rtl == (lang == "ar")
    page.locator('main form button[type="submit"]').click()
    expect(page.locator("#rating-form")).to_be_visible(timeout=LOAD)

    # A's text and A's answer are on the same side, and that side is the right one in Arabic
    a_left = _x(page, "#side-a") < _x(page, "#side-b")
    assert a_left == (not rtl)
    assert (_x(page, 'label[for="preference-A"]') < _x(page, 'label[for="preference-B"]')) == a_left
    left, right = ("A", "B") if a_left else ("B", "A")
    # the key printed under each answer is the arrow pointing where it is drawn
    expect(page.locator(f'label[for="preference-{left}"] kbd')).to_have_text("←")
    expect(page.locator(f'label[for="preference-{right}"] kbd')).to_have_text("→")
    expect(page.locator("#keys-hint")).not_to_contain_text("B goes back")

    presses = [
        ("ArrowLeft", left),
        ("ArrowRight", right),
        ("1", left),
        ("3", right),
        ("ArrowDown", "tie"),
        ("2", "tie"),
    ]
    answered: dict[str, str] = {}
    for n in range(total):
        expect(page.locator(".criterion.is-current")).to_have_count(1)  # the script has run
        key, answer = presses[n % len(presses)]
        token = page.locator('#rating-form input[name="token"]').input_value()
        page.keyboard.press(key)
        expect(page.locator(f'input[name="preference"][value="{answer}"]')).to_be_checked()
        page.keyboard.press("Enter")
        answered[token] = answer
        if n + 1 < total:
            expect(page.locator("#item-h")).to_contain_text(f"{n + 2}", timeout=LOAD)
    expect(page.locator("#done-h")).to_be_visible(timeout=LOAD)
    stored = {
        j.item.token: j.values["preference"]
        for j in ComparisonJudgment.objects.filter(judge=ann, is_latest=True).select_related("item")
    }
    assert stored == answered

    # "b" is not "go back" on this page; Backspace is
    judge_keys_ready(page)
    page.keyboard.press("b")
    expect(page.locator("#done-h")).to_be_visible()
    page.keyboard.press("Backspace")
    expect(page.locator("#rating-form")).to_be_visible(timeout=LOAD)
    page.keyboard.press("b")
    page.wait_for_timeout(300)
    expect(page.locator("#rating-form")).to_be_visible()
    assert ComparisonJudgment.objects.filter(judge=ann).count() == total  # nothing stored by those keys
