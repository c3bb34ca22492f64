"""Link precision, recall, F1 and AER against a gold alignment (Och & Ney 2003)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from metrics.core.alignment.model import Alignment

from ._shared import alignments_paired, f1_of, plain, ratio

# =========================================================================== links


@dataclass(frozen=True)
class LinkCounts:
    """Sufficient statistics of the link scores for one pair or a corpus.

    ``n_test`` = |A|, ``n_sure`` = |S|, ``n_possible`` = |P| (P = S ∪ possible),
    ``test_sure`` = |A ∩ S|, ``test_possible`` = |A ∩ P|.
    """

    n_test: int = 0
    n_sure: int = 0
    n_possible: int = 0
    test_sure: int = 0
    test_possible: int = 0

    def __add__(self, other: LinkCounts) -> LinkCounts:
        return LinkCounts(*(a + b for a, b in zip(self._tuple(), other._tuple())))

    def _tuple(self) -> tuple[int, ...]:
        return (self.n_test, self.n_sure, self.n_possible, self.test_sure, self.test_possible)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class LinkScores:
    """Link precision/recall/F1/AER; NaN where a denominator is empty."""

    precision: float
    recall: float
    f1: float
    aer: float
    counts: LinkCounts
    n_pairs: int

    @classmethod
    def from_counts(cls, counts: LinkCounts, n_pairs: int) -> LinkScores:
        """precision = |A∩P|/|A|, recall = |A∩S|/|S|, AER = 1 − (|A∩S| + |A∩P|)/(|A| + |S|)."""
        p = ratio(counts.test_possible, counts.n_test)
        r = ratio(counts.test_sure, counts.n_sure)
        aer_den = counts.n_test + counts.n_sure
        aer = 1.0 - (counts.test_sure + counts.test_possible) / aer_den if aer_den else math.nan
        return cls(p, r, f1_of(p, r), aer, counts, n_pairs)

    def to_dict(self) -> dict:
        return plain(self)


def link_counts(gold: Alignment, test: Alignment) -> LinkCounts:
    """Per-pair counts for :func:`link_scores` (Och & Ney 2003, §5).

    S = ``gold.sure``, P = ``gold.sure | gold.possible``, A = every link of
    ``test`` (a system's possible links are still links it proposes).
    """
    s = gold.sure
    p = gold.links
    a = test.links
    return LinkCounts(len(a), len(s), len(p), len(a & s), len(a & p))


def link_scores(gold: Alignment | Sequence[Alignment], test: Alignment | Sequence[Alignment]) -> LinkScores:
    """Micro-averaged link precision, recall, F1 and AER of ``test`` against ``gold``.

    Och & Ney (2003, §5), with S the gold sure links, P = S ∪ gold possible links
    and A the test links, all summed over the corpus before dividing::

        precision = |A∩P| / |A|      recall = |A∩S| / |S|
        F1 = 2·precision·recall / (precision + recall)
        AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|)

    ``nltk.translate.metrics.alignment_error_rate(S, A, P)`` gives the same AER
    for one pair. Empty denominators give NaN. Pairs must be over the same tokens
    where both sides know them.
    """
    total = LinkCounts()
    pairs = alignments_paired(gold, test, "gold", "test")
    for g, t in pairs:
        total = total + link_counts(g, t)
    return LinkScores.from_counts(total, len(pairs))
