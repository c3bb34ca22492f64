"""PEM scored out of fold: every candidate predicted by a model that never saw its original.

A PEM model (:func:`metrics.core.pem.pem_train`) trained on a study's judgments and
then used to score the same study would be judged on its own training data. For a
meta-evaluation (PEM against the other metrics on the same human scores) the
originals are split into ``folds`` groups (``GroupKFold``); for each fold a model is
trained on the judged candidates of the other originals — with ``pem_train``'s own
grouped inner cross-validation for C, γ, ε — and predicts every candidate of the
held-out originals (Liu, Dahlmeier & Ng 2010 train and test on disjoint sentences for
the same reason).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["META_EVAL_GRID", "OutOfFold", "pem_out_of_fold"]

#: A smaller grid than ``pem.DEFAULT_PARAM_GRID`` (48 settings): ``folds`` outer × 5
#: inner folds of the full grid are 1,200 SVR fits, too many for a 2-core machine.
META_EVAL_GRID: Mapping[str, Sequence[Any]] = {
    "svr__C": (1.0, 10.0),
    "svr__gamma": ("scale", 0.1),
    "svr__epsilon": (0.1, 0.25),
}


@dataclass(frozen=True)
class OutOfFold:
    """Out-of-fold PEM predictions (``scores``, one per candidate, NaN where a fold
    had no training data) and per fold the chosen hyper-parameters and sizes."""

    scores: np.ndarray
    folds: list[dict[str, Any]] = field(default_factory=list)
    digest: str = ""


def pem_out_of_fold(
    features: np.ndarray,
    targets: np.ndarray,
    groups: Sequence,
    *,
    folds: int = 5,
    param_grid: Mapping[str, Sequence[Any]] | None = None,
    target_range: tuple[float, float] = (1.0, 5.0),
) -> OutOfFold:
    """Predict every row of ``features`` (``(n, 3)``, columns ``pem.FEATURES``) out of fold.

    ``targets`` holds the human score of each row, NaN for rows nobody judged (they
    are predicted, never trained on); ``groups`` the original of each row, which the
    folds split by (``GroupKFold(folds)`` over every row's original). Targets are
    mapped linearly from ``target_range`` to PEM's 1–5 before training, so that the
    SVR's ε keeps the meaning it has in ``param_grid``, and predictions mapped back.
    Identical (original, features, target) rows are trained on once. Deterministic.
    Raises ``ValueError`` with fewer than ``folds`` originals.
    """
    from sklearn.model_selection import GroupKFold

    from metrics.core.pem.training import pem_train

    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(targets, dtype=np.float64)
    g = np.asarray(groups).astype(str)
    if x.ndim != 2 or x.shape[1] != 3 or y.shape != (len(x),) or g.shape != (len(x),):
        raise ValueError("features (n, 3), targets (n,) and groups (n,) must have the same n")
    if len(np.unique(g)) < folds:
        raise ValueError(f"{folds} folds need at least {folds} originals; the study has {len(np.unique(g))}")
    lo, hi = (float(v) for v in target_range)
    if not hi > lo:
        raise ValueError("target_range must be (low, high) with high > low")
    y15 = 1.0 + 4.0 * (y - lo) / (hi - lo)
    grid = dict(param_grid or META_EVAL_GRID)
    out = np.full(len(x), np.nan)
    info = []
    for k, (_, held) in enumerate(GroupKFold(n_splits=folds).split(x, y, g)):
        held_groups = np.unique(g[held])
        train_rows = ~np.isin(g, held_groups) & np.isfinite(y15) & np.isfinite(x).all(axis=1)
        # pem_train needs its test originals among its rows: give it the training rows
        # plus the held-out judged rows, and name the held-out originals as its test set.
        test_rows = np.isin(g, held_groups) & np.isfinite(y15) & np.isfinite(x).all(axis=1)
        use = train_rows | test_rows
        if len(np.unique(g[train_rows])) < 2:
            info.append({"fold": k + 1, "n_train": int(train_rows.sum()), "note": "too few training originals"})
            continue
        # Identical rows (one text that several systems produced, with the same judgments)
        # are trained on once: they carry no more information, only more SVR time.
        rows = np.flatnonzero(use)
        _, first = np.unique(
            np.column_stack([x[rows], y15[rows], np.unique(g, return_inverse=True)[1][rows]]), axis=0, return_index=True
        )
        keep = rows[np.sort(first)]
        model = pem_train(x[keep], y15[keep], g[keep], test_groups=held_groups, param_grid=grid)
        predict = np.isin(g, held_groups) & np.isfinite(x).all(axis=1)
        out[predict] = lo + (model.predict(x[predict]) - 1.0) * (hi - lo) / 4.0
        r = model.test_pearson
        info.append(
            {
                "fold": k + 1,
                "n_train": int(model.n_train),
                "n_test": int(model.n_test),
                "n_originals_held_out": int(len(held_groups)),
                "best_params": dict(model.best_params),
                "test_pearson": None if r is None else float(r.statistic),
            }
        )
    digest = hashlib.sha256()
    for arr in (x, np.nan_to_num(y, nan=-1e300), g):
        digest.update(np.ascontiguousarray(arr).tobytes())
    digest.update(repr(sorted(grid.items())).encode())
    return OutOfFold(scores=out, folds=info, digest=digest.hexdigest()[:12])
