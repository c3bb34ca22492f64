"""PINC: Paraphrase In N-gram Changes (Chen & Dolan 2011, §3.2; DESIGN.md §4).

PINC(R, P) = (1/N') Σ_{n ∈ orders} [1 − |ngrams_n(R) ∩ ngrams_n(P)| / |ngrams_n(P)|]

over n = 1..N (N = ``max_n``, 4 by default), where ngrams_n are *sets* of
n-grams and the orders where P has no n-gram are skipped (N' is the number of
orders kept). Tokens are paraeval's :func:`~metrics.core.text.tokenize` output
(punctuation tokens included), lower-cased by default. PINC measures lexical
dissimilarity: 1 when P shares no n-gram with R, 0 when every n-gram of P
occurs in R.

Convention for a candidate with no tokens (PINC undefined: every order is
skipped): 0 — an empty candidate introduces no new n-grams.

The corpus score is the mean of sentence scores (Chen & Dolan average over
sentences), so statistics are ``[pinc, 1]`` (:class:`~metrics.core.base.MeanMetric`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from metrics.core.base.metric import MeanMetric
from metrics.core.base.params import Param
from metrics.core.cards import MetricCard
from metrics.core.ngram_counts import ngram_overlap
from metrics.core.registry import register
from metrics.core.text import tokenize

__all__ = ["ngram_set", "pinc_score", "pinc_from_counts", "PincMetric"]


def ngram_set(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    """The set of n-grams (token tuples) of ``tokens``."""
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def pinc_score(original: Sequence[str], candidate: Sequence[str], *, max_n: int = 4) -> float:
    """PINC of token lists (module docstring; Chen & Dolan 2011, §3.2).

    >>> pinc_score("the cat sat".split(), "the cat ran".split(), max_n=2)
    0.4166666666666667
    """
    total, kept = 0.0, 0
    for n in range(1, max_n + 1):
        cand = ngram_set(candidate, n)
        if not cand:
            break  # no n-grams of this order means none of any higher order
        overlap = len(cand & ngram_set(original, n))
        total += 1.0 - overlap / len(cand)
        kept += 1
    return total / kept if kept else 0.0


def pinc_from_counts(distinct: np.ndarray, common: np.ndarray) -> np.ndarray:
    """PINC per row from ``(n_segments, N)`` counts |set_n(P)| and |set_n(R) ∩ set_n(P)|.

    Orders where P has no n-gram are skipped; a row with none scores 0.
    """
    distinct = np.asarray(distinct, dtype=np.float64)
    kept = distinct > 0
    terms = np.where(kept, 1.0 - np.asarray(common, dtype=np.float64) / np.where(kept, distinct, 1.0), 0.0)
    n_kept = kept.sum(axis=1)
    return np.where(n_kept > 0, terms.sum(axis=1) / np.maximum(n_kept, 1), 0.0)


@register
class PincMetric(MeanMetric):
    """Registered ``pinc`` (see the module docstring)."""

    slug = "pinc"
    description = "PINC (Chen & Dolan 2011): share of the candidate's n-grams (n ≤ 4) not in the original."
    params = {
        "max_n": Param("max_n", int, 4, "largest n-gram order N", minimum=1, maximum=9),
        "lowercase": Param("lowercase", bool, True, "lower-case tokens before matching"),
    }
    version = "1"
    card = MetricCard(
        measures="How much the wording changed: the share of the candidate's n-grams (n = 1–4) that are not in the "
        "original, averaged over n.",
        direction="none",
        range="0–1 (0: every n-gram copied; 1: no n-gram shared)",
        needs="original (R) and candidate (P)",
        reference="Chen & Dolan 2011, Collecting Highly Parallel Data for Paraphrase Evaluation (ACL), §3.2",
        caveats="Says nothing about meaning: unrelated text scores 1. Read it next to an adequacy measure "
        "(pivot-f1, BLEU against a reference, human adequacy).",
    )

    def _sentence_values(self, originals, candidates, references):
        low, max_n = self.param_values["lowercase"], self.param_values["max_n"]
        cache: dict[str, list[str]] = {}

        def toks(s: str) -> list[str]:
            if s not in cache:
                cache[s] = tokenize(s, lowercase=low)
            return cache[s]

        # Vectorised over the batch: per segment and order, |set_n(P)| and
        # |set_n(R) ∩ set_n(P)| from ngram_overlap (tested equal to pinc_score).
        ov = ngram_overlap([toks(p) for p in candidates], [toks(r) for r in originals], max_n=max_n)
        return pinc_from_counts(ov.hyp_distinct, ov.common_distinct)
