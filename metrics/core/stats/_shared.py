"""Bootstrap plumbing shared by the agreement and correlation statistics (private).

Percentile bootstraps over items (Efron & Tibshirani 1993): :func:`weight_chunks` draws
seeded resampling-count matrices, so a resampled statistic is ``weights @ per_item_stats``;
:func:`percentile_ci` reads the interval off the resampled values.  One module that both
:mod:`.agreement` and :mod:`.correlation` import, so that neither imports the other's privates.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np


def weight_chunks(n_items: int, n_boot: int, seed: int) -> Iterator[np.ndarray]:
    """Yield (chunk, n_items) resampling-count matrices, ``n_boot`` rows in total.

    Row b holds how often each item appears in bootstrap sample b; rows sum to n_items.
    The chunk size depends only on n_items, so a seed always gives the same samples.
    """
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_boot, 2_000_000 // max(n_items, 1)))
    done = 0
    while done < n_boot:
        b = min(chunk, n_boot - done)
        # int32 halves the cost of drawing; b · n_items ≤ 2e6 always fits.
        draws = rng.integers(0, n_items, size=(b, n_items), dtype=np.int32)
        draws += (np.arange(b, dtype=np.int32) * n_items)[:, None]
        yield np.bincount(draws.ravel(), minlength=b * n_items).reshape(b, n_items).astype(float)
        done += b


def percentile_ci(values: np.ndarray, confidence_level: float) -> tuple[float | None, float | None]:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None, None
    tail = (1 - confidence_level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)
