# Over 400 lines: this session's feature work (protocols, screening, field studies, speed) landed here; splitting it along its seams is issue 17's remaining step, done once so code moves only once.
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
import json
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

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
    "PemFileError",
    "RbfSvr",
    "pem_features",
    "pem_train",
    "split_by_group",
    "Pem",
]

#: Feature columns, in order.
FEATURES = ("pivot-f1", "lm-fluency", "target-f1")
#: Version of the saved-model layout; :meth:`PemModel.load` refuses other versions.
#: Format 1 (paraeval before issue 11) was a pickle and is refused; 2 is a data-only ``.npz``.
PEM_FORMAT = 2
DEFAULT_PARAM_GRID: Mapping[str, Sequence[Any]] = {
    "svr__C": (0.1, 1.0, 10.0, 100.0),
    "svr__gamma": ("scale", 0.01, 0.1, 1.0),
    "svr__epsilon": (0.1, 0.25, 0.5),
}


def _sklearn_version() -> str:
    import sklearn

    return sklearn.__version__


class PemFileError(ValueError):
    """A file is not a PEM model this paraeval reads (foreign, damaged, too large, or a pickle)."""


#: The ``.npz`` members of a saved model, each a float64 array, plus ``meta`` (UTF-8 JSON bytes).
_ARRAYS = ("mean", "scale", "support_vectors", "dual_coef")
#: Saved models larger than this (uncompressed bytes) are refused before reading: a model
#: with 100,000 support vectors of three features takes about 3 MB.
PEM_MAX_BYTES = 64 * 1024**2
#: First byte of a pickle (protocol 2 and later): what paraeval format 1 wrote.
_PICKLE_MAGIC = b"\x80"


@dataclass(frozen=True, eq=False)
class RbfSvr:
    """A fitted ``StandardScaler`` + RBF-kernel ``SVR`` as plain arrays.

    Prediction is the SVR decision function (Smola & Schölkopf 2004, eq. 13),
    f(x) = Σ_i α_i · exp(−γ ‖z − s_i‖²) + b with z = (x − mean) / scale, where s_i
    are the support vectors (in scaled space), α_i the dual coefficients and b the
    intercept. Hand-written (three lines of numpy) rather than kept as a
    scikit-learn object because an estimator can only be stored by pickling it
    (or through skops, which still rebuilds scikit-learn's private classes and
    breaks across their versions): these arrays load with
    ``np.load(allow_pickle=False)``, run no code, and give the same predictions
    whatever scikit-learn version is installed, or none.
    """

    mean: np.ndarray
    scale: np.ndarray
    support_vectors: np.ndarray
    dual_coef: np.ndarray
    intercept: float
    gamma: float

    @classmethod
    def from_pipeline(cls, pipeline: Any) -> "RbfSvr":
        """The arrays of a fitted ``Pipeline([("scale", StandardScaler()), ("svr", SVR(kernel="rbf"))])``."""
        scaler, svr = pipeline.named_steps["scale"], pipeline.named_steps["svr"]
        # ``_gamma`` is the value libsvm used ("scale" resolved to 1 / (n_features · Var X));
        # tests check these arrays predict what the pipeline predicts.
        return cls(
            mean=np.asarray(scaler.mean_, dtype=np.float64),
            scale=np.asarray(scaler.scale_, dtype=np.float64),
            support_vectors=np.asarray(svr.support_vectors_, dtype=np.float64),
            dual_coef=np.asarray(svr.dual_coef_, dtype=np.float64).ravel(),
            intercept=float(np.ravel(svr.intercept_)[0]),
            gamma=float(svr._gamma),
        )

    def predict(self, x: np.ndarray) -> np.ndarray:
        from scipy.spatial.distance import cdist

        z = (x - self.mean) / self.scale
        return np.exp(-self.gamma * cdist(z, self.support_vectors, "sqeuclidean")) @ self.dual_coef + self.intercept


