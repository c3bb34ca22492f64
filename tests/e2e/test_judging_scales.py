"""In real Chromium: a judge rates a slider (arrow keys) and a 0–2 point scale (number keys)."""

import re

import pytest
from playwright.sync_api import expect

from annotation.enums import Role
from annotation.services.membership import study_member_add
from tests.conftest import browser_login, enter_on_autofocus

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIM = {
    "slug": "similarity",
    "name": "Similarity",
    "help": "How close in meaning?",
    "scale": {
        "type": "slider",
        "min": 0,
        "max": 100,
        "anchors": {"low": "Nothing in common", "mid": "Half the meaning", "high": "Same meaning"},
    },
}
GRAM = {
    "slug": "grammar",
    "name": "Grammaticality",
    "help": "",
    "scale": {
        "type": "points",
        "min": 0,
        "max": 2,
        "labels": ["Nonsense", "Meaningful, ungrammatical", "Meaningful and grammatical"],
    },
}


def test_judge_rates_with_a_slider_and_points_by_keyboard(page, live_server, study, make_user):
    from annotation.judging.protocols.absolute.models import Judgment
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open

    ann = make_user("ann")
    study_member_add(study=study, user=ann, role=Role.JUDGE)
    design_update(
        study=study,
        changes={"criteria": [SIM, GRAM], "seed": 7, "control_counts": {"identical": 0, "random": 0, "unigram": 0}},
    )
    study_judging_open(study=study)
    # The shared CI machine can be slow to serve the first page: wait longer than the default.
    page.set_default_timeout(45_000)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "favicon" not in m.text else None)
    browser_login(page, "ann")
    page.goto(f"/judge/studies/{study.pk}/instructions/")
    expect(page.get_by_text("A slider from 0 (Nothing in common)")).to_be_visible()
    enter_on_autofocus(page)
    expect(page.locator("#item-h")).to_have_text("1 of 10")
    slider = page.get_by_role("slider", name="Similarity")
    expect(slider).to_be_focused()
    expect(page.locator("#similarity-value")).to_have_text("not set")

    # an untouched slider is not a value: Enter refuses, nothing is stored
    page.keyboard.press("Enter")
    expect(page.locator("#rate-status")).to_contain_text("Give every criterion a value first")
    assert not Judgment.objects.exists()

    # arrows move it from the middle; the value shows beside it
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    expect(page.locator("#similarity-value")).to_have_text("53")
    page.keyboard.press("PageUp")
    expect(page.locator("#similarity-value")).to_have_text("63")
    page.keyboard.press("Tab")  # on to the point scale, where 0–2 are typed as themselves
    page.keyboard.press("2")
    expect(page.get_by_role("radio", name=re.compile("Meaningful and grammatical"))).to_be_checked()
    page.keyboard.press("Enter")
    expect(page.locator("#item-h")).to_have_text("2 of 10")
    assert Judgment.objects.get().values == {"similarity": 63, "grammar": 2}

    # the next item starts unset again; mouse-free all the way
    expect(page.locator("#similarity-value")).to_have_text("not set")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Tab")
    page.keyboard.press("0")
    page.keyboard.press("Enter")
    expect(page.locator("#item-h")).to_have_text("3 of 10")
    assert sorted(j.values["similarity"] for j in Judgment.objects.all()) == [49, 63]

    # a click on the thumb where it rests (the middle: 50) changes no value, yet gives 50, a value
    # like any other (issue 42: it used to stay "not set")
    expect(page.locator("#similarity-value")).to_have_text("not set")
    slider.click()
    expect(page.locator("#similarity-value")).to_have_text("50")
    page.keyboard.press("Tab")
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    expect(page.locator("#item-h")).to_have_text("4 of 10")
    assert sorted(j.values["similarity"] for j in Judgment.objects.all()) == [49, 50, 63]
    assert not errors, errors
