"""Vectorised n-gram overlap counts for a batch of (hypothesis, reference) token lists.

BLEU (clipped counts), PEM's target-language F1 (clipped counts over one bag of
all orders) and PINC (n-gram *sets*) all need, per segment and order n,
overlap counts between the n-grams of two token lists. Counting with one
``Counter`` per sentence is Python-speed; here every n-gram of the whole batch
gets an exact integer id instead, and the counts come from sorting
(segment, n-gram) keys:

* tokens are factorised to ids (hash-based, exact: equal ids ⇔ equal strings);
* the n-gram starting at token i is the pair (id of the (n−1)-gram at i, id of
  token i + n − 1), packed into one int64 (< number of n-grams × vocabulary,
  far below 2^63) and densified with ``np.unique`` — exact, no hashing;
* ``np.unique`` of ``segment · G + gram`` over both sides gives each segment's
  distinct n-grams; ``bincount`` of the codes on each side gives their counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["NgramOverlap", "ngram_overlap", "ngram_overlap_ids"]


@dataclass(frozen=True)
class NgramOverlap:
    """Per-segment counts, each an int64 array of shape ``(n_segments, max_n)``; column n−1 is order n.

    * ``clipped[s, n−1]`` = Σ_g min(c_hyp(g), c_ref(g)) over n-grams g (BLEU's "correct");
    * ``hyp_total`` / ``ref_total`` = number of n-grams (max(0, len − n + 1));
    * ``hyp_distinct`` = |set of hypothesis n-grams|;
    * ``common_distinct`` = |set_hyp ∩ set_ref|.
    """

    clipped: np.ndarray
    hyp_total: np.ndarray
    ref_total: np.ndarray
    hyp_distinct: np.ndarray
    common_distinct: np.ndarray
    hyp_len: np.ndarray
    ref_len: np.ndarray


def _dense_ids(keys: np.ndarray) -> np.ndarray:
    """0-based ids of ``keys``, equal ids ⇔ equal keys (``pandas.factorize``, exact on int64)."""
    import pandas as pd

    return pd.factorize(keys, sort=False)[0].astype(np.int64, copy=False)


def ngram_overlap(
    hyp_tokens: Sequence[Sequence[str]], ref_tokens: Sequence[Sequence[str]], *, max_n: int = 4
) -> NgramOverlap:
    """Overlap counts of every segment's hypothesis and reference n-grams, n = 1..``max_n`` (module docstring)."""
    import pandas as pd

    n_seg = len(hyp_tokens)
    if len(ref_tokens) != n_seg:
        raise ValueError(f"{n_seg} hypotheses but {len(ref_tokens)} references")
    hyp_len = np.fromiter((len(t) for t in hyp_tokens), dtype=np.int64, count=n_seg)
    ref_len = np.fromiter((len(t) for t in ref_tokens), dtype=np.int64, count=n_seg)
    flat = [t for ts in hyp_tokens for t in ts] + [t for ts in ref_tokens for t in ts]
    ids = pd.factorize(pd.Series(flat, dtype=object), sort=False)[0].astype(np.int64) if flat else np.zeros(0, np.int64)
    return ngram_overlap_ids(ids, hyp_len, ref_len, max_n=max_n)


def ngram_overlap_ids(ids: np.ndarray, hyp_len: np.ndarray, ref_len: np.ndarray, *, max_n: int = 4) -> NgramOverlap:
    """:func:`ngram_overlap` of token ids: ``ids`` holds every hypothesis's tokens, then every reference's.

    Equal ids ⇔ equal tokens; ids are non-negative integers (any range: they are
    densified first). ``hyp_len``/``ref_len`` give each segment's token counts, so
    ``len(ids) == hyp_len.sum() + ref_len.sum()``. chrF passes Unicode code points
    (characters as tokens) without building a Python string per character.
    """
    import pandas as pd

    n_seg = len(hyp_len)
    hyp_len = np.asarray(hyp_len, dtype=np.int64)
    ref_len = np.asarray(ref_len, dtype=np.int64)
    orders = np.arange(1, max_n + 1)
    hyp_total = np.maximum(hyp_len[:, None] - orders[None, :] + 1, 0)
    ref_total = np.maximum(ref_len[:, None] - orders[None, :] + 1, 0)
    clipped = np.zeros((n_seg, max_n), dtype=np.int64)
    hyp_distinct = np.zeros((n_seg, max_n), dtype=np.int64)
    common = np.zeros((n_seg, max_n), dtype=np.int64)
    result = NgramOverlap(clipped, hyp_total, ref_total, hyp_distinct, common, hyp_len, ref_len)

    if len(ids) == 0:
        return result
    ids = np.asarray(ids, dtype=np.int64)
    if int(ids.max()) >= len(ids):  # sparse ids (code points): dense keeps gram · vocab small
        ids = _dense_ids(ids)
    n_h = int(hyp_len.sum())
    lens = np.concatenate([hyp_len, ref_len])
    seg = np.repeat(np.concatenate([np.arange(n_seg), np.arange(n_seg)]), lens)
    is_hyp = np.zeros(len(ids), dtype=bool)
    is_hyp[:n_h] = True
    starts = np.repeat(np.cumsum(lens) - lens, lens)
    remaining = np.repeat(lens, lens) - (np.arange(len(ids)) - starts)  # tokens from here to the end
    vocab = int(ids.max()) + 1
    gram = ids
    for n in range(1, max_n + 1):
        if n > 1:
            # Positions whose n-gram would run past the sentence end get token 0;
            # they are masked out below (remaining < n).
            last = np.zeros_like(ids)
            last[: len(ids) - n + 1] = ids[n - 1 :]
            gram = _dense_ids(gram * vocab + last)
        ok = remaining >= n
        if not ok.any():
            break
        g_max = int(gram.max()) + 1
        key = seg[ok] * g_max + gram[ok]
        hyp_side = is_hyp[ok]
        # One exact id per distinct (segment, n-gram); its counts on each side.
        codes, uniques = pd.factorize(key, sort=False)
        c_h = np.bincount(codes[hyp_side], minlength=len(uniques))
        c_r = np.bincount(codes[~hyp_side], minlength=len(uniques))
        owner = uniques // g_max
        in_h = c_h > 0
        hyp_distinct[:, n - 1] = np.bincount(owner[in_h], minlength=n_seg)
        both = in_h & (c_r > 0)
        common[:, n - 1] = np.bincount(owner[both], minlength=n_seg)
        clipped[:, n - 1] = np.bincount(owner[both], weights=np.minimum(c_h, c_r)[both], minlength=n_seg).astype(
            np.int64
        )
    return result
