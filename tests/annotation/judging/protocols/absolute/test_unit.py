"""The absolute protocol's unit (annotation/judging/protocols/absolute/unit.py): its training
and attention answers on each criterion's own scale."""

import random
from types import SimpleNamespace

import pytest

from annotation.judging import scales
from annotation.judging.defaults import default_criteria
from annotation.judging.errors import JudgingError
from annotation.judging.models import JudgingDesign
from annotation.judging.protocols.absolute.unit import ABSOLUTE

SLIDER = {"slug": "meaning", "name": "Meaning", "scale": {"type": "slider", "min": 0, "max": 100}}
POINTS = {
    "slug": "fluency",
    "name": "Fluency",
    "scale": {"type": "points", "min": 1, "max": 5, "labels": list("abcde")},
}


def design(*criteria):
    return JudgingDesign(criteria=list(criteria))


def test_without_a_design_the_questions_are_the_default_criteria():
    assert ABSOLUTE.training_slugs(design=None) == [c["slug"] for c in default_criteria()]


def test_an_attention_check_asks_for_a_value_the_criterions_scale_offers():
    d = design(SLIDER, POINTS)
    rng = random.Random(7)
    for _ in range(50):
        slug, expected = ABSOLUTE.attention_draw(design=d, rng=rng)
        scale = SLIDER["scale"] if slug == "meaning" else POINTS["scale"]
        assert expected in scales.scale_unit(scale).attention_values


@pytest.mark.parametrize(
    ("criterion", "expected", "value", "passed"),
    [
        ("meaning", 75, 71, True),  # a slider allows SLIDER_ATTENTION_TOLERANCE (5) either way
        ("meaning", 75, 69, False),
        ("meaning", 75, "80", True),  # a form posts text
        ("fluency", 4, 4, True),  # points: exact
        ("fluency", 4, 3, False),
    ],
)
def test_an_attention_answer_is_scored_on_its_criterions_scale(criterion, expected, value, passed):
    check = SimpleNamespace(criterion=criterion, expected=expected)
    answer, ok = ABSOLUTE.attention_score(design=design(SLIDER, POINTS), check=check, value=value)
    assert ok is passed and float(answer) == float(value)


def test_an_attention_answer_off_the_scale_is_refused_as_an_items_would_be():
    check = SimpleNamespace(criterion="fluency", expected=4)
    with pytest.raises(JudgingError) as caught:
        ABSOLUTE.attention_score(design=design(SLIDER, POINTS), check=check, value=9)
    assert "value" in caught.value.field_errors
