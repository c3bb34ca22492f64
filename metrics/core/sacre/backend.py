"""A sacrebleu metric object behind the two calls paraeval needs, and its vectorised scores.

:class:`SacreBackend` extracts per-segment statistics (BLEU through
:func:`~metrics.core.sacre.bleu_stats.bleu_ngram_stats`, chrF through
:func:`~metrics.core.sacre.chrf_stats.chrf_ngram_stats`, TER through
:func:`~metrics.core.sacre.ter_stats.ter_stats`; each equal to sacrebleu's own
``_extract_corpus_statistics``) and scores many rows of
summed statistics at once with the functions below, which repeat sacrebleu's
scalar formulas in its own precision, so every score equals sacrebleu's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sacrebleu.metrics.bleu import BLEU as _SacreBLEU
from sacrebleu.metrics.chrf import CHRF as _SacreCHRF
from sacrebleu.metrics.ter import TER as _SacreTER

from .bleu_stats import bleu_ngram_stats
from .chrf_stats import chrf_ngram_stats
from .ter_stats import ter_stats

__all__ = ["SacreBackend"]


class SacreBackend:
    """A sacrebleu metric object with the two calls paraeval needs."""

    #: Bound of the reference token cache (texts); cleared when passed.
    REF_CACHE_TEXTS = 200_000

    def __init__(self, obj: Any) -> None:
        self.obj = obj
        # paraeval always scores against exactly one text per segment; sacrebleu
        # learns this only when it first sees data, and needs it for signatures.
        obj.num_refs = 1
        #: BLEU: tokens of the references (originals) seen, shared by later
        #: calls — every system is scored against the same originals.
        self._ref_tokens: dict[str, list[str]] = {}

    def extract_corpus_statistics(self, hyps: list[str], refs: list[str]) -> np.ndarray:
        """Per-segment statistics, one reference per segment (sacrebleu's, computed faster; identical)."""
        if isinstance(self.obj, _SacreBLEU):
            if len(self._ref_tokens) > self.REF_CACHE_TEXTS:
                self._ref_tokens.clear()
            return bleu_ngram_stats(self.obj, hyps, refs, ref_cache=self._ref_tokens)
        if isinstance(self.obj, _SacreCHRF):
            return chrf_ngram_stats(self.obj, hyps, refs)
        if isinstance(self.obj, _SacreTER):
            return ter_stats(self.obj, hyps, refs)
        return np.asarray(self.obj._extract_corpus_statistics(hyps, [refs]), dtype=np.float64)

    def score_of(self, row: Any) -> float:
        # Slices of a list are copies: add-k smoothing mutates its inputs.
        return float(self.obj._compute_score_from_stats(list(row)).score)

    def score_many(self, sums: np.ndarray) -> np.ndarray:
        """``score_of`` of every row of ``sums``, vectorised, bit for bit.

        ``sums`` is float32 (sacrebleu's bootstrap sums its statistics in float32
        and computes the score from those numpy scalars), int64 (Python ints, as
        ``corpus_score`` and the approximate randomization test see them) or
        float64. Each formula below repeats sacrebleu's scalar code step by step
        in that precision — NumPy 2 promotes a Python float against float32 to
        float32 for arrays exactly as for scalars — and takes logarithms and
        exponentials from ``math`` (the same libm sacrebleu calls), so every
        score is the one ``score_of`` returns (tested on random rows of every
        dtype and smoothing). Why not just loop: 1,000 resamples × many systems
        × 11 metrics cost ~0.1 ms each in Python, more than the resampling.
        """
        sums = np.asarray(sums)
        if sums.ndim != 2:
            raise ValueError("score_many needs a 2-d array of summed statistics")
        if sums.shape[0] == 0:
            return np.zeros(0)
        obj = self.obj
        if isinstance(obj, _SacreBLEU):
            return _bleu_many(obj, sums)
        if isinstance(obj, _SacreCHRF) and not obj.eps_smoothing:
            return _chrf_many(obj, sums)
        if isinstance(obj, _SacreTER):
            return _ter_many(sums)
        rows = sums.tolist() if sums.dtype != np.float32 else list(sums)
        return np.array([self.score_of(r) for r in rows], dtype=np.float64)

    def signature(self) -> str:
        return str(self.obj.get_signature().format())


# --------------------------------------------------------------------------- vectorised scores
# sacrebleu computes a score from one row of summed statistics with Python
# scalars; these functions do the same for many rows at once (see
# ``SacreBackend.score_many``). ``ft`` is the precision sacrebleu computes in:
# float32 for float32 sums (its bootstrap), float64 for ints and floats.


def _work_dtype(sums: np.ndarray):
    return np.float32 if sums.dtype == np.float32 else np.float64


def _libm(fn, x: np.ndarray) -> np.ndarray:
    """``fn`` (``math.log``/``math.exp``) of every element, in float64: the C library's
    results, which NumPy's own SIMD loops do not promise on every CPU."""
    flat = np.asarray(x, dtype=np.float64).ravel()
    return np.fromiter(map(fn, flat.tolist()), dtype=np.float64, count=flat.size).reshape(np.shape(x))


def _bleu_many(bleu: _SacreBLEU, sums: np.ndarray) -> np.ndarray:
    """``BLEU.compute_bleu`` (Papineni et al. 2002; sacrebleu's smoothing, Chen & Cherry 2014) per row."""
    import math

    ft = _work_dtype(sums)
    order = bleu.max_ngram_order
    method = bleu.smooth_method
    value = bleu.smooth_value if bleu.smooth_value is not None else _SacreBLEU.SMOOTH_DEFAULTS[method]
    m = sums.shape[0]
    # int(stats[0]), int(stats[1]): the counts are whole numbers in every dtype.
    sys_len = np.trunc(sums[:, 0].astype(np.float64))
    ref_len = np.trunc(sums[:, 1].astype(np.float64))
    correct = sums[:, 2 : 2 + order].astype(ft)
    total = sums[:, 2 + order : 2 + 2 * order].astype(ft)
    with np.errstate(divide="ignore", invalid="ignore"):
        short = sys_len < ref_len
        bp = np.ones(m)
        ratio = np.where(short & (sys_len > 0), 1 - ref_len / np.where(sys_len > 0, sys_len, 1), 0.0)
        bp[short] = np.where(sys_len[short] > 0, _libm(math.exp, ratio[short]), 0.0)
        no_match = ~(correct != 0).any(axis=1)  # `if not any(correct)`, before add-k
        precisions = np.zeros((m, order))
        alive = np.ones(m, dtype=bool)  # the loop has not hit `break` yet
        eff_order = np.full(m, order)
        smooth = np.ones(m)  # smooth_mteval: a power of two, exact in float32
        for n in range(order):
            c, t = correct[:, n], total[:, n]
            if method == "add-k" and n > 0:
                c = c + ft(value)
                t = t + ft(value)
            alive &= t != 0
            if bleu.effective_order:
                eff_order = np.where(alive, n + 1, eff_order)
            zero = c == 0
            p = ft(100.0) * c / t
            if method == "exp":
                smooth = np.where(alive & zero, smooth * 2, smooth)
                p = np.where(zero, ft(100.0) / (smooth.astype(ft) * t), p)
            elif method == "floor":
                assert value is not None  # sacrebleu's floor default is 0.1
                p = np.where(zero, ft(100.0 * value) / t, p)
            else:
                p = np.where(zero, ft(0.0), p)
            precisions[:, n] = np.where(alive, p.astype(np.float64), 0.0)
        logs = np.full((m, order), -9999999999.0)  # my_log(0.0)
        pos = precisions != 0.0
        logs[pos] = _libm(math.log, precisions[pos])
        acc = np.zeros(m)
        for n in range(order):  # Python's left-to-right sum(...)
            acc = np.where(n < eff_order, acc + logs[:, n], acc)
        score = bp * _libm(math.exp, acc / eff_order)
    return np.where(no_match, 0.0, score)


def _chrf_many(chrf: _SacreCHRF, sums: np.ndarray) -> np.ndarray:
    """``CHRF._compute_f_score`` (Popović 2015, without eps smoothing) per row."""
    ft = _work_dtype(sums)
    x = sums.astype(ft)
    m = x.shape[0]
    factor = ft(chrf.beta**2)
    avg_p = np.zeros(m, dtype=ft)
    avg_r = np.zeros(m, dtype=ft)
    eff = np.zeros(m, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(chrf.order):
            n_hyp, n_ref, n_match = x[:, 3 * i], x[:, 3 * i + 1], x[:, 3 * i + 2]
            ok = (n_hyp > 0) & (n_ref > 0)
            # Adding 0 leaves a float exact, so masked sums follow sacrebleu's `+=` order.
            avg_p = avg_p + np.where(ok, n_match / n_hyp, ft(0.0))
            avg_r = avg_r + np.where(ok, n_match / n_ref, ft(0.0))
            eff += ok
        some = eff > 0
        avg_p = np.where(some, avg_p / np.where(some, eff, 1).astype(ft), ft(0.0))
        avg_r = np.where(some, avg_r / np.where(some, eff, 1).astype(ft), ft(0.0))
        nonzero = (avg_p + avg_r) != 0
        score = (ft(1) + factor) * avg_p * avg_r
        score = score / (factor * avg_p + avg_r)
        out = (ft(100) * score).astype(np.float64)
    return np.where(nonzero, out, 0.0)


def _ter_many(sums: np.ndarray) -> np.ndarray:
    """``TER._compute_score_from_stats`` (Snover et al. 2006) per row: 100 · edits / ref length."""
    ft = _work_dtype(sums)
    edits, ref = sums[:, 0].astype(ft), sums[:, 1].astype(ft)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = (ft(100) * (edits / ref)).astype(np.float64)
    return np.where(ref > 0, rate, np.where(edits > 0, 100.0, 0.0))
