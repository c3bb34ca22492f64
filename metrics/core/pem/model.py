"""A trained PEM regressor as plain arrays, its three feature columns, and its data-only ``.npz`` file format.

:class:`RbfSvr` predicts with a fitted scaler + RBF SVR without scikit-learn;
:class:`PemModel` adds how the model was made and tested, and saves and loads it
without ever unpickling (:class:`PemFileError` for anything else).
"""

from __future__ import annotations

import hashlib
import json
import math
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from numpy.lib import format as npy_format

from metrics.core.stats.results import CorrelationResult

#: Feature columns, in order.
FEATURES = ("pivot-f1", "lm-fluency", "target-f1")


def check_features(features) -> np.ndarray:
    x = np.asarray(features, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != len(FEATURES):
        raise ValueError(f"features must have shape (n, {len(FEATURES)}), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("features must be finite")
    return x


__all__ = ["FEATURES", "PEM_FORMAT", "PEM_MAX_BYTES", "PemFileError", "RbfSvr", "PemModel", "check_features"]


#: Version of the saved-model layout; :meth:`PemModel.load` refuses other versions.
#: Format 1 (paraeval before issue 11) was a pickle and is refused; 2 is a data-only ``.npz``.
PEM_FORMAT = 2


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
    def from_pipeline(cls, pipeline: Any) -> RbfSvr:
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
        x = check_features(features)
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
    def load(cls, source: str | Path | BinaryIO) -> PemModel:
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
    def _read(cls, fh: BinaryIO, name: str) -> PemModel:
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
                for info in infos:
                    _check_npy_header(zf, info, name)
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
    def _from_parts(cls, data: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> PemModel:
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
            svr=RbfSvr(
                mean=data["mean"],
                scale=data["scale"],
                support_vectors=sv,
                dual_coef=dual,
                intercept=intercept,
                gamma=gamma,
            ),
            best_params=dict(meta["best_params"]),
            cv_mse=float(meta["cv_mse"]),
            n_train=int(meta["n_train"]),
            n_test=int(meta["n_test"]),
            test_pearson=pearson_r,
            feature_signatures=tuple(str(s) for s in meta.get("feature_signatures", ())),
            data_hash=str(meta.get("data_hash", "")),
            sklearn_version=str(meta.get("sklearn_version", "")),
        )


def _check_npy_header(zf: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> None:
    """Refuse a member whose ``.npy`` header claims more data than the member holds.

    ``np.load`` allocates the array its header declares before reading a byte of
    it, so a few-hundred-byte member claiming a (2**40, 3) array would ask for
    24 TiB (``MemoryError``). The header is read alone (``numpy.lib.format``,
    a few hundred bytes) and shape x item size must fit in the member's unpacked
    size (which :meth:`PemModel._read` has already capped at :data:`PEM_MAX_BYTES`).
    """
    member = info.filename.removesuffix(".npy")
    try:
        with zf.open(info) as fh:
            version = npy_format.read_magic(fh)
            read_header = npy_format.read_array_header_1_0 if version == (1, 0) else npy_format.read_array_header_2_0
            shape, _fortran, dtype = read_header(fh)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise PemFileError(f"{name}: not a readable PEM model (member {member}: {exc})") from None
    if dtype.hasobject:
        raise PemFileError(f"{name}: member {member} holds Python objects; a PEM model holds numbers only")
    declared = math.prod(shape) * dtype.itemsize
    if declared > min(info.file_size, PEM_MAX_BYTES):
        raise PemFileError(
            f"{name}: member {member} claims a {'x'.join(map(str, shape))} array ({declared:,} bytes) "
            f"but holds {info.file_size:,} bytes; a PEM model may have {PEM_MAX_BYTES:,}"
        )
