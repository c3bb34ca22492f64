"""The metric base classes: :class:`Metric` (sufficient statistics) and :class:`MeanMetric`."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from metrics.core.cards import MetricCard
from metrics.core.text import TOKENIZER_VERSION

from .params import (
    PARAEVAL_VERSION,
    RESERVED_KEYS,
    MetricError,
    MissingReference,
    Param,
    ResourceUnavailable,
    format_value,
)
from .resampling import exact_in_float32, resampled_sums
from .resources import ResourceSpec, file_fingerprint
from .results import MetricResult
from .signature import escape

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
            if name in RESERVED_KEYS or not name.isidentifier():
                raise TypeError(f"{cls.__name__}: {name!r} cannot be a parameter name")
        for name, resource in cls.resources.items():
            if name != resource.name:
                raise TypeError(f"{cls.__name__}.resources key {name!r} ≠ ResourceSpec.name {resource.name!r}")

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
                    raise MetricError(f"resource {name!r} must be a path or an object with a string 'fingerprint'")
                self._loaded[name] = value
        self._check_params()

    def _check_params(self) -> None:  # noqa: B027 - an optional hook: empty by default, not abstract
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
                    raise MissingReference(f"metric {self.slug!r} needs a reference, but segment {i} has none")
        k = len(self.stat_names)
        if n == 0:
            return np.zeros((0, k))
        stats = np.asarray(self._segment_stats(originals, candidates, refs), dtype=np.float64)
        if stats.ndim != 2 or stats.shape[0] != n or (k and stats.shape[1] != k):
            raise RuntimeError(f"{type(self).__name__}._segment_stats returned shape {stats.shape}")
        return stats

    @abstractmethod
    def _segment_stats(self, originals: list[str], candidates: list[str], references: list[str | None]) -> np.ndarray:
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
        return self.scores_from_resampled_sums(resampled_sums(indices, stats, exact_in_float32(stats)))

    def scores_from_resampled_sums(self, sums: np.ndarray) -> np.ndarray:
        """Scores of bootstrap-resampled sums (hook: sacrebleu metrics score float32 sums)."""
        return np.asarray(self.scores_from_sums(sums), dtype=np.float64)

    # ------------------------------------------------------------- signature

    def signature_extra(self) -> dict[str, str]:
        """Hook: extra metric-specific signature fields (e.g. sacrebleu's own)."""
        return {}

    def signature_params(self) -> Mapping[str, Any]:
        """Hook: the parameters as the signature shows them (all, verbatim, by default).

        A metric whose parameter holds a long text (an LLM judge's prompt template
        or rubric) shows its hash instead, so that the signature stays one line.
        """
        return self.param_values

    def signature(self) -> str:
        """Reproducibility signature (format in the module docstring)."""
        fields = [("metric", self.slug), ("version", str(self.version))]
        fields += [(k, format_value(v)) for k, v in self.signature_params().items()]
        fields += list(self.signature_extra().items())
        fields += [("res", f"{name}={self.resource_fingerprint(name)}") for name in self.resources]
        fields += [("tok", TOKENIZER_VERSION), ("paraeval", PARAEVAL_VERSION)]
        return "|".join(f"{k}:{escape(v)}" for k, v in fields)

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

    stat_names: tuple[str, ...] = ("score", "count")

    @abstractmethod
    def _sentence_values(self, originals: list[str], candidates: list[str], references: list[str | None]) -> np.ndarray:
        """Sentence scores of validated input, shape ``(n,)``."""

    def _segment_stats(self, originals, candidates, references):
        values = np.asarray(self._sentence_values(originals, candidates, references), dtype=np.float64)
        return np.column_stack([values, np.ones_like(values)])

    def scores_from_sums(self, sums: np.ndarray) -> np.ndarray:
        """Mean: ``Σ score / Σ count``."""
        sums = np.asarray(sums, dtype=np.float64)
        return sums[:, 0] / sums[:, 1]
