"""Metric cards: what a metric measures, which way is better, its range, what it
needs, where it comes from and what to watch out for.

One source for every place that describes a metric (the Metrics tab, ``manage.py
metrics``, the documentation site). A :class:`~metrics.core.base.Metric` subclass
sets ``card = MetricCard(...)`` as a class attribute.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MetricCard", "DIRECTIONS"]

#: ``higher``: a larger score is a better paraphrase; ``lower``: a smaller one is;
#: ``none``: the score describes a property (e.g. how much wording changed) and
#: neither end is "better" in itself.
DIRECTIONS = ("higher", "lower", "none")


@dataclass(frozen=True)
class MetricCard:
    """A metric's card (all fields are short plain-text sentences).

    measures:  what the number measures, in one sentence a researcher understands.
    direction: one of :data:`DIRECTIONS`.
    range:     the values it can take, e.g. ``"0–1"``, ``"0–100"``, ``"−∞–0 (log-prob per word)"``.
    needs:     inputs and resources, e.g. ``"original (R) and candidate (P)"``.
    reference: the paper (authors, year, venue) the definition follows.
    caveats:   known pitfalls (what it rewards that people do not, etc.).
    prepare:   when a resource must be prepared first, the step that prepares it
               (a page and form, or a command); empty when nothing is needed.
    """

    measures: str
    direction: str
    range: str
    needs: str
    reference: str
    caveats: str = ""
    prepare: str = ""

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}, not {self.direction!r}")
