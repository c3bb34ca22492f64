"""Ratios, F1 and corpus/paired input checks shared by every alignment score (private)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict

from metrics.core.alignment.model import Alignment
from metrics.core.text import TOKENIZER_VERSION

#: Bump when a definition below changes; part of every ParaMetric signature.
SCORING_VERSION = "1"


def ratio(num: float, den: float) -> float:
    # An empty denominator leaves the score undefined: NaN, never a made-up 0 or 1.
    return num / den if den else math.nan


def f1_of(p: float, r: float) -> float:
    if math.isnan(p) or math.isnan(r):
        return math.nan
    return 2 * p * r / (p + r) if p + r else 0.0


def plain(obj) -> dict:
    """``asdict`` with NaN turned into ``None`` so that the result is valid JSON."""

    def fix(v):
        if isinstance(v, float) and math.isnan(v):
            return None
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [fix(x) for x in v]
        return v

    return fix(asdict(obj))


def _as_corpus(x: Alignment | Sequence[Alignment]) -> list[Alignment]:
    return [x] if isinstance(x, Alignment) else list(x)


def alignments_paired(gold, test, what_gold: str, what_test: str) -> list[tuple[Alignment, Alignment]]:
    gold, test = _as_corpus(gold), _as_corpus(test)
    if len(gold) != len(test):
        raise ValueError(f"{len(gold)} {what_gold} alignments but {len(test)} {what_test} alignments")
    for k, (g, t) in enumerate(zip(gold, test)):
        if g.has_tokens and t.has_tokens and (g.tokens1, g.tokens2) != (t.tokens1, t.tokens2):
            raise ValueError(f"pair {k}: the {what_gold} and {what_test} alignments are over different tokens")
    return list(zip(gold, test))


def need_tokens(a: Alignment, k: int, what: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(tokens1, tokens2)`` of ``a``; ValueError when it has none."""
    if a.tokens1 is None or a.tokens2 is None:  # both or neither: Alignment checks
        raise ValueError(f"pair {k}: the {what} alignment has no tokens (phrase pairs need the sentences)")
    return a.tokens1, a.tokens2


def score_signature(name: str, max_len: int, use_possible: bool, extra: str = "") -> str:
    return (
        f"{name}|max_len:{max_len}|links:{'sure+possible' if use_possible else 'sure'}"
        f"{extra}|tok:{TOKENIZER_VERSION}|v:{SCORING_VERSION}"
    )
