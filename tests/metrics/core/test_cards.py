"""Metric cards: every registered metric declares one, and every page renders the same one."""

from __future__ import annotations

import pytest

from metrics.core.base.metric import Metric
from metrics.core.cards import DIRECTIONS, MetricCard, card_rows, cards_markdown
from metrics.core.registry import available_metrics


def test_every_registered_metric_has_a_complete_card():
    missing = [cls.slug for cls in available_metrics() if not isinstance(cls.card, MetricCard)]
    assert missing == []
    for cls in available_metrics():
        card = cls.card
        assert card.direction in DIRECTIONS
        for field in ("measures", "range", "needs", "reference"):
            assert getattr(card, field).strip(), f"{cls.slug}: empty {field}"


def test_the_base_class_has_no_card_so_a_new_metric_must_declare_one():
    assert Metric.card is None


@pytest.mark.parametrize("cls", available_metrics(), ids=lambda c: c.slug)
def test_a_card_that_picks_a_side_agrees_with_higher_is_better(cls):
    if cls.card.direction != "none":
        assert (cls.card.direction == "higher") == bool(cls.higher_is_better)


def test_metrics_with_a_resource_that_has_no_default_say_how_to_prepare_it():
    for cls in available_metrics():
        if any(spec.default is None for spec in cls.resources.values()):
            assert cls.card.prepare, cls.slug


def test_pem_is_prepared_with_the_train_pem_form_not_an_internal_function():
    from metrics.core.registry import get_metric

    prepare = get_metric("pem").card.prepare
    assert "Train PEM" in prepare and "pem_train" not in prepare


def test_card_rows_keep_the_label_order_and_spell_out_the_direction():
    card = MetricCard(measures="m", direction="lower", range="0–1", needs="n", reference="r")
    assert card_rows(card) == [
        ("Measures", "m"),
        ("Direction", "lower is better"),
        ("Range", "0–1"),
        ("Needs", "n"),
        ("Reference", "r"),
    ]


def test_the_cards_page_has_a_section_per_metric_with_every_field():
    page = cards_markdown(available_metrics())
    for cls in available_metrics():
        assert f"## `{cls.slug}` {{#{cls.slug}}}" in page
        for label, text in card_rows(cls.card):
            assert f"- **{label}:** {text}" in page


def test_a_metric_without_a_card_shows_as_a_gap_on_the_page():
    class Bare(Metric):
        slug = "bare"
        description = "a throw-away metric"

        def _segment_stats(self, originals, candidates, references):  # pragma: no cover
            raise NotImplementedError

        def scores_from_sums(self, sums):  # pragma: no cover
            raise NotImplementedError

    assert "*This metric has no card yet.*" in cards_markdown([Bare])
