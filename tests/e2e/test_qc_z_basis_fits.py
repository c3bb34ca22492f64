"""In real Chromium: the judge QC page of a study with two 0–100 sliders and a point scale —
each slider adding a μ, σ column (the judges' z-basis) to the MAD and control-test columns
— still fits 1280 px without a sideways scroll, and a phone's page does not scroll
sideways (issue 25).

As the stylesheet says, a wider design scrolls inside its card: measured while writing
this, adding a fourth (categorical) criterion made the table 1,215 px in a 1,208 px box
(1,086 px without the two z-basis columns)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from annotation.judging.protocols.absolute.selectors import item_next_for_judge
from annotation.judging.protocols.absolute.services import judgment_submit
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from tests.annotation.judging.conftest import new_key
from tests.annotation.judging.test_scales import GRAM, SIM
from tests.conftest import browser_login
from tests.e2e.test_layout_and_policy import OVERFLOW_JS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FLUENCY = {
    "slug": "fluency_da",
    "name": "Fluency",
    "help": "",
    "scale": {"type": "slider", "min": 0, "max": 100, "anchors": {"low": "Broken", "high": "Native"}},
}


@pytest.fixture
def slider_qc(study, make_user):
    from annotation.enums import Role
    from annotation.services.membership import study_member_add

    for name in ("sim-judge-01", "bob", "cy"):
        study_member_add(study=study, user=make_user(name), role=Role.JUDGE)
    design_update(study=study, changes={"criteria": [SIM, FLUENCY, GRAM], "seed": 3})
    design_update(
        study=study,
        changes={
            "expected_scores": {
                "identical": {"similarity": 100, "fluency_da": 100, "grammar": 2},
                "random": {"similarity": 0, "fluency_da": 100, "grammar": 2},
                "unigram": {"similarity": 0, "fluency_da": 0, "grammar": 0},
            }
        },
    )
    study_judging_open(study=study)
    for j, name in enumerate(("sim-judge-01", "bob", "cy")):
        judge = User.objects.get(username=name)
        assignment = assignment_for_judge(study=study, judge=judge)
        k = 0
        while (item := item_next_for_judge(assignment=assignment)) is not None:
            k += 1
            sim = 50 if name == "cy" else (17 * k + 31 * j) % 101  # cy: σ = 0, "z undefined"
            judgment_submit(
                study=study,
                judge=judge,
                token=item.token,
                key=new_key(),
                serve_stamp=item.serve_stamp,
                scores={"similarity": sim, "fluency_da": (k * 7.5) % 100, "grammar": k % 3},
            )
    return study


def test_the_qc_table_with_z_basis_columns_fits_1280_px_and_a_phone(page, slider_qc):
    browser_login(page, "rita")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"/studies/{slider_qc.pk}/judging/qc/")
    table = page.locator("#qc-table")
    expect(table).to_be_visible()
    expect(table.locator('[data-field="z-basis"]')).to_have_count(6)
    expect(table).to_contain_text("no z")
    scroller = page.locator(".table-scroll").first
    assert scroller.evaluate("e => e.scrollWidth <= e.clientWidth"), "the QC table needs a sideways scroll at 1280 px"
    client, scroll, boxes = page.evaluate(OVERFLOW_JS)
    assert scroll <= client and boxes == [], boxes
    page.set_viewport_size({"width": 375, "height": 800})
    page.reload()
    expect(table).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
