"""Array plumbing shared by the modules of :mod:`metrics.core.pivot`."""

from __future__ import annotations

import numpy as np


def ragged(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``starts[i] … starts[i] + counts[i] − 1`` for every i, in order, and the i of each."""
    total = int(counts.sum())
    owner = np.repeat(np.arange(counts.size), counts)
    if not total:
        return owner, owner
    ends = np.cumsum(counts)
    return np.arange(total) + np.repeat(starts - ends + counts, counts), owner
