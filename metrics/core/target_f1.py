"""PEM's target-language F1 (Liu, Dahlmeier & Ng 2010, §4.4; DESIGN.md §4).

The dissimilarity feature of PEM: the F1 agreement of the bags of English
n-grams of R and P, "analogous to the definition of the pivot language F1"
(§4.3). Each sentence becomes ONE bag holding every n-gram of order 1..N
(N = ``max_n`` = 4) with its count c(g) — orders are not averaged separately:
a 4-token sentence contributes 4 + 3 + 2 + 1 = 10 n-grams, which is the
denominator of the paper's worked example. Then

    overlap   = Σ_g min(c_R(g), c_P(g))   (clipped counts)
    precision = overlap / Σ_g c_P(g)
    recall    = overlap / Σ_g c_R(g)
    F1        = 2·precision·recall / (precision + recall) = 2·overlap / (Σ c_P + Σ c_R)

Tokens: :func:`~metrics.core.text.tokenize` (punctuation kept, as the paper's
example counts "comma" and "period"), Porter-stemmed (PEM §5: "We stem all
English words ... with the Porter stemmer"; ``stem=false`` lower-cases only).
F1 is 0 when the overlap is 0 (including two empty sentences).

Statistics per segment: ``[overlap, Σ c_P, Σ c_R]`` — the same layout as
``pivot-f1`` — so the corpus score is F1 of the summed counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from metrics.core.base.metric import Metric
from metrics.core.base.params import Param
from metrics.core.cards import MetricCard
from metrics.core.ngram_counts import ngram_overlap
from metrics.core.registry import register
from metrics.core.text import stem as porter_stem
from metrics.core.text import tokenize

__all__ = ["english_tokens", "ngram_counts", "overlap_stats", "f1_from_sums", "target_f1", "TargetF1"]


def english_tokens(sentence: str, *, stem: bool = True) -> list[str]:
    """Tokens of ``sentence``: Porter-stemmed (lower-case) or just lower-cased."""
    toks = tokenize(sentence)
    return [porter_stem(t) for t in toks] if stem else [t.lower() for t in toks]


def ngram_counts(tokens: Sequence[str], *, max_n: int = 4) -> Counter:
    """One bag of every n-gram of ``tokens`` with n ≤ ``max_n``: ``Counter[tuple] -> count``."""
    bag: Counter = Counter()
    t = tuple(tokens)
    for n in range(1, max_n + 1):
        for i in range(len(t) - n + 1):
            bag[t[i : i + n]] += 1
    return bag


def overlap_stats(bag_r: Mapping[Any, float], bag_p: Mapping[Any, float]) -> tuple[float, float, float]:
    """``(Σ_g min(c_R, c_P), Σ c_P, Σ c_R)`` of two n-gram bags."""
    small, large = (bag_p, bag_r) if len(bag_p) < len(bag_r) else (bag_r, bag_p)
    overlap = sum(min(c, large[g]) for g, c in small.items() if g in large)
    return overlap, sum(bag_p.values()), sum(bag_r.values())


def f1_from_sums(sums: np.ndarray) -> np.ndarray:
    """F1 = 2·overlap / (Σ c_P + Σ c_R) of rows ``[overlap, Σ c_P, Σ c_R]`` (0 where overlap is 0)."""
    sums = np.asarray(sums, dtype=np.float64)
    denom = sums[:, 1] + sums[:, 2]
    pos = sums[:, 0] > 0
    out = np.zeros(len(sums))
    out[pos] = 2 * sums[pos, 0] / denom[pos]
    return out


def target_f1(original: str, candidate: str, *, stem: bool = True, max_n: int = 4) -> float:
    """Target-language F1 of two sentences (module docstring; PEM §4.4).

    >>> target_f1("Hello , Querrien .", "Morning , sir .", stem=False)
    0.2
    """
    stats = overlap_stats(
        ngram_counts(english_tokens(original, stem=stem), max_n=max_n),
        ngram_counts(english_tokens(candidate, stem=stem), max_n=max_n),
    )
    return float(f1_from_sums(np.array([stats]))[0])


@register
class TargetF1(Metric):
    """Registered ``target-f1`` (see the module docstring). Higher means more similar wording."""

    slug = "target-f1"
    description = "PEM target-language F1: clipped agreement of the bags of English n-grams (n ≤ 4), stemmed."
    params = {
        "stem": Param("stem", bool, True, "Porter-stem tokens (PEM §5)"),
        "max_n": Param("max_n", int, 4, "largest n-gram order", minimum=1, maximum=9),
    }
    version = "1"
    card = MetricCard(
        measures="How many of the original's words and phrases the candidate reuses: F1 of clipped English n-gram "
        "counts (n = 1–4, Porter-stemmed).",
        direction="none",
        range="0–1 (1: the same words)",
        needs="original (R) and candidate (P)",
        reference="Liu, Dahlmeier & Ng 2010, PEM: A Paraphrase Evaluation Metric Exploiting Parallel Texts (EMNLP), §4.4",
        caveats="PEM's lexical-dissimilarity feature: a good paraphrase has a low value, but so does unrelated text.",
    )
    stat_names = ("overlap", "count_candidate", "count_original")

    def _segment_stats(self, originals, candidates, references):
        stem, max_n = self.param_values["stem"], self.param_values["max_n"]
        cache: dict[str, list[str]] = {}

        def toks(s: str) -> list[str]:
            if s not in cache:
                cache[s] = english_tokens(s, stem=stem)
            return cache[s]

        # Vectorised: the clipped counts of all orders summed are exactly
        # Σ_g min(c_R, c_P) over the one bag (tested equal to overlap_stats).
        ov = ngram_overlap([toks(p) for p in candidates], [toks(r) for r in originals], max_n=max_n)
        return np.column_stack([ov.clipped.sum(axis=1), ov.hyp_total.sum(axis=1), ov.ref_total.sum(axis=1)]).astype(
            np.float64
        )

    def scores_from_sums(self, sums: np.ndarray) -> np.ndarray:
        """F1 of summed counts (:func:`f1_from_sums`)."""
        return f1_from_sums(sums)
