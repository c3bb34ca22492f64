"""Versions, errors and metric parameters (:class:`Param`): what every metric declares."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: Recorded in every signature; bump on any change that can move a score.
PARAEVAL_VERSION = "0.1.0"


#: Repository root: relative default resource paths are resolved against it.
REPO_ROOT = Path(__file__).resolve().parents[3]


#: Default seed of bootstrap resampling: sacrebleu's default (``SACREBLEU_SEED``),
#: so that the same call reproduces sacrebleu's resamples.
DEFAULT_SEED = 12345


# Signature keys that a parameter may not shadow.
RESERVED_KEYS = frozenset({"metric", "version", "res", "tok", "paraeval"})
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
            raise MetricError(f"parameter {self.name!r} must be {self.type.__name__}, got {value!r}") from None
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


def format_value(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)
