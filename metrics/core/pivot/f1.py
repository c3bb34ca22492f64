"""Pivot F1 from two bags (PEM §4.3): the additive statistics, precision/recall/F1, and :func:`pivot_f1`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from metrics.core.phrase_table import PhraseTable
from metrics.core.pivot.bag import pivot_bag
from metrics.core.target_f1 import overlap_stats


@dataclass(frozen=True)
class F1Result:
    """Bag-of-n-grams agreement between original R and paraphrase P (PEM §4.3).

    ``overlap`` = Σ_g min(W_R(g), W_P(g)); ``weight_p`` = Σ_g W_P(g);
    ``weight_r`` = Σ_g W_R(g).
    """

    precision: float
    recall: float
    f1: float
    overlap: float
    weight_p: float
    weight_r: float

    def stats(self) -> np.ndarray:
        """The additive statistics ``[overlap, weight_p, weight_r]``."""
        return np.array([self.overlap, self.weight_p, self.weight_r])


def bag_overlap_stats(bag_r: Mapping, bag_p: Mapping) -> np.ndarray:
    """Additive F1 statistics of two weighted bags: ``[Σ_g min(W_R, W_P), Σ W_P, Σ W_R]``.

    The same statistics as target-language F1 (:func:`metrics.core.target_f1.overlap_stats`),
    with real-valued weights in place of counts.
    """
    return np.array(overlap_stats(bag_r, bag_p), dtype=np.float64)


def f1_from_stats(stats: Sequence[float] | np.ndarray) -> F1Result:
    """Precision Σmin/ΣW_P, recall Σmin/ΣW_R and their harmonic mean (0 when a bag is empty)."""
    overlap, w_p, w_r = (float(x) for x in stats)
    precision = overlap / w_p if w_p > 0 else 0.0
    recall = overlap / w_r if w_r > 0 else 0.0
    f1 = 2 * overlap / (w_p + w_r) if overlap > 0 else 0.0
    return F1Result(precision, recall, f1, overlap, w_p, w_r)


def pivot_f1(
    original: str,
    paraphrase: str,
    table: PhraseTable,
    *,
    stem: bool = True,
    edge_threshold: float = 0.1,
    ngram_threshold: float = 0.01,
    max_n: int = 4,
) -> F1Result:
    """Pivot-language F1 between original R and paraphrase P (PEM §4.3).

    precision = Σ_g min(W_R(g), W_P(g)) / Σ_g W_P(g),
    recall = Σ_g min(W_R(g), W_P(g)) / Σ_g W_R(g), F1 their harmonic mean, over
    the pivot n-gram bags of :func:`pivot_bag`. Symmetric in R and P.
    """

    def bag(sentence: str) -> dict[tuple[str, ...], float]:
        return pivot_bag(
            sentence, table, stem=stem, edge_threshold=edge_threshold, ngram_threshold=ngram_threshold, max_n=max_n
        )

    return f1_from_stats(bag_overlap_stats(bag(original), bag(paraphrase)))
