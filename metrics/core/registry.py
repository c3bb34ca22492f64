"""Registry of automatic metrics: slug → :class:`~metrics.core.base.Metric` subclass.

Importing this module registers every built-in metric: it imports each module of
:data:`BUILTIN_MODULES` in turn. A module that does not exist (yet) is skipped;
any other import error propagates, so a broken metric never disappears silently.
(When the import comes from a built-in metric module itself — e.g. ``import
metrics.core.sacre.bleu`` first — loading the others waits until the first
:func:`get_metric`/:func:`available_metrics` call, so that modules importing
each other never meet half-initialised.)

Usage::

    from metrics.core.registry import create_metric
    metric = create_metric("bleu", {"against": "reference"})
    result = metric.score(originals, candidates, references)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from typing import Any

from metrics.core.base.metric import Metric

__all__ = [
    "BUILTIN_MODULES",
    "UnknownMetric",
    "register",
    "get_metric",
    "available_metrics",
    "create_metric",
]

_REGISTRY: dict[str, type[Metric]] = {}

#: Modules whose import registers the built-in metrics (missing ones are skipped).
BUILTIN_MODULES: tuple[str, ...] = (
    "metrics.core.sacre.bleu",
    "metrics.core.sacre.chrf",
    "metrics.core.sacre.ter",
    "metrics.core.pinc",
    "metrics.core.ibleu",
    "metrics.core.target_f1",
    "metrics.core.weem4pg",
    "metrics.core.paraphrase_bleu.metric",
    "metrics.core.pivot.metric",
    "metrics.core.lm.fluency",
    "metrics.core.pem.metric",
    "metrics.core.semantic.metrics",
    "metrics.core.llm_judge.metric",
)


class UnknownMetric(KeyError):
    """No metric is registered under the slug; the message lists the known ones."""

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return str(self.args[0]) if self.args else "unknown metric"


def register(cls: type[Metric]) -> type[Metric]:
    """Class decorator: register a :class:`Metric` subclass under its ``slug``.

    Raises :class:`TypeError` for a class without a slug or description, and
    :class:`ValueError` when another class already holds the slug (re-importing
    the same class is fine).
    """
    if not (isinstance(cls, type) and issubclass(cls, Metric)):
        raise TypeError(f"{cls!r} is not a Metric subclass")
    if not cls.slug or not cls.description:
        raise TypeError(f"{cls.__name__} needs a slug and a one-line description")
    old = _REGISTRY.get(cls.slug)
    if (
        old is not None
        and old is not cls
        and (old.__module__, old.__qualname__)
        != (
            cls.__module__,
            cls.__qualname__,
        )
    ):
        raise ValueError(f"metric slug {cls.slug!r} is already registered by {old.__module__}.{old.__qualname__}")
    _REGISTRY[cls.slug] = cls
    return cls


def unregister(slug: str) -> None:
    """Remove a slug (for tests that register throw-away metrics)."""
    _REGISTRY.pop(slug, None)


def get_metric(slug: str) -> type[Metric]:
    """The class registered under ``slug``, else :class:`UnknownMetric`."""
    _ensure_builtins()
    try:
        return _REGISTRY[slug]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "(none)"
        raise UnknownMetric(f"unknown metric {slug!r}; known metrics: {known}") from None


def available_metrics() -> list[type[Metric]]:
    """Every registered metric class, sorted by slug."""
    _ensure_builtins()
    return [_REGISTRY[s] for s in sorted(_REGISTRY)]


def create_metric(
    slug: str,
    params: Mapping[str, Any] | None = None,
    resources: Mapping[str, Any] | None = None,
) -> Metric:
    """Instantiate the metric ``slug`` with ``params`` (strings are coerced) and ``resources``.

    Raises :class:`UnknownMetric` for an unknown slug and
    :class:`~metrics.core.base.MetricError` for a bad parameter or resource.
    """
    return get_metric(slug)(resources=dict(resources or {}), **dict(params or {}))


def import_builtins() -> None:
    for name in BUILTIN_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            # Only "this module does not exist yet" is tolerated; a module that
            # exists but fails to import (even on a missing dependency) raises.
            if exc.name != name:
                raise


_builtins_loaded = False


def _ensure_builtins() -> None:
    global _builtins_loaded
    if not _builtins_loaded:
        _builtins_loaded = True  # first: a builtin importing the registry must not recurse
        try:
            import_builtins()
        except BaseException:
            _builtins_loaded = False
            raise


def _a_builtin_is_initialising() -> bool:
    # True when this import was triggered by a built-in metric module's own
    # ``from metrics.core.registry import register``: importing the other
    # built-ins now could meet that module half-initialised (ibleu imports
    # sacre), so loading waits for the first lookup instead.
    for name in BUILTIN_MODULES:
        mod = sys.modules.get(name)
        if mod is not None and getattr(getattr(mod, "__spec__", None), "_initializing", False):
            return True
    return False


if not _a_builtin_is_initialising():
    _ensure_builtins()