@dataclass(frozen=True, eq=False)
class PemModel:
    """A trained PEM regressor: scaler + RBF SVR, with how it was made and tested.

    ``test_pearson`` is the Pearson correlation between predictions and human
    scores on the held-out originals (``None`` when no test set was held out);
    ``feature_signatures`` are the signatures of the three feature metrics it
    was trained with (their parameters and resource hashes), so that scoring
    with other resources can be refused. ``sklearn_version`` records what
    trained it; prediction does not depend on it (see :class:`RbfSvr`).
    """

    svr: RbfSvr
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
        """``pem|format:2|C:…|gamma:…|epsilon:…|train:n|data:<hash>|sklearn:<version>``."""
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
        return self.svr.predict(x) if len(x) else np.zeros(0)

    def save(self, path: str | Path) -> Path:
        """Write the model as a data-only ``.npz`` (format :data:`PEM_FORMAT`).

        Members: the float64 arrays of :class:`RbfSvr` and ``meta``, the UTF-8
        JSON of everything else (kind, format, intercept, γ, hyper-parameters,
        test correlation, feature signatures, versions). Nothing in it is code,
        so a model can be handed to another installation and uploaded there.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        r = self.test_pearson
        meta = {
            "kind": "paraeval-pem",
            "format": PEM_FORMAT,
            "intercept": self.svr.intercept,
            "gamma": self.svr.gamma,
            "best_params": dict(self.best_params),
            "cv_mse": self.cv_mse,
            "n_train": self.n_train,
            "n_test": self.n_test,
            "test_pearson": None if r is None else {"statistic": r.statistic, "pvalue": r.pvalue, "n": r.n},
            "feature_signatures": list(self.feature_signatures),
            "data_hash": self.data_hash,
            "sklearn_version": self.sklearn_version,
        }
        arrays = {name: getattr(self.svr, name) for name in _ARRAYS}
        with open(path, "wb") as fh:
            np.savez(fh, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), **arrays)
        return path

    @classmethod
    def load(cls, source: str | Path | BinaryIO) -> "PemModel":
        """Read a model written by :meth:`save` from a path or a binary file object.

        Never unpickles: the ``.npz`` is read with ``allow_pickle=False``, its
        members' declared sizes are checked (at most :data:`PEM_MAX_BYTES`)
        before anything is decompressed, and every array's dtype and shape are
        checked. Raises :class:`PemFileError` (a ``ValueError``) when the file is
        not a PEM model, has another format version, is a pickled model of
        paraeval's first format (refused: loading a pickle runs code), or is
        inconsistent.
        """
        name = str(source) if isinstance(source, (str, Path)) else (getattr(source, "name", None) or "upload")
        fh = open(source, "rb") if isinstance(source, (str, Path)) else source
        try:
            return cls._read(fh, name)
        finally:
            if isinstance(source, (str, Path)):
                fh.close()

    @classmethod
    def _read(cls, fh: BinaryIO, name: str) -> "PemModel":
        fh.seek(0)
        head = fh.read(4)
        fh.seek(0)
        if head[:1] == _PICKLE_MAGIC:
            raise PemFileError(
                f"{name}: a pickled PEM model (the format of older paraeval versions) is refused, because "
                "loading a pickle can run any code; retrain the model with this version, which saves a "
                "data-only .npz"
            )
        if head != b"PK\x03\x04":
            raise PemFileError(f"{name}: not a PEM model file (expected the .npz that paraeval saves)")
        try:
            with zipfile.ZipFile(fh) as zf:
                infos = zf.infolist()
                members = {i.filename.removesuffix(".npy") for i in infos}
                if members != {"meta", *_ARRAYS} or len(infos) != len(members):
                    raise PemFileError(f"{name}: not a PEM model file (members {sorted(members)})")
                total = sum(i.file_size for i in infos)
                if total > PEM_MAX_BYTES:
                    raise PemFileError(f"{name}: {total:,} bytes unpacked; a PEM model may have {PEM_MAX_BYTES:,}")
            fh.seek(0)
            with np.load(fh, allow_pickle=False) as npz:
                data = {k: npz[k] for k in ("meta", *_ARRAYS)}
        except PemFileError:
            raise
        except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as exc:
            raise PemFileError(f"{name}: not a readable PEM model ({exc})") from None
        try:
            meta = json.loads(data["meta"].tobytes().decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise PemFileError(f"{name}: not a PEM model file (bad metadata: {exc})") from None
        if not isinstance(meta, dict) or meta.get("kind") != "paraeval-pem":
            raise PemFileError(f"{name}: not a PEM model file")
        if meta.get("format") != PEM_FORMAT:
            raise PemFileError(f"{name}: PEM model format {meta.get('format')!r}, this paraeval reads {PEM_FORMAT}")
        try:
            return cls._from_parts(data, meta)
        except (KeyError, TypeError, ValueError) as exc:
            raise PemFileError(f"{name}: an inconsistent PEM model ({exc})") from None

    @classmethod
    def _from_parts(cls, data: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> "PemModel":
        k = len(FEATURES)
        for key in _ARRAYS:
            if data[key].dtype != np.float64 or not np.all(np.isfinite(data[key])):
                raise ValueError(f"{key} must hold finite float64 values")
        sv, dual = data["support_vectors"], data["dual_coef"]
        if data["mean"].shape != (k,) or data["scale"].shape != (k,) or not np.all(data["scale"] > 0):
            raise ValueError(f"mean and scale must be {k} numbers, scale positive")
        if sv.ndim != 2 or sv.shape[1] != k or dual.shape != (sv.shape[0],):
            raise ValueError(f"support_vectors {sv.shape} and dual_coef {dual.shape} do not fit together")
        intercept, gamma = float(meta["intercept"]), float(meta["gamma"])
        if not (np.isfinite(intercept) and np.isfinite(gamma) and gamma > 0):
            raise ValueError("intercept must be finite and gamma positive")
        tp = meta.get("test_pearson")
        pearson_r = None
        if tp is not None:
            pvalue = tp.get("pvalue")
            pearson_r = CorrelationResult(
                float(tp["statistic"]), None if pvalue is None else float(pvalue), int(tp["n"]), "pearson"
            )
        return cls(
            svr=RbfSvr(mean=data["mean"], scale=data["scale"], support_vectors=sv, dual_coef=dual,
                       intercept=intercept, gamma=gamma),
            best_params=dict(meta["best_params"]),
            cv_mse=float(meta["cv_mse"]),
            n_train=int(meta["n_train"]),
            n_test=int(meta["n_test"]),
            test_pearson=pearson_r,
            feature_signatures=tuple(str(s) for s in meta.get("feature_signatures", ())),
            data_hash=str(meta.get("data_hash", "")),
            sklearn_version=str(meta.get("sklearn_version", "")),
        )


def _check_features(features) -> np.ndarray:
    x = np.asarray(features, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != len(FEATURES):
        raise ValueError(f"features must have shape (n, {len(FEATURES)}), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("features must be finite")
    return x


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
        svr=RbfSvr.from_pipeline(search.best_estimator_),
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
        "model": ResourceSpec(
            "model", "a PEM model (.npz) trained by metrics.core.pem.pem_train and saved; pickles are refused",
            loader=_load_model,
        ),
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
