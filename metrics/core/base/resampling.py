"""Seeded bootstrap resamples and the summed statistics of many resamples at once (one matrix product)."""

from __future__ import annotations

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


def iter_resample_indices(
    n: int, n_resamples: int, *, seed: int | None = DEFAULT_SEED, max_cells: int = 4_000_000
):
    """:func:`resample_indices` in row blocks of at most ``max_cells`` indices.

    Successive ``Generator.choice`` calls continue one stream, so the blocks
    stacked are exactly the full matrix (tested) — without holding
    ``n_resamples × n`` integers at once (800 MB for 1,000 × 100,000).
    """
    if n < 1 or n_resamples < 1:
        raise ValueError("need at least one segment and one resample")
    rng = np.random.default_rng(seed)
    rows = max(1, max_cells // n)
    done = 0
    while done < n_resamples:
        c = min(rows, n_resamples - done)
        yield rng.choice(n, size=(c, n), replace=True)
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


def _exact_in_float32(stats: np.ndarray) -> bool:
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


def _one_blas_thread():
    """Context: one BLAS thread. On a shared 2-core box OpenBLAS's threads spin and
    cost more CPU than they save (see benchmarks/RESULTS.md, report at scale)."""
    return _blas_controller().limit(limits=1, user_api="blas")


def _resampled_sums(indices: np.ndarray, stats: np.ndarray, exact32: bool) -> np.ndarray:
    """``W @ stats`` for the count matrix ``W`` of ``indices``, in float64 (exact as said)."""
    dtype = np.float32 if exact32 else np.float64
    with _one_blas_thread():
        return (counts_from_indices(indices, stats.shape[0], dtype) @ stats.astype(dtype, copy=False)).astype(np.float64)
