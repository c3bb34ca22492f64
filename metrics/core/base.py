"""The metric engine: sufficient statistics, signatures, bootstrap and paired tests.

Every automatic metric in paraeval has the shape of sacrebleu's metrics
(Post 2018, *A Call for Clarity in Reporting BLEU Scores*):

1. :meth:`Metric.segment_stats` turns each (original, candidate, reference)
   segment into a small vector of *additive* sufficient statistics, so a batch
   becomes a float matrix of shape ``(n, k)``;
2. :meth:`Metric.scores_from_sums` turns *summed* statistics into a score, so the
   corpus score is ``scores_from_sums(stats.sum(0))`` and a bootstrap resample is
   just another weighted sum of the same rows (no text is ever re-scored);
3. :meth:`Metric.signature` names the metric, its parameters, the hashes of its
   resource files, the tokenizer and the paraeval version, so that a number in a
   paper can be reproduced.

Metrics whose corpus score is the mean of sentence scores (PINC, WEEM4PG, ...)
subclass :class:`MeanMetric`: their statistics are ``[sentence_score, 1]`` and
the corpus score is ``Σ score / Σ 1`` — the mean, and still a ratio of sums.

Writing a metric
----------------
Subclass :class:`Metric` (or :class:`MeanMetric`), set the class attributes
``slug``, ``description``, ``params``, ``resources``, ``version``,
``higher_is_better`` and ``stat_names``, implement ``_segment_stats`` (the
public :meth:`Metric.segment_stats` validates the input first) and
``scores_from_sums``, and decorate the class with
:func:`metrics.core.registry.register`. Parameter values are in
``self.param_values``; resources are loaded lazily by ``self.resource(name)``.

Signature format (stable; :func:`parse_signature` reads it back)::

    metric:<slug>|version:<metric version>|<param>:<value>|...|<extra>:<value>|...
    |res:<name>=<sha256 prefix>|...|tok:<TOKENIZER_VERSION>|paraeval:<version>

Fields are separated by ``|`` and split at their first ``:``; in values, ``%``
and ``|`` are written ``%25`` and ``%7C``. Parameters appear in declaration
order, booleans as ``true``/``false``. ``<extra>`` fields are metric-specific
(e.g. ``sacrebleu:`` carries sacrebleu's own signature). ``res:`` repeats once
per resource, in declaration order; the hash is the first 12 hex digits of the
SHA-256 of the resource file (of every file, by sorted relative path, for a
directory), or the ``fingerprint`` of a resource object passed in directly.
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from metrics.core.cards import MetricCard
from metrics.core.text import TOKENIZER_VERSION

__all__ = [
    "PARAEVAL_VERSION",
    "REPO_ROOT",
    "Param",
    "ResourceSpec",
    "MetricError",
    "ResourceUnavailable",
    "MissingReference",
    "Metric",
    "MeanMetric",
    "MetricResult",
    "BootstrapResult",
    "PairedResult",
    "parse_signature",
    "file_fingerprint",
    "bootstrap_ci",
    "paired_bootstrap",
    "resample_indices",
    "iter_resample_indices",
    "counts_from_indices",
    "paired_approximate_randomization",
    "PairwiseResult",
    "pairwise_tests",
]

#: Recorded in every signature; bump on any change that can move a score.
PARAEVAL_VERSION = "0.1.0"

#: Repository root: relative default resource paths are resolved against it.
REPO_ROOT = Path(__file__).resolve().parents[2]

#: Default seed of bootstrap resampling: sacrebleu's default (``SACREBLEU_SEED``),
#: so that the same call reproduces sacrebleu's resamples.
DEFAULT_SEED = 12345

# Signature keys that a parameter may not shadow.
_RESERVED_KEYS = frozenset({"metric", "version", "res", "tok", "paraeval"})
_TRUE = frozenset({"true", "1", "yes", "on", "t", "y"})
_FALSE = frozenset({"false", "0", "no", "off", "f", "n"})


# --------------------------------------------------------------------------- errors


class MetricError(ValueError):
    """Bad input to a metric: unknown or ill-typed parameter, missing data."""


class ResourceUnavailable(MetricError):
    """A resource file is missing or unreadable (message names it and the fix)."""


class MissingReference(MetricError):
    """The metric needs a reference for a segment that has none."""


# --------------------------------------------------------------------------- params


@dataclass(frozen=True)
class Param:
    """One metric parameter: its type, default and allowed values.

    ``type`` is ``bool``, ``int``, ``float`` or ``str``. Values may be given as
    strings (``KEY=VALUE`` on the command line) and are coerced by :meth:`coerce`;
    ``choices`` (if set) and the inclusive ``minimum``/``maximum`` are checked.
    A ``nullable`` parameter also accepts ``None`` (given as ``none`` or an
    empty string on the command line; written ``none`` in signatures).
    """

    name: str
    type: type
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    nullable: bool = False

    def coerce(self, value: Any) -> Any:
        """Return ``value`` as ``self.type``, or raise :class:`MetricError` naming the param."""
        if self.nullable and (value is None or (isinstance(value, str) and value.strip().lower() in ("", "none"))):
            return None
        try:
            out = self._convert(value)
        except (TypeError, ValueError):
            raise MetricError(
                f"parameter {self.name!r} must be {self.type.__name__}, got {value!r}"
            ) from None
        if self.choices is not None and out not in self.choices:
            allowed = ", ".join(map(str, self.choices))
            raise MetricError(f"parameter {self.name!r} must be one of {allowed}; got {value!r}")
        if self.minimum is not None and out < self.minimum:
            raise MetricError(f"parameter {self.name!r} must be ≥ {self.minimum}; got {value!r}")
        if self.maximum is not None and out > self.maximum:
            raise MetricError(f"parameter {self.name!r} must be ≤ {self.maximum}; got {value!r}")
        return out

    def _convert(self, value: Any) -> Any:
        if self.type is bool:
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
                return value.strip().lower() in _TRUE
            if isinstance(value, (int, np.integer)) and value in (0, 1):
                return bool(value)
            raise ValueError(value)
        if self.type is int:
            if isinstance(value, bool):
                raise TypeError(value)
            if isinstance(value, str):
                return int(value.strip())
            if isinstance(value, (float, np.floating)) and not float(value).is_integer():
                raise ValueError(value)
            if isinstance(value, (int, float, np.integer, np.floating)):
                return int(value)
            raise TypeError(value)
        if self.type is float:
            if isinstance(value, bool):
                raise TypeError(value)
            if isinstance(value, str):
                out = float(value.strip())
            elif isinstance(value, (int, float, np.integer, np.floating)):
                out = float(value)
            else:
                raise TypeError(value)
            if not math.isfinite(out):
                raise ValueError(value)
            return out
        if self.type is str:
            if not isinstance(value, str):
                raise TypeError(value)
            return value
        raise TypeError(f"unsupported parameter type {self.type!r}")


def _format_value(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _escape(text: str) -> str:
    return text.replace("%", "%25").replace("|", "%7C")


def _unescape(text: str) -> str:
    return text.replace("%7C", "|").replace("%7c", "|").replace("%25", "%")


# --------------------------------------------------------------------------- resources


@dataclass(frozen=True)
class ResourceSpec:
    """A file a metric reads (word vectors, a synonym table, a model).

    ``default`` is where it lives when the user gives no path: a path (relative
    paths are resolved against the repository root), a zero-argument callable
    returning a path or ``None`` (e.g. a directory inside an installed package),
    or ``None`` (the user must give one). ``loader`` reads a path into the object
    the metric uses (default: the :class:`~pathlib.Path` itself).
    """

    name: str
    help: str
    default: str | Path | Callable[[], Path | None] | None = None
    loader: Callable[[Path], Any] | None = None

    def default_path(self) -> Path | None:
        """The default location, or ``None`` when there is none."""
        d = self.default
        if d is None:
            return None
        p = d() if callable(d) else d
        if p is None:
            return None
        p = Path(p)
        return p if p.is_absolute() else REPO_ROOT / p


@lru_cache(maxsize=64)
def _hash_path(path: str, stamp: tuple) -> str:
    h = hashlib.sha256()
    p = Path(path)
    files = [p] if p.is_file() else sorted(q for q in p.rglob("*") if q.is_file())
    for f in files:
        if p.is_dir():
            h.update(f.relative_to(p).as_posix().encode() + b"\0")
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()[:12]


def file_fingerprint(path: str | os.PathLike) -> str:
    """First 12 hex digits of the SHA-256 of a file (or of a directory's files).

    For a directory every regular file is hashed in sorted relative-path order,
    each preceded by its relative path. Cached per (path, size, mtime).
    """
    p = Path(path).resolve()
    if not p.exists():
        raise ResourceUnavailable(f"resource {str(path)!r} does not exist")
    if p.is_file():
        st = p.stat()
        stamp: tuple = (st.st_size, st.st_mtime_ns)
    else:
        stamp = tuple(
            (str(q), q.stat().st_size, q.stat().st_mtime_ns) for q in sorted(p.rglob("*")) if q.is_file()
        )
    return _hash_path(str(p), stamp)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class MetricResult:
    """Scores of one metric over a batch: per segment and for the corpus."""

    metric: str
    signature: str
    scores: tuple[float, ...]
    corpus: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form ``{"metric", "signature", "scores", "corpus", "n"}``."""
        return {
            "metric": self.metric,
            "signature": self.signature,
            "scores": list(self.scores),
            "corpus": self.corpus,
            "n": self.n,
        }


@dataclass(frozen=True)
class BootstrapResult:
    """A corpus score with a percentile bootstrap confidence interval."""

    statistic: float
    ci_low: float
    ci_high: float
    n: int
    n_resamples: int
    confidence: float = 0.95
    standard_error: float = math.nan

    def confidence_interval(self) -> tuple[float, float]:
        """``(ci_low, ci_high)``."""
        return (self.ci_low, self.ci_high)


@dataclass(frozen=True)
class PairedResult:
    """Paired bootstrap comparison of system B against baseline A (Koehn 2004)."""

    statistic_a: float
    statistic_b: float
    delta: float
    pvalue: float
    n: int
    n_resamples: int
    seed: int | None = DEFAULT_SEED


# --------------------------------------------------------------------------- metric


class Metric(ABC):
    """Abstract base of every automatic metric (see the module docstring)."""

    #: Registry key, e.g. ``"bleu"``.
    slug: ClassVar[str] = ""
    #: One line, shown by ``manage.py metrics``.
    description: ClassVar[str] = ""
    #: Parameter specs by name (values live in ``self.param_values``).
    params: ClassVar[Mapping[str, Param]] = MappingProxyType({})
    #: Resource specs by name.
    resources: ClassVar[Mapping[str, ResourceSpec]] = MappingProxyType({})
    #: Implementation version, recorded in the signature.
    version: ClassVar[str] = "1"
    higher_is_better: ClassVar[bool] = True
    #: What the metric measures, its direction, range, needs, paper and caveats
    #: (:class:`~metrics.core.cards.MetricCard`): the one source for the Metrics tab,
    #: ``manage.py metrics`` and docs/metrics-cards.md. Every registered metric sets it.
    card: ClassVar[MetricCard | None] = None
    #: Names of the columns of :meth:`segment_stats` (instances may override).
    stat_names: tuple[str, ...] = ()
    #: Whether every segment needs a reference (instances may decide by params).
    needs_references: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name, spec in cls.params.items():
            if name != spec.name:
                raise TypeError(f"{cls.__name__}.params key {name!r} ≠ Param.name {spec.name!r}")
            if name in _RESERVED_KEYS or not name.isidentifier():
                raise TypeError(f"{cls.__name__}: {name!r} cannot be a parameter name")
        for name, spec in cls.resources.items():
            if name != spec.name:
                raise TypeError(f"{cls.__name__}.resources key {name!r} ≠ ResourceSpec.name {spec.name!r}")

    def __init__(self, *, resources: Mapping[str, Any] | None = None, **params: Any) -> None:
        """Validate and store parameters; remember resource paths (loaded lazily).

        ``params`` may be strings (coerced by each :class:`Param`); an unknown or
        ill-typed parameter raises :class:`MetricError` naming it and the allowed
        ones. ``resources`` maps resource names to a path (checked to exist and
        be readable now) or to an already-loaded object that has a string
        ``fingerprint`` attribute (recorded in the signature instead of a hash).
        """
        values: dict[str, Any] = {}
        unknown = sorted(set(params) - set(self.params))
        if unknown:
            raise MetricError(
                f"unknown parameter {unknown[0]!r} for metric {self.slug!r}; "
                f"allowed: {', '.join(self.params) or '(none)'}"
            )
        for name, spec in self.params.items():
            values[name] = spec.coerce(params[name]) if name in params else spec.default
        self.param_values: Mapping[str, Any] = MappingProxyType(values)

        self._resource_paths: dict[str, Path] = {}
        self._loaded: dict[str, Any] = {}
        for name, value in (resources or {}).items():
            if name not in self.resources:
                raise MetricError(
                    f"unknown resource {name!r} for metric {self.slug!r}; "
                    f"allowed: {', '.join(self.resources) or '(none)'}"
                )
            if isinstance(value, (str, os.PathLike)):
                p = Path(value)
                if not p.exists() or not os.access(p, os.R_OK):
                    raise ResourceUnavailable(f"resource {name!r}: cannot read {str(value)!r}")
                self._resource_paths[name] = p
            else:
                if not isinstance(getattr(value, "fingerprint", None), str):
                    raise MetricError(
                        f"resource {name!r} must be a path or an object with a string 'fingerprint'"
                    )
                self._loaded[name] = value
        self._check_params()

    def _check_params(self) -> None:
        """Hook: cross-parameter validation (raise :class:`MetricError`)."""

    # ------------------------------------------------------------- resources

    def resource_path(self, name: str) -> Path:
        """The file backing resource ``name`` (given, else the default)."""
        if name in self._resource_paths:
            return self._resource_paths[name]
        spec = self.resources[name]
        p = spec.default_path()
        if p is None or not p.exists():
            where = f" (default {p} is missing)" if p is not None else ""
            raise ResourceUnavailable(
                f"metric {self.slug!r} needs resource {name!r}{where}: {spec.help}; "
                f"give one with --resource {name}=PATH"
            )
        return p

    def resource(self, name: str) -> Any:
        """The loaded resource ``name``, loaded once per metric instance."""
        if name not in self._loaded:
            spec = self.resources[name]
            path = self.resource_path(name)
            try:
                self._loaded[name] = spec.loader(path) if spec.loader else path
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                raise ResourceUnavailable(f"resource {name!r}: cannot load {str(path)!r}: {exc}") from exc
        return self._loaded[name]

    def missing_resources(self) -> list[str]:
        """Names of resources that are neither given nor available by default."""
        missing = []
        for name in self.resources:
            if name in self._loaded:
                continue
            try:
                self.resource_path(name)
            except ResourceUnavailable:
                missing.append(name)
        return missing

    def resource_fingerprint(self, name: str) -> str:
        """Hash recorded in the signature for resource ``name``."""
        if name in self._loaded and name not in self._resource_paths:
            obj = self._loaded[name]
            fp = getattr(obj, "fingerprint", None)
            if isinstance(fp, str):
                return fp
        return file_fingerprint(self.resource_path(name))

    # ------------------------------------------------------------- statistics

    def segment_stats(
        self,
        originals: Sequence[str],
        candidates: Sequence[str],
        references: Sequence[str | None] | None = None,
    ) -> np.ndarray:
        """Per-segment sufficient statistics, a float64 array of shape ``(n, k)``.

        ``originals[i]`` is R, ``candidates[i]`` is P and ``references[i]`` (a
        string or ``None``) an optional human reference paraphrase. Raises
        :class:`MetricError` on ragged input and :class:`MissingReference`
        (naming the 0-based segment) when the metric needs a reference that is
        missing.
        """
        originals = list(originals)
        candidates = list(candidates)
        n = len(candidates)
        if len(originals) != n:
            raise MetricError(f"{len(originals)} originals but {n} candidates")
        refs: list[str | None]
        if references is None:
            refs = [None] * n
        else:
            refs = list(references)
            if len(refs) != n:
                raise MetricError(f"{len(refs)} references but {n} candidates")
        for what, seq in (("original", originals), ("candidate", candidates)):
            for i, s in enumerate(seq):
                if not isinstance(s, str):
                    raise MetricError(f"segment {i}: {what} must be a string, got {type(s).__name__}")
        for i, r in enumerate(refs):
            if r is not None and not isinstance(r, str):
                raise MetricError(f"segment {i}: reference must be a string or None")
        if self.needs_references:
            for i, r in enumerate(refs):
                if r is None or not r.strip():
                    raise MissingReference(
                        f"metric {self.slug!r} needs a reference, but segment {i} has none"
                    )
        k = len(self.stat_names)
        if n == 0:
            return np.zeros((0, k))
        stats = np.asarray(self._segment_stats(originals, candidates, refs), dtype=np.float64)
        if stats.ndim != 2 or stats.shape[0] != n or (k and stats.shape[1] != k):
            raise RuntimeError(f"{type(self).__name__}._segment_stats returned shape {stats.shape}")
        return stats

    @abstractmethod
    def _segment_stats(
        self, originals: list[str], candidates: list[str], references: list[str | None]
    ) -> np.ndarray:
        """Compute the ``(n, k)`` statistics of validated input (n ≥ 1)."""

    @abstractmethod
    def scores_from_sums(self, sums: np.ndarray) -> np.ndarray:
        """Scores of ``m`` summed statistic vectors: ``(m, k) -> (m,)``."""

    def aggregate(self, stats: np.ndarray) -> float:
        """Corpus score: ``scores_from_sums`` of the column sums of ``stats``."""
        stats = np.asarray(stats, dtype=np.float64)
        if stats.ndim != 2 or stats.shape[0] == 0:
            raise MetricError("cannot aggregate an empty batch")
        return float(self.scores_from_sums(stats.sum(axis=0, keepdims=True))[0])

    def sentence_scores(self, stats: np.ndarray) -> np.ndarray:
        """Score of each row alone (metrics whose sentence score differs override)."""
        stats = np.asarray(stats, dtype=np.float64)
        if stats.shape[0] == 0:
            return np.zeros(0)
        return np.asarray(self.scores_from_sums(stats), dtype=np.float64)

    def resample_scores(self, stats: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """Corpus score of each resample: row ``r`` of ``indices`` lists segment rows.

        Vectorised: the resamples become a count matrix ``W`` (how often each
        segment was drawn, :func:`counts_from_indices`) and the summed
        statistics are ``W @ stats``, scored by :meth:`scores_from_resampled_sums`.
        """
        stats = np.asarray(stats, dtype=np.float64)
        return self.scores_from_resampled_sums(_resampled_sums(indices, stats, _exact_in_float32(stats)))

    def scores_from_resampled_sums(self, sums: np.ndarray) -> np.ndarray:
        """Scores of bootstrap-resampled sums (hook: sacrebleu metrics score float32 sums)."""
        return np.asarray(self.scores_from_sums(sums), dtype=np.float64)

    # ------------------------------------------------------------- signature

    def signature_extra(self) -> dict[str, str]:
        """Hook: extra metric-specific signature fields (e.g. sacrebleu's own)."""
        return {}

    def signature(self) -> str:
        """Reproducibility signature (format in the module docstring)."""
        fields = [("metric", self.slug), ("version", str(self.version))]
        fields += [(k, _format_value(v)) for k, v in self.param_values.items()]
        fields += list(self.signature_extra().items())
        fields += [("res", f"{name}={self.resource_fingerprint(name)}") for name in self.resources]
        fields += [("tok", TOKENIZER_VERSION), ("paraeval", PARAEVAL_VERSION)]
        return "|".join(f"{k}:{_escape(v)}" for k, v in fields)

    # ------------------------------------------------------------- convenience

    def score(
        self,
        originals: Sequence[str],
        candidates: Sequence[str],
        references: Sequence[str | None] | None = None,
    ) -> MetricResult:
        """Sentence and corpus scores of a batch (see :meth:`segment_stats`)."""
        stats = self.segment_stats(originals, candidates, references)
        if stats.shape[0] == 0:
            raise MetricError("cannot score an empty batch")
        return MetricResult(
            metric=self.slug,
            signature=self.signature(),
            scores=tuple(float(x) for x in self.sentence_scores(stats)),
            corpus=self.aggregate(stats),
            n=int(stats.shape[0]),
        )

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.param_values.items())
        return f"{type(self).__name__}({args})"


class MeanMetric(Metric):
    """A metric whose corpus score is the mean of its sentence scores.

    Statistics are ``[sentence_score, 1]`` so that the corpus score
    ``Σ score / Σ 1`` stays a function of summed rows (bootstrap-ready).
    Subclasses implement :meth:`_sentence_values`.
    """

    stat_names = ("score", "count")

    @abstractmethod
    def _sentence_values(
        self, originals: list[str], candidates: list[str], references: list[str | None]
    ) -> np.ndarray:
        """Sentence scores of validated input, shape ``(n,)``."""

    def _segment_stats(self, originals, candidates, references):
        values = np.asarray(self._sentence_values(originals, candidates, references), dtype=np.float64)
        return np.column_stack([values, np.ones_like(values)])

    def scores_from_sums(self, sums: np.ndarray) -> np.ndarray:
        """Mean: ``Σ score / Σ count``."""
        sums = np.asarray(sums, dtype=np.float64)
        return sums[:, 0] / sums[:, 1]


# --------------------------------------------------------------------------- signature parsing


def parse_signature(signature: str) -> dict[str, Any]:
    """Read a signature back into a dict.

    Every field becomes ``key -> value`` (strings, unescaped) except ``res``,
    which becomes ``{"res": {name: hash, ...}}`` (empty when the metric has no
    resources). Raises :class:`ValueError` on text that is not a signature.
    """
    out: dict[str, Any] = {"res": {}}
    for part in signature.split("|"):
        key, sep, value = part.partition(":")
        if not sep or not key:
            raise ValueError(f"not a paraeval signature field: {part!r}")
        value = _unescape(value)
        if key == "res":
            name, eq, digest = value.partition("=")
            if not eq:
                raise ValueError(f"bad resource field: {part!r}")
            out["res"][name] = digest
        elif key in out:
            raise ValueError(f"duplicate signature field {key!r}")
        else:
            out[key] = value
    if "metric" not in out:
        raise ValueError("signature has no 'metric' field")
    return out


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


class _SacreChoice:
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


def iter_resample_indices(
    n: int, n_resamples: int, *, seed: int | None = DEFAULT_SEED, max_cells: int = 4_000_000
):
    """:func:`resample_indices` in row blocks of at most ``max_cells`` indices.

    The blocks stacked are exactly the full matrix (tested) — without holding
    ``n_resamples × n`` integers at once (800 MB for 1,000 × 100,000); drawn
    by :class:`_SacreChoice`.
    """
    if n < 1 or n_resamples < 1:
        raise ValueError("need at least one segment and one resample")
    draw = _SacreChoice(n, seed)
    rows = max(1, max_cells // n)
    done = 0
    while done < n_resamples:
        c = min(rows, n_resamples - done)
        yield draw.take(c * n).reshape(c, n)
        done += c


def _resampled_sum_matrix(n: int, n_resamples: int, stats: np.ndarray, seed: int | None) -> np.ndarray:
    """``W @ stats`` for sacrebleu's resamples (``W``: resample × segment counts), ``(R, k)`` float64.

    Fused per block of ≈ 80,000 indices (a few rows): draw the block
    (:class:`_SacreChoice`), count it with one ``bincount`` (each row offset by
    ``r · n``), multiply — so the counts stay in the CPU cache instead of
    streaming an ``R × n`` matrix through memory. float32 when exact
    (:func:`_exact_in_float32`), as sacrebleu sums its statistics.
    """
    exact32 = _exact_in_float32(stats)
    dtype = np.float32 if exact32 else np.float64
    mat = stats.astype(dtype, copy=False)
    out = np.empty((n_resamples, stats.shape[1]), dtype=dtype)
    draw = _SacreChoice(n, seed)
    rows = max(1, 80_000 // n)
    offsets = np.repeat(np.arange(rows, dtype=np.int64) * n, n)
    with _one_blas_thread():
        for start in range(0, n_resamples, rows):
            c = min(rows, n_resamples - start)
            idx = draw.take(c * n)
            idx = idx + offsets[: c * n]
            counts = np.bincount(idx, minlength=c * n).reshape(c, n).astype(dtype)
            np.matmul(counts, mat, out=out[start : start + c])
    return out.astype(np.float64)


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


def _resampled(metric: Metric, stats_list: list[np.ndarray], n_resamples: int, seed: int | None) -> list[np.ndarray]:
    """Resampled corpus scores of several systems on the same resamples.

    The systems' statistics are stacked side by side, so each block of
    resamples costs one count matrix and one matrix product for all of them.
    """
    n = stats_list[0].shape[0]
    widths = [s.shape[1] for s in stats_list]
    cuts = np.cumsum(widths)[:-1]
    stacked = np.hstack([np.asarray(s, dtype=np.float64) for s in stats_list])
    sums = _resampled_sum_matrix(n, n_resamples, stacked, seed)
    return [metric.scores_from_resampled_sums(part) for part in np.split(sums, cuts, axis=1)]


def bootstrap_ci(
    metric: Metric,
    stats: np.ndarray,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = DEFAULT_SEED,
) -> BootstrapResult:
    """Percentile bootstrap confidence interval of a corpus score (Efron & Tibshirani 1993).

    Draws ``n_resamples`` resamples of the ``n`` segments with replacement
    (:func:`resample_indices`), scores each by re-summing ``stats`` rows, and
    returns the ``(1 − confidence)/2`` and ``(1 + confidence)/2`` quantiles.
    ``statistic`` is the corpus score of the full batch; ``standard_error`` is
    the standard deviation of the resampled scores.
    """
    stats = np.asarray(stats, dtype=np.float64)
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    if stats.ndim != 2 or stats.shape[0] == 0:
        raise MetricError("cannot bootstrap an empty batch")
    (scores,) = _resampled(metric, [stats], n_resamples, seed)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(scores, [alpha, 1 - alpha])
    return BootstrapResult(
        statistic=metric.aggregate(stats),
        ci_low=float(low),
        ci_high=float(high),
        n=int(stats.shape[0]),
        n_resamples=n_resamples,
        confidence=confidence,
        standard_error=float(np.std(scores, ddof=1)) if n_resamples > 1 else math.nan,
    )


def paired_bootstrap(
    metric: Metric,
    stats_a: np.ndarray,
    stats_b: np.ndarray,
    *,
    n_resamples: int = 1000,
    seed: int | None = DEFAULT_SEED,
) -> PairedResult:
    """Paired bootstrap resampling test of system B against baseline A (Koehn 2004).

    Exactly sacrebleu's ``paired_bs`` (``sacrebleu/significance.py``, after
    Moses' ``bootstrap-hypothesis-difference-significance.pl``): with the same
    resample indices for both systems (:func:`resample_indices`), let
    ``d_r = |score_B(r) − score_A(r)|`` for each resample r and
    ``δ = |score_B − score_A|`` on the full batch. Under the null hypothesis the
    resampled differences are centred: ``s_r = d_r − mean(d)``, and

        p = (#{r : s_r > δ} + 1) / (n_resamples + 1).

    ``delta`` is the signed ``statistic_b − statistic_a``.
    """
    a = np.asarray(stats_a, dtype=np.float64)
    b = np.asarray(stats_b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired systems need statistics of one shape, got {a.shape} and {b.shape}")
    if a.ndim != 2 or a.shape[0] == 0:
        raise MetricError("cannot test an empty batch")
    res = pairwise_tests(metric, [a, b], test="bs", n_resamples=n_resamples, seed=seed)
    return res.pair(0, 1)


def paired_approximate_randomization(
    metric: Metric,
    stats_a: np.ndarray,
    stats_b: np.ndarray,
    *,
    n_trials: int = 10_000,
    seed: int | None = DEFAULT_SEED,
) -> PairedResult:
    """Paired approximate randomization test of B against baseline A (Noreen 1989; Riezler & Maxwell 2005).

    Exactly sacrebleu's ``paired_ar`` (``_paired_ar_test``, after MultEval's
    ``StratifiedApproximateRandomizationTest``): each trial swaps the two
    systems' statistics in a random half of the segments — the mask is
    ``default_rng(seed).integers(2, size=(n_trials, n), dtype=bool)``, drawn
    here in blocks of whole 32-row multiples, which continue one stream — and

        p = (#{t : |score(shuffled A_t) − score(shuffled B_t)| > δ} + 1) / (n_trials + 1),

    with δ = |score_B − score_A| on the full batch. Scores are computed from
    exact integer sums, as sacrebleu's are. ``n_resamples`` of the result is
    the number of trials.
    """
    a = np.asarray(stats_a, dtype=np.float64)
    b = np.asarray(stats_b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired systems need statistics of one shape, got {a.shape} and {b.shape}")
    if a.ndim != 2 or a.shape[0] == 0:
        raise MetricError("cannot test an empty batch")
    return pairwise_tests(metric, [a, b], test="ar", n_resamples=n_trials, seed=seed).pair(0, 1)


@dataclass(frozen=True)
class PairwiseResult:
    """Every paired test among the systems of one metric's leaderboard.

    ``statistics[i]`` is system i's corpus score; ``pvalues[i][j]`` the p-value
    of the paired test of systems i and j (symmetric, 1.0 on the diagonal);
    ``test`` is ``"bs"`` (paired bootstrap) or ``"ar"`` (approximate
    randomization); ``n_resamples`` the resamples or trials.
    """

    statistics: tuple[float, ...]
    pvalues: tuple[tuple[float, ...], ...]
    test: str
    n: int
    n_resamples: int
    seed: int | None = DEFAULT_SEED

    def pair(self, i: int, j: int) -> PairedResult:
        """The comparison of system ``j`` against baseline ``i`` as a :class:`PairedResult`."""
        a, b = self.statistics[i], self.statistics[j]
        return PairedResult(
            statistic_a=a, statistic_b=b, delta=b - a, pvalue=self.pvalues[i][j],
            n=self.n, n_resamples=self.n_resamples, seed=self.seed,
        )


def _ar_masks(n: int, n_trials: int, seed: int | None, max_cells: int = 4_000_000):
    """sacrebleu's AR swap mask in row blocks (bool draws continue one stream over
    blocks whose size is a multiple of 32 cells; 32-row blocks always are)."""
    rng = np.random.default_rng(seed)
    rows = max(32, (max_cells // max(n, 1)) // 32 * 32)
    done = 0
    while done < n_trials:
        c = min(rows, n_trials - done)
        yield rng.integers(2, size=(c, n), dtype=bool)
        done += c


def pairwise_tests(
    metric: Metric,
    stats: Sequence[np.ndarray] | np.ndarray,
    *,
    test: str = "bs",
    n_resamples: int | None = None,
    seed: int | None = DEFAULT_SEED,
) -> PairwiseResult:
    """Paired tests of every pair of systems, vectorised over resamples and systems.

    ``stats`` holds one ``(n, k)`` statistics matrix per system, rows aligned
    (segment i of every system is the same original) — as stored by a metric
    run. All pairs share one set of resamples (``test="bs"``, default 1,000,
    :func:`paired_bootstrap`'s definition) or swap masks (``test="ar"``,
    default 10,000 trials, :func:`paired_approximate_randomization`), drawn
    from ``seed`` as sacrebleu draws them for every system against its
    baseline, so each p-value equals sacrebleu's for that pair.

    Cost: per block of resamples one count (or mask) matrix and one matrix
    product with all systems' statistics side by side; every system is scored
    once per resample for the bootstrap (pairs then only compare), and each
    pair's two shuffled systems for AR (their sums come from the same product:
    shuffled A = mask·A + (Σ B − mask·B)).
    """
    if test not in ("bs", "ar"):
        raise ValueError(f"test must be 'bs' or 'ar', got {test!r}")
    mats = [np.asarray(s, dtype=np.float64) for s in stats]
    if len(mats) < 2:
        raise ValueError("paired tests need at least two systems")
    shape = mats[0].shape
    if any(m.shape != shape for m in mats) or len(shape) != 2:
        raise ValueError("every system needs a statistics matrix of one shape (n segments × k)")
    n, k = shape
    if n == 0:
        raise MetricError("cannot test an empty batch")
    m_total = n_resamples if n_resamples is not None else (1000 if test == "bs" else 10_000)
    if m_total < 1:
        raise ValueError("need at least one resample")
    n_sys = len(mats)
    scores = np.array([metric.aggregate(x) for x in mats])
    stacked = np.hstack(mats)  # n × (systems · k)
    pairs = [(i, j) for i in range(n_sys) for j in range(i + 1, n_sys)]
    counts = np.zeros(len(pairs), dtype=np.int64)
    if test == "bs":
        sums = _resampled_sum_matrix(n, m_total, stacked, seed)
        boot = np.column_stack(
            [metric.scores_from_resampled_sums(part) for part in np.split(sums, n_sys, axis=1)]
        )  # resamples × systems
        for p, (i, j) in enumerate(pairs):
            diffs = np.abs(boot[:, j] - boot[:, i])
            counts[p] = int(np.sum((diffs - diffs.mean()) > abs(scores[j] - scores[i])))
    else:
        integer = bool(np.all(stacked == np.round(stacked)))
        totals = stacked.sum(axis=0)
        exact32 = _exact_in_float32(stacked)
        dtype = np.float32 if exact32 else np.float64
        for mask in _ar_masks(n, m_total, seed):
            with _one_blas_thread():
                sel = (mask.astype(dtype) @ stacked.astype(dtype, copy=False)).astype(np.float64)  # mask · S_s
            rows_a, rows_b = [], []
            for i, j in pairs:
                si, sj = sel[:, i * k : (i + 1) * k], sel[:, j * k : (j + 1) * k]
                rows_a.append(si + (totals[j * k : (j + 1) * k] - sj))
                rows_b.append(sj + (totals[i * k : (i + 1) * k] - si))
            both = np.vstack(rows_a + rows_b)
            if integer:
                both = np.rint(both).astype(np.int64)
            sc = np.asarray(metric.scores_from_sums(both), dtype=np.float64).reshape(2, len(pairs), -1)
            diffs = np.abs(sc[0] - sc[1])
            counts += (diffs > np.abs(scores[[j for _, j in pairs]] - scores[[i for i, _ in pairs]])[:, None]).sum(axis=1)
    pv = np.ones((n_sys, n_sys))
    for p, (i, j) in enumerate(pairs):
        pv[i, j] = pv[j, i] = (counts[p] + 1) / (m_total + 1)
    return PairwiseResult(
        statistics=tuple(float(x) for x in scores),
        pvalues=tuple(tuple(float(x) for x in row) for row in pv),
        test=test,
        n=int(n),
        n_resamples=int(m_total),
        seed=seed,
    )
