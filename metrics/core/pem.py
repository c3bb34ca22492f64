"""PEM: the paraphrase evaluation metric of Liu, Dahlmeier & Ng (2010, §4.5, §6).

PEM maps three automatic features of a pair (original R, paraphrase P)

* pivot-language F1 (adequacy; :mod:`metrics.core.pivot`, §4.3),
* normalised LM score Pn = log Pr(P) / length(P) (fluency; :mod:`metrics.core.lm`, §4.4),
* target-language F1 (dissimilarity; :mod:`metrics.core.target_f1`, §4.4)

to the human overall score with support-vector regression with the RBF kernel
K(x_i, x_j) = exp(−γ ‖x_i − x_j‖²). The paper trains SVM-light on the pairs of
the first 200 originals and tests on the other 100 (§6.1), so training and test
never share an original. Here: scikit-learn's ``SVR`` behind a
``StandardScaler`` (the three features live on very different scales; the paper
does not say how it scaled them), C, γ and ε chosen by grouped cross-validation
on the training originals (``GroupKFold`` in ``GridSearchCV``, mean squared
error), and a held-out test set of whole originals on which the Pearson
correlation is reported. SVM-light's own defaults are not reproduced.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from metrics.core.base import MeanMetric, MetricError, ResourceSpec
from metrics.core.cards import MetricCard
from metrics.core.registry import register
from metrics.core.stats.correlation import pearson
from metrics.core.stats.results import CorrelationResult

__all__ = [
    "FEATURES",
    "PEM_FORMAT",
    "DEFAULT_PARAM_GRID",
    "PemModel",
    "pem_features",
    "pem_train",
    "split_by_group",
    "Pem",
]

#: Feature columns, in order.
FEATURES = ("pivot-f1", "lm-fluency", "target-f1")
#: Version of the saved-model layout; :meth:`PemModel.load` refuses other versions.
PEM_FORMAT = 1
DEFAULT_PARAM_GRID: Mapping[str, Sequence[Any]] = {
    "svr__C": (0.1, 1.0, 10.0, 100.0),
    "svr__gamma": ("scale", 0.01, 0.1, 1.0),
    "svr__epsilon": (0.1, 0.25, 0.5),
}


def _sklearn_version() -> str:
    import sklearn

    return sklearn.__version__


@dataclass(frozen=True, eq=False)
class PemModel:
    """A trained PEM regressor: scaler + RBF SVR, with how it was made and tested.

    ``test_pearson`` is the Pearson correlation between predictions and human
    scores on the held-out originals (``None`` when no test set was held out);
    ``feature_signatures`` are the signatures of the three feature metrics it
    was trained with (their parameters and resource hashes), so that scoring
    with other resources can be refused.
    """

    pipeline: Any
    best_params: Mapping[str, Any]
    cv_mse: float
    n_train: int
    n_test: int
    test_pearson: CorrelationResult | None
    feature_signatures: tuple[str, ...] = ()
    data_hash: str = ""
    sklearn_version: str = field(default_factory=_sklearn_version)

    @property
    def signature(self) -> str:
        """``pem|format:1|C:…|gamma:…|epsilon:…|train:n|data:<hash>|sklearn:<version>``."""
        p = self.best_params
        return (
            f"pem|format:{PEM_FORMAT}|C:{p.get('svr__C')}|gamma:{p.get('svr__gamma')}|"
            f"epsilon:{p.get('svr__epsilon')}|train:{self.n_train}|data:{self.data_hash}|"
            f"sklearn:{self.sklearn_version}"
        )

    @property
    def fingerprint(self) -> str:
        """Short hash of :attr:`signature` (for metric signatures)."""
        return hashlib.sha256(self.signature.encode()).hexdigest()[:12]

    def predict(self, features: np.ndarray) -> np.ndarray:
        """Predicted overall scores for an ``(n, 3)`` feature matrix (columns :data:`FEATURES`)."""
        x = _check_features(features)
        return self.pipeline.predict(x) if len(x) else np.zeros(0)

    def save(self, path: str | Path) -> Path:
        """Pickle the model with its format version (:data:`PEM_FORMAT`) and sklearn version.

        Only load files you trust: unpickling runs code.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"format": PEM_FORMAT, "kind": "paraeval-pem", "model": self}
        with open(path, "wb") as fh:
            pickle.dump(payload, fh, protocol=pickle.HIGHEST_PROTOCOL)
        return path

    @classmethod
    def load(cls, path: str | Path) -> "PemModel":
        """Read a model written by :meth:`save`.

        Raises ``ValueError`` when the file is not a PEM model, has another
        format version, or was written by another scikit-learn version (its
        pickled estimators are not guaranteed to behave the same).
        """
        path = Path(path)
        try:
            with open(path, "rb") as fh:
                payload = pickle.load(fh)
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError) as exc:
            raise ValueError(f"{path}: not a PEM model ({exc})") from None
        if not isinstance(payload, dict) or payload.get("kind") != "paraeval-pem":
            raise ValueError(f"{path}: not a PEM model file")
        if payload.get("format") != PEM_FORMAT:
            raise ValueError(f"{path}: PEM model format {payload.get('format')!r}, this paraeval reads {PEM_FORMAT}")
        model = payload["model"]
        if model.sklearn_version != _sklearn_version():
            raise ValueError(
                f"{path}: trained with scikit-learn {model.sklearn_version}, running {_sklearn_version()}; "
                "retrain the model"
            )
        return model


