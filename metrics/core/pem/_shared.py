"""PEM's feature columns and the check every feature matrix passes (shared by the model and training)."""

from __future__ import annotations

import numpy as np

__all__ = ["FEATURES"]


#: Feature columns, in order.
FEATURES = ("pivot-f1", "lm-fluency", "target-f1")


def check_features(features) -> np.ndarray:
    x = np.asarray(features, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != len(FEATURES):
        raise ValueError(f"features must have shape (n, {len(FEATURES)}), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("features must be finite")
    return x
