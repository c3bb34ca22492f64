"""Training PEM (§4.5, §6.1): a split by original and grouped cross-validation of the RBF SVR."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from metrics.core.stats.correlation import pearson

from .model import PemModel, RbfSvr, check_features

__all__ = ["DEFAULT_PARAM_GRID", "split_by_group", "pem_train"]


DEFAULT_PARAM_GRID: Mapping[str, Sequence[Any]] = {
    "svr__C": (0.1, 1.0, 10.0, 100.0),
    "svr__gamma": ("scale", 0.01, 0.1, 1.0),
    "svr__epsilon": (0.1, 0.25, 0.5),
}


def split_by_group(
    groups: Sequence | np.ndarray,
    *,
    test_fraction: float = 1 / 3,
    seed: int = 0,
    test_groups: Iterable | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(train indices, test indices) with every group wholly on one side.

    With ``test_groups``, exactly those groups are tested (e.g. the paper's last
    100 of 300 originals); otherwise a seeded random ``test_fraction`` of the
    distinct groups (at least one, and at least one left to train on) is held
    out. ``test_fraction=0`` holds out nothing.
    """
    g = np.asarray(groups)
    uniq = np.unique(g)
    if test_groups is not None:
        test_set = np.asarray(list(test_groups))
        known = set(uniq.tolist())
        unknown = [t for t in test_set.tolist() if t not in known]
        if unknown:
            raise ValueError(f"test group {unknown[0]!r} does not occur in groups")
    else:
        if not 0 <= test_fraction < 1:
            raise ValueError("test_fraction must lie in [0, 1)")
        k = 0 if test_fraction == 0 else min(max(1, round(test_fraction * len(uniq))), len(uniq) - 1)
        rng = np.random.default_rng(seed)
        test_set = rng.choice(uniq, size=k, replace=False) if k else uniq[:0]
    is_test = np.isin(g, test_set)
    return np.flatnonzero(~is_test), np.flatnonzero(is_test)


def pem_train(
    features: np.ndarray,
    targets: np.ndarray,
    groups: Sequence | np.ndarray,
    *,
    test_fraction: float = 1 / 3,
    test_groups: Iterable | None = None,
    seed: int = 0,
    param_grid: Mapping[str, Sequence[Any]] | None = None,
    n_splits: int = 5,
    feature_signatures: Sequence[str] = (),
) -> PemModel:
    """Train PEM's RBF-kernel SVR from features to human overall scores (§4.5, §6.1).

    ``features`` is ``(n, 3)`` (columns :data:`FEATURES`), ``targets`` the human
    overall scores (e.g. the mean of the judges), ``groups`` the original of each
    pair. Originals are split into train and test by :func:`split_by_group`; on
    the training originals ``GridSearchCV`` with ``GroupKFold(n_splits)`` picks
    C, γ, ε from ``param_grid`` (keys ``svr__C``, ``svr__gamma``,
    ``svr__epsilon``; default :data:`DEFAULT_PARAM_GRID`) by mean squared error,
    then refits on all training pairs. The result carries the Pearson
    correlation on the test originals. Deterministic for a given ``seed``.
    """
    from sklearn.model_selection import GridSearchCV, GroupKFold
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVR

    x = check_features(features)
    y = np.asarray(targets, dtype=np.float64)
    g = np.asarray(groups)
    if y.shape != (len(x),) or g.shape != (len(x),):
        raise ValueError("features, targets and groups must have the same length")
    if not np.all(np.isfinite(y)):
        raise ValueError("targets must be finite")
    train, test = split_by_group(g, test_fraction=test_fraction, seed=seed, test_groups=test_groups)
    n_groups = len(np.unique(g[train]))
    if n_groups < 2:
        raise ValueError("need at least two training originals for grouped cross-validation")
    pipe = Pipeline([("scale", StandardScaler()), ("svr", SVR(kernel="rbf"))])
    search = GridSearchCV(
        pipe,
        {k: list(v) for k, v in (param_grid or DEFAULT_PARAM_GRID).items()},
        cv=GroupKFold(n_splits=min(n_splits, n_groups)),
        scoring="neg_mean_squared_error",
        refit=True,
    )
    search.fit(x[train], y[train], groups=g[train])
    test_r = None
    if len(test):
        test_r = pearson(search.predict(x[test]), y[test])
    digest = hashlib.sha256()
    for arr in (x, y, g.astype(str)):
        digest.update(np.ascontiguousarray(arr).tobytes())
    return PemModel(
        svr=RbfSvr.from_pipeline(search.best_estimator_),
        best_params=dict(search.best_params_),
        cv_mse=float(-search.best_score_),
        n_train=int(len(train)),
        n_test=int(len(test)),
        test_pearson=test_r,
        feature_signatures=tuple(feature_signatures),
        data_hash=digest.hexdigest()[:12],
    )