def _check_features(features) -> np.ndarray:
    x = np.asarray(features, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != len(FEATURES):
        raise ValueError(f"features must have shape (n, {len(FEATURES)}), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("features must be finite")
    return x


def split_by_group(
    groups: Sequence,
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
    groups: Sequence,
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

    x = _check_features(features)
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
        pipeline=search.best_estimator_,
        best_params=dict(search.best_params_),
        cv_mse=float(-search.best_score_),
        n_train=int(len(train)),
        n_test=int(len(test)),
        test_pearson=test_r,
        feature_signatures=tuple(feature_signatures),
        data_hash=digest.hexdigest()[:12],
    )


def _feature_metrics(phrase_table: Any, lm: Any) -> tuple:
    # Imported here, not at the top: the registry imports this module while it
    # may still be importing lm/pivot (whichever was imported first).
    from metrics.core.lm import LmFluency
    from metrics.core.pivot import PivotF1
    from metrics.core.target_f1 import TargetF1

    return (
        PivotF1(resources={"phrase_table": phrase_table} if phrase_table is not None else None),
        LmFluency(resources={"model": lm} if lm is not None else None),
        TargetF1(),
    )


def pem_features(
    originals: Sequence[str],
    candidates: Sequence[str],
    *,
    phrase_table: Any = None,
    lm: Any = None,
) -> tuple[np.ndarray, tuple[str, ...]]:
    """The ``(n, 3)`` PEM features of pairs, and the three feature metrics' signatures.

    Columns: pivot-language F1 of (R, P), Pn of P, target-language F1 of (R, P),
    each the registered metric's sentence score with default parameters.
    ``phrase_table`` and ``lm`` are paths (or a loaded :class:`PhraseTable`);
    ``None`` uses the metrics' default resources.
    """
    cols, sigs = [], []
    for metric in _feature_metrics(phrase_table, lm):
        cols.append(metric.sentence_scores(metric.segment_stats(originals, candidates)))
        sigs.append(metric.signature())
    return np.column_stack(cols) if len(originals) else np.zeros((0, 3)), tuple(sigs)


def _load_model(path: Path) -> PemModel:
    return PemModel.load(path)


@register
class Pem(MeanMetric):
    """Registered ``pem``: a trained :class:`PemModel` applied to the three features.

    Sentence score: the predicted overall score (1–5 scale of the training
    targets); corpus score: their mean. Refuses to score when the phrase table or
    LM differs from the ones the model was trained with (compared through the
    feature metrics' signatures stored in the model).
    """

    slug = "pem"
    description = "PEM (Liu et al. 2010): RBF-SVR from pivot F1, LM fluency and target F1 to the overall score."
    version = "1"
    card = MetricCard(
        measures="A prediction of the human overall score (1–5) from three features: pivot-language F1 (adequacy), "
                 "LM fluency and target-language F1 (lexical dissimilarity).",
        direction="higher",
        range="about 1–5 (the human overall scale; the SVR's output is not clipped)",
        needs="original (R), candidate (P), a trained PEM model, the phrase table and the language model it was trained with",
        reference="Liu, Dahlmeier & Ng 2010, PEM: A Paraphrase Evaluation Metric Exploiting Parallel Texts (EMNLP)",
        caveats="Only as good as the judgments it was trained on; score studies of the same domain, with the same "
                "phrase table and LM (the signature records their hashes).",
        prepare="Train a model first: on the study's Metrics tab, under “PEM models”, fill in the Train PEM "
                "form (it needs a judged study); then press “Score this study” next to the model, or choose "
                "it as the model resource.",
    )
    resources = {
        "model": ResourceSpec("model", "a PEM model trained by metrics.core.pem.pem_train and saved", loader=_load_model),
        "phrase_table": ResourceSpec(
            "phrase_table", "the phrase table of pivot-f1", default="fixtures/resources/phrase_table_bible_en_es.tsv.xz"
        ),
        "lm": ResourceSpec(
            "lm", "the language model (or its training text) of lm-fluency",
            default="fixtures/resources/lm_bible_en_train.txt.xz",
        ),
    }

    def _sentence_values(self, originals, candidates, references):
        model: PemModel = self.resource("model")
        feats, sigs = pem_features(
            originals, candidates,
            phrase_table=self.resource_path("phrase_table"),
            lm=self.resource_path("lm"),
        )
        if model.feature_signatures and tuple(model.feature_signatures) != sigs:
            diff = next((a, b) for a, b in zip(model.feature_signatures, sigs) if a != b)
            raise MetricError(
                f"the PEM model was trained with feature {diff[0]!r} but this run computes {diff[1]!r}; "
                "use the same phrase table and language model, or retrain"
            )
        return model.predict(feats)
