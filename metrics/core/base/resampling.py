"""Seeded bootstrap resamples and the summed statistics of many resamples at once (one matrix product)."""

from __future__ import annotations

import sys
from functools import lru_cache

import numpy as np

from .params import DEFAULT_SEED

# --------------------------------------------------------------------------- bootstrap


def resample_indices(n: int, n_resamples: int, *, seed: int | None = DEFAULT_SEED) -> np.ndarray:
    """Bootstrap indices, shape ``(n_resamples, n)``, drawn exactly as sacrebleu draws them.

    sacrebleu's ``_paired_bs_test`` uses ``np.random.default_rng(seed).choice(
    n, size=(n_resamples, n), replace=True)``; the same call here gives the same
    resamples for the same seed.
    """
    if n < 1 or n_resamples < 1:
        raise ValueError("need at least one segment and one resample")
    rng = np.random.default_rng(seed)
    return rng.choice(n, size=(n_resamples, n), replace=True)


class SacreChoice:
    """``default_rng(seed).choice(n, size, replace=True)``'s stream, drawn faster.

    NumPy draws each index with Lemire's bounded method on 32-bit words
    (``buffered_bounded_lemire_uint32``): PCG64 gives each 64-bit output as its
    low then its high half; ``m = u · n``; a word is rejected (and the next one
    taken) when ``m mod 2³² < 2³² mod n``; the index is ``m >> 32``. Vectorised
    here over ``bit_generator.random_raw`` words (a little-endian ``uint32``
    view is exactly low-then-high), rejections filtered out, surplus indices
    kept for the next call — the same indices in the same order as ``choice``
    (tested against it, including ``n`` with frequent rejections). For n ≥ 2³¹
    or a big-endian machine it simply calls ``choice``.
    """

    def __init__(self, n: int, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)
        self.n = n
        self.fast = 1 < n < 2**31 and sys.byteorder == "little"
        self.pending = np.zeros(0, dtype=np.int64)

    def take(self, count: int) -> np.ndarray:
        """The next ``count`` indices of the stream (int64, flat)."""
        if not self.fast:
            return self.rng.choice(self.n, size=count, replace=True)
        parts, have = [self.pending], self.pending.size
        n64, threshold, low = np.uint64(self.n), np.uint64(2**32 % self.n), np.uint64(0xFFFFFFFF)
        while have < count:
            u = self.rng.bit_generator.random_raw((count - have + 1) // 2 + 8).view(np.uint32).astype(np.uint64)
            u *= n64
            rejected = (u & low) < threshold
            if rejected.any():
                u = u[~rejected]
            u >>= np.uint64(32)
            parts.append(u.view(np.int64))
            have += u.size
        drawn = np.concatenate(parts) if len(parts) > 1 else parts[0]
        self.pending = drawn[count:]
        return drawn[:count]


def iter_resample_indices(n: int, n_resamples: int, *, seed: int | None = DEFAULT_SEED, max_cells: int = 4_000_000):
    """:func:`resample_indices` in row blocks of at most ``max_cells`` indices.

    The blocks stacked are exactly the full matrix (tested) — without holding
    ``n_resamples × n`` integers at once (800 MB for 1,000 × 100,000); drawn
    by :class:`SacreChoice`.
    """
    if n < 1 or n_resamples < 1:
        raise ValueError("need at least one segment and one resample")
    draw = SacreChoice(n, seed)
    rows = max(1, max_cells // n)
    done = 0
    while done < n_resamples:
        c = min(rows, n_resamples - done)
        yield draw.take(c * n).reshape(c, n)
        done += c


def counts_from_indices(indices: np.ndarray, n: int, dtype=np.float64) -> np.ndarray:
    """How often each of ``n`` segments occurs in each row of ``indices``: ``(m, n)``.

    One ``bincount`` over the whole block (each row offset by ``r · n``); the
    resampled sums of any statistics matrix are then one matrix product, so a
    block of resamples is shared by every system and metric scored on it.
    """
    m = indices.shape[0]
    offsets = (np.arange(m, dtype=np.int64) * n)[:, None]
    return np.bincount((indices + offsets).ravel(), minlength=m * n).reshape(m, n).astype(dtype)


def exact_in_float32(stats: np.ndarray) -> bool:
    """Whether every resampled sum of ``stats`` is computed exactly in float32.

    True for non-negative whole-number statistics (counts: BLEU, chrF, TER edits)
    whose largest possible resampled sum, n · max, is below 2**24: every partial
    sum of a float32 product is then an integer that float32 holds exactly, in
    any order. Halves the memory traffic of the count matrix and the product.
    """
    if stats.size == 0:
        return True
    top = float(stats.max())
    return float(stats.min()) >= 0 and top * stats.shape[0] < 2**24 and bool(np.all(stats == np.floor(stats)))


@lru_cache(maxsize=1)
def _blas_controller():
    # Finding the BLAS libraries reads the process's maps (~40 ms): do it once.
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_blas_thread():
    """Context: one BLAS thread. On a shared 2-core box OpenBLAS's threads spin and
    cost more CPU than they save (see benchmarks/RESULTS.md, report at scale)."""
    return _blas_controller().limit(limits=1, user_api="blas")


def resampled_sums(indices: np.ndarray, stats: np.ndarray, exact32: bool) -> np.ndarray:
    """``W @ stats`` for the count matrix ``W`` of ``indices``, in float64 (exact as said)."""
    dtype = np.float32 if exact32 else np.float64
    with one_blas_thread():
        return (counts_from_indices(indices, stats.shape[0], dtype) @ stats.astype(dtype, copy=False)).astype(
            np.float64
        )


def resampled_sum_matrix(n: int, n_resamples: int, stats: np.ndarray, seed: int | None) -> np.ndarray:
    """``W @ stats`` for sacrebleu's resamples (``W``: resample × segment counts), ``(R, k)`` float64.

    Fused per block of ≈ 80,000 indices (a few rows): draw the block
    (:class:`SacreChoice`), count it with one ``bincount`` (each row offset by
    ``r · n``), multiply — so the counts stay in the CPU cache instead of
    streaming an ``R × n`` matrix through memory. float32 when exact
    (:func:`exact_in_float32`), as sacrebleu sums its statistics.
    """
    exact32 = exact_in_float32(stats)
    dtype = np.float32 if exact32 else np.float64
    mat = stats.astype(dtype, copy=False)
    out = np.empty((n_resamples, stats.shape[1]), dtype=dtype)
    draw = SacreChoice(n, seed)
    rows = max(1, 80_000 // n)
    offsets = np.repeat(np.arange(rows, dtype=np.int64) * n, n)
    with one_blas_thread():
        for start in range(0, n_resamples, rows):
            c = min(rows, n_resamples - start)
            idx = draw.take(c * n)
            idx = idx + offsets[: c * n]
            counts = np.bincount(idx, minlength=c * n).reshape(c, n).astype(dtype)
            np.matmul(counts, mat, out=out[start : start + c])
    return out.astype(np.float64)
