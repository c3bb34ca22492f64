"""An error span and one judge's ESA annotation of an item.

ESA (Error Span Annotation; Kocmi et al., WMT 2024): the judge marks the spans that are
wrong, each *minor* or *major*, then gives the item a 0–100 score. On paraphrases a span
lies in the **candidate** (meaning changed or added, not fluent) or in the **original**
(meaning the candidate leaves out); an omission may also be marked on the ``[missing]``
marker after the candidate, as Appraise's ESA page and Pearmut (issue #68) do, when it
cannot be pinned to words of the original.

Offsets are code points, end exclusive (:mod:`metrics.core.spans.offsets`). Appraise and
Pearmut store ``start_i``/``end_i`` with an *inclusive* end: ``end = end_i + 1``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["SEVERITIES", "SIDES", "EsaAnnotation", "ErrorSpan"]

#: ESA's two severities (Kocmi et al. 2024); MQM's "critical" folds into "major" there.
SEVERITIES: tuple[str, ...] = ("minor", "major")
#: Where a span lies.
SIDES: tuple[str, ...] = ("candidate", "original")


@dataclass(frozen=True)
class ErrorSpan:
    """One marked error: ``text[start:end]`` of ``side``, or the ``[missing]`` marker.

    A missing-marker span has ``missing=True``, ``side="candidate"`` and ``start = end = 0``.
    """

    side: str
    start: int
    end: int
    severity: str
    category: str | None = None
    missing: bool = False

    def __post_init__(self):
        if self.side not in SIDES:
            raise ValueError(f"side must be one of {', '.join(SIDES)}, not {self.side!r}")
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {', '.join(SEVERITIES)}, not {self.severity!r}")
        if self.missing:
            if self.side != "candidate" or self.start or self.end:
                raise ValueError("a [missing] span is on the candidate side with start = end = 0")
        elif not 0 <= self.start < self.end:
            raise ValueError(f"a span needs 0 <= start < end, got [{self.start}, {self.end})")

    @classmethod
    def missing_marker(cls, severity: str, category: str | None = None) -> ErrorSpan:
        """The ``[missing]`` marker span (an omission not pinned to words of the original)."""
        return cls("candidate", 0, 0, severity, category, missing=True)


@dataclass(frozen=True)
class EsaAnnotation:
    """One judge's ESA annotation of one item (an original and one system's candidate).

    ``score`` is the 0–100 ESA score (None when the study asks for spans only);
    ``proposed`` the spans shown pre-filled before the judge started (empty without
    pre-filling), ``spans`` what the judge kept, edited or added.
    """

    judge: str
    item: str
    original: str
    system: str
    spans: tuple[ErrorSpan, ...]
    score: float | None = None
    is_control: bool = False
    control_kind: str | None = None
    seconds: float | None = None
    proposed: tuple[ErrorSpan, ...] = field(default=())

    def count(self, severity: str, *, sides: Sequence[str] = SIDES) -> int:
        """Spans of ``severity`` on ``sides`` (the missing marker counts on the candidate side)."""
        return sum(1 for s in self.spans if s.severity == severity and s.side in sides)
