"""A criterion is one unit (issue 24): its scale says how its values are plotted, which
control test fits, how a training tolerance and an attention check read on it — so a
0–100 slider or a categorical criterion works in QC and training as PEM's 1–5 points do."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from annotation.judging import scales, screening, training
from annotation.judging.defaults import default_criteria, default_expected_scores
from annotation.judging.errors import DesignInvalid
from annotation.judging.protocols.absolute import screening as absolute_screening
from annotation.judging.protocols.absolute.models import AssignmentItem
from annotation.judging.protocols.absolute.selectors import item_next_for_judge
from annotation.judging.protocols.absolute.services import judgment_submit
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.judging.selectors.qc import judge_qc
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from metrics.core.controls import CONTROL_KINDS

from .conftest import new_key

pytestmark = pytest.mark.django_db

MEANING = {
    "slug": "meaning",
    "name": "Meaning",
    "help": "Same meaning?",
    "scale": {"type": "slider", "min": 0, "max": 100, "anchors": {"low": "None", "high": "All"}},
}
GRAMMAR = {
    "slug": "grammar",
    "name": "Grammar",
    "help": "",
    "scale": {"type": "points", "min": 1, "max": 5, "labels": ["bad", "poor", "fair", "good", "perfect"]},
}
TOPIC = {
    "slug": "topic",
    "name": "Topic",
    "help": "",
    "scale": {"type": "categorical", "categories": ["same", "different"]},
}
EXPECTED = {
    "identical": {"meaning": 100, "grammar": 5, "topic": 0},
    "random": {"meaning": 5, "grammar": 5, "topic": 1},
    "unigram": {"meaning": 0, "grammar": 1, "topic": 1},
}


def test_each_scale_says_how_to_plot_tolerate_and_test_its_values():
    slider, points, cats = (scales.scale_unit(c["scale"]) for c in (MEANING, GRAMMAR, TOPIC))
    assert slider.axis_label("Meaning") == "Meaning (0–100)" and not slider.discrete
    assert points.axis_label("Grammar") == "Grammar (1–5)" and points.values == (1, 2, 3, 4, 5)
    assert cats.axis_label("Topic") == "Topic (categories)" and cats.labels == ("same", "different")
    assert (slider.level, points.level, cats.level) == ("interval", "ordinal", "nominal")
    assert (slider.qc_test, points.qc_test, cats.qc_test) == ("mann-whitney", "mann-whitney", None)
    assert (slider.default_tolerance, points.default_tolerance, cats.default_tolerance) == (10, 1, 0)
    assert slider.axis_limits()[0] < 0 and slider.axis_limits()[1] > 100
    assert points.axis_limits() == (0.5, 5.5)
    assert slider.within(78, 70, 10) and not slider.within(81, 70, 10)
    assert cats.within(1, 1, 0) and not cats.within(0, 1, 5)
    assert slider.tolerance_errors(150) and cats.tolerance_errors(1) and not points.tolerance_errors(1)
    assert slider.attention_values == (0, 25, 50, 75, 100) and slider.attention_tolerance == 5
    assert points.value_text(4) == "good" and slider.value_text(37.5) == "37.5"


def test_control_tests_follow_each_criterion_scale_not_its_name():
    tests = scales.criteria_qc_tests([MEANING, GRAMMAR, TOPIC], EXPECTED)
    assert tests == (
        ("meaning_of_random_and_unigram", "meaning", ("random", "unigram")),
        ("grammar_of_unigram", "grammar", ("unigram",)),
    )
    # PEM's ready-made design keeps PEM's three tests (and gains overall's)
    pem = scales.criteria_qc_tests(default_criteria(), default_expected_scores())
    assert [t[0] for t in pem] == [
        "adequacy_of_random_and_unigram",
        "fluency_of_unigram",
        "dissimilarity_of_identical",
        "overall_of_random_and_unigram",
    ]
    assert scales.qc_test_label([MEANING], "meaning", ("random", "unigram")) == "Meaning: random & unigram controls"


@pytest.fixture
def slider_study(study, add_judge):
    add_judge(study, "ann")
    add_judge(study, "bob")
    design_update(study=study, changes={"criteria": [MEANING, GRAMMAR, TOPIC], "expected_scores": EXPECTED, "seed": 7})
    study_judging_open(study=study)
    study.refresh_from_db()
    return study


def _rate(study, username, score_fn):
    judge = User.objects.get(username=username)
    assignment = assignment_for_judge(study=study, judge=judge)
    n = 0
    while (item := item_next_for_judge(assignment=assignment)) is not None:
        cand = AssignmentItem.objects.select_related("candidate__system").get(token=item.token).candidate
        judgment_submit(
            study=study,
            judge=judge,
            token=item.token,
            key=new_key(),
            serve_stamp=item.serve_stamp,
            scores=score_fn(cand.system.kind, n),
        )
        absolute_screening.qc_auto_check(assignment=assignment)  # what the worker runs after each submit
        assignment.refresh_from_db()
        if assignment.screened_out_at is not None:
            break
        n += 1
    return n


def careful(kind: str, n: int) -> dict:
    bad = kind.startswith("control_") and kind != "control_identical"
    return {
        "meaning": (3 + n % 4) if bad else 65 + (n * 7) % 30,
        "grammar": 1 if kind == "control_unigram" else 4,
        "topic": 1 if bad else 0,
    }


def careless(kind: str, n: int) -> dict:
    return {"meaning": 80 - n % 3, "grammar": 4, "topic": 0}


def test_a_meaning_slider_with_expected_control_values_gets_a_mann_whitney_test(slider_study):
    _rate(slider_study, "ann", careful)
    _rate(slider_study, "bob", careless)
    rows = {r["judge"]: r["qc"] for r in judge_qc(study=slider_study)}
    ann = {t.name: t for t in rows["ann"].tests}
    bob = {t.name: t for t in rows["bob"].tests}
    assert set(ann) == {"meaning_of_random_and_unigram", "grammar_of_unigram"}  # none on the categorical topic
    assert ann["meaning_of_random_and_unigram"].passed is True and ann["meaning_of_random_and_unigram"].pvalue < 0.05
    assert bob["meaning_of_random_and_unigram"].passed is False
    n_low = sum(1 for k in CONTROL_KINDS if k != "identical")
    assert ann["meaning_of_random_and_unigram"].n_control == n_low * 5  # 5 originals, one control of each kind


def test_automatic_screen_out_uses_the_slider_test(slider_study):
    screening.screening_settings_update(
        study=slider_study, changes={"qc_auto": True, "qc_auto_pvalue": 0.05, "qc_auto_min_controls": 8}
    )
    _rate(slider_study, "bob", lambda kind, n: {**careless(kind, n), "grammar": careful(kind, n)["grammar"]})
    bob = assignment_for_judge(study=slider_study, judge=User.objects.get(username="bob"))
    assert bob.screened_out_rule == "qc" and "meaning of random/unigram controls" in bob.screened_out_reason
    assert "grammar" not in bob.screened_out_reason


def test_the_qc_page_heads_columns_with_criterion_names_and_the_design_tests(slider_study, researcher, client):
    _rate(slider_study, "ann", careful)
    client.force_login(researcher)
    page = client.get(f"/studies/{slider_study.pk}/judging/qc/").content.decode()
    assert '<span class="qc-criterion">Meaning</span>' in page and '<span class="qc-criterion">Topic</span>' in page
    assert "Meaning: random &amp; unigram controls" in page and "Grammar: unigram control<" in page
    assert 'id="qc-untested"' in page and "<strong>Topic</strong>" in page


def test_training_tolerance_is_per_criterion_and_on_its_scale(slider_study):
    units = [MEANING, GRAMMAR, TOPIC]
    exp = {"meaning": 70, "grammar": 2, "topic": 1}
    defaults = scales.criteria_tolerances(units, {}, points=1)
    assert defaults == {"meaning": 10.0, "grammar": 1.0, "topic": 0.0}
    right = {"meaning": 78, "grammar": 3, "topic": 1}
    assert training.answer_correct(values=right, expected=exp, criteria=units, checked=[], tolerance=defaults)
    assert not training.answer_correct(
        values={**right, "meaning": 81}, expected=exp, criteria=units, checked=[], tolerance=defaults
    )
    assert not training.answer_correct(
        values={**right, "topic": 0}, expected=exp, criteria=units, checked=[], tolerance=defaults
    )
    # the researcher sets ±5 on the slider: 78 is now wrong, the 1–5 scale keeps ±1
    s = screening.screening_settings_update(study=slider_study, changes={"training_tolerances": {"meaning": 5}})
    tol = scales.criteria_tolerances(units, s.training_tolerances, points=s.training_tolerance)
    assert tol == {"meaning": 5.0, "grammar": 1.0, "topic": 0.0}
    assert not training.answer_correct(values=right, expected=exp, criteria=units, checked=[], tolerance=tol)
    for bad, message in (({"topic": 1}, "exact"), ({"meaning": 150}, "below 100"), ({"beauty": 1}, "unknown")):
        with pytest.raises(DesignInvalid) as exc:
            screening.screening_settings_update(study=slider_study, changes={"training_tolerances": bad})
        assert message in " ".join(exc.value.field_errors["training_tolerances"])


def test_the_design_page_offers_a_tolerance_per_ordered_criterion_in_its_units(slider_study, researcher, client):
    client.force_login(researcher)
    page = client.get(f"/studies/{slider_study.pk}/judging/design/").content.decode()
    assert "Tolerance for Meaning (0–100)" in page and "empty: ±10." in page
    assert "Tolerance for Grammar (1–5)" in page and "empty: ±1 point." in page
    assert "Tolerance for Topic" not in page
    r = client.post(
        f"/studies/{slider_study.pk}/judging/screening/",
        {
            "training_criteria": "",
            "training_tolerance": "1",
            "training_required": "0",
            "training_retries": "1",
            "attention_count": "0",
            "attention_policy": "warn",
            "attention_max_failures": "2",
            "qc_auto_pvalue": "0.01",
            "qc_auto_min_controls": "10",
            "tolerance_meaning": "15",
            "tolerance_grammar": "",
        },
    )
    assert r.status_code == 302
    assert screening.settings_for_study(study=slider_study).training_tolerances == {"meaning": 15.0}


def test_an_attention_check_on_a_slider_asks_a_value_the_slider_can_show(slider_study):
    screening.screening_settings_update(study=slider_study, changes={"attention_count": 6})
    assignment = assignment_for_judge(study=slider_study, judge=User.objects.get(username="ann"))
    settings = screening.settings_for_study(study=slider_study)
    screening.attention_plan(assignment=assignment, settings=settings)
    for check in assignment.attention_checks.all():
        unit = scales.scale_unit(next(c for c in (MEANING, GRAMMAR, TOPIC) if c["slug"] == check.criterion)["scale"])
        assert check.expected in unit.attention_values
