"""A report's settings: their defaults, bounds and :func:`report_settings_clean`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, SupportsFloat, SupportsIndex

from django.core.exceptions import ValidationError

from annotation.judging.defaults import PEM_REPORT_TARGET, PEM_TABLE2_SUBSET, default_criteria
from annotation.judging.protocols.base import DEFAULT_PROTOCOL
from annotation.judging.protocols.registry import protocol_get
from annotation.judging.scales import scale_unit

#: The settings of PEM's design; :func:`report_settings_defaults` adapts the target and
#: the subset to any other design.
DEFAULT_SETTINGS: dict[str, Any] = {
    "criterion": PEM_REPORT_TARGET,
    "normalize": None,
    "include_controls_in_mean": True,
    "confidence_level": 0.95,
    "significance_level": 0.05,
    "seed": 0,
    "n_boot": None,
    "subset_min": dict(PEM_TABLE2_SUBSET),
    "include_metrics": True,
    "min_shared": 30,
}
MIN_SHARED_MIN, MIN_SHARED_MAX = 4, 100_000
N_BOOT_MIN, N_BOOT_MAX = 50, 20_000


def _as_bool(value: object, name: str, errors: dict) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in {"true", "1", "yes", "on", "false", "0", "no", "off"}:
        return value.lower() in {"true", "1", "yes", "on"}
    errors.setdefault(name, []).append("must be true or false")
    return False


def _as_number(
    value: object,
    name: str,
    errors: dict,
    *,
    low: float,
    high: float,
    integer: bool = False,
    low_open: bool = False,
    high_open: bool = False,
):
    try:
        if isinstance(value, bool) or not isinstance(value, (str, bytes, SupportsFloat, SupportsIndex)):
            raise TypeError
        number = float(value)
        if integer and (not math.isfinite(number) or number != int(number)):
            raise ValueError
    except (TypeError, ValueError):
        errors.setdefault(name, []).append("must be a whole number" if integer else "must be a number")
        return None
    if (
        not math.isfinite(number)
        or number < low
        or number > high
        or (low_open and number == low)
        or (high_open and number == high)
    ):
        lo = "(" if low_open else "["
        hi = ")" if high_open else "]"
        errors.setdefault(name, []).append(f"must be in {lo}{low:g}, {high:g}{hi}")
        return None
    return int(number) if integer else number


def report_settings_offered(protocol: str | None) -> tuple[str, ...]:
    """The report settings that mean something for a study judged with ``protocol`` (its
    unit's ``report_settings``; the absolute report's every setting when it names none)."""
    unit = protocol_get(protocol or DEFAULT_PROTOCOL)
    return unit.report_settings if unit.report_settings is not None else tuple(DEFAULT_SETTINGS)


def report_settings_defaults(criteria: list[dict]) -> dict[str, Any]:
    """:data:`DEFAULT_SETTINGS` fitted to a design: the target is PEM's when the design
    has it, else its first criterion; the Table 2 subset is PEM's only when the design has
    every criterion of it (else none)."""
    slugs = [c["slug"] for c in criteria]
    out = dict(DEFAULT_SETTINGS)
    if out["criterion"] not in slugs:
        out["criterion"] = slugs[0]
    subset = out["subset_min"] or {}
    out["subset_min"] = dict(subset) if subset and all(c in slugs for c in subset) else None
    return out


def subset_criteria(criteria: list[dict]) -> list[dict]:
    """The criteria a Table 2 subset may use: ordered scales (a mean of named categories means nothing)."""
    return [c for c in criteria if scale_unit(c["scale"]).ordered]


def _criterion_bounds(c: Mapping) -> tuple[float, float]:
    unit = scale_unit(c["scale"])
    return unit.low, unit.high


def report_settings_clean(raw: Mapping[str, Any] | None, *, criteria: list[dict] | None = None) -> dict[str, Any]:
    """Fill in defaults and check a report's settings; ``ValidationError`` per field otherwise.

    Keys (all optional): ``criterion`` (target criterion, default ``overall``),
    ``normalize`` (None or ``"z"``: per-judge z-scores), ``include_controls_in_mean``
    (controls at their expected scores in the human reference), ``confidence_level``
    (0.5–0.999), ``significance_level`` (0–0.5], ``seed``, ``n_boot`` (None = automatic:
    1000 resamples, 500 above 50,000 items; else 50–20,000), ``subset_min`` (PEM Table
    2's subset, e.g. PEM's mean adequacy ≥ 4 and fluency ≥ 4; empty for none),
    ``include_metrics`` (correlate the study's metric runs), ``min_shared`` (items two
    judges must share for their pair to enter the inter-judge summary, and items every
    judge must have rated for an ICC; default 30, at least 4).
    ``include_metrics`` (correlate the study's metric runs).

    ``criteria`` are the study's criteria with their scales (PEM's four on 1–5 when not
    given): the target must be one of them (default ``overall``, else the study's first
    criterion), and the default subset keeps only the criteria the study has.
    """
    raw = dict(raw or {})
    criteria = criteria if criteria is not None else default_criteria()
    slugs = [c["slug"] for c in criteria]
    bounds = {c["slug"]: _criterion_bounds(c) for c in criteria}
    ordered = {c["slug"] for c in subset_criteria(criteria)}
    errors: dict[str, list[str]] = {}
    unknown = sorted(set(raw) - set(DEFAULT_SETTINGS))
    if unknown:
        errors["__all__"] = [f"unknown report setting(s): {', '.join(unknown)}"]
    defaults = report_settings_defaults(criteria)
    s = {**defaults, **{k: v for k, v in raw.items() if k in DEFAULT_SETTINGS}}
    out: dict[str, Any] = {}
    out["criterion"] = s["criterion"]
    if s["criterion"] not in slugs:
        errors.setdefault("criterion", []).append(f"must be one of {', '.join(slugs)}")
    normalize = s["normalize"]
    if normalize in (None, "", "none", "raw"):
        out["normalize"] = None
    elif normalize == "z":
        out["normalize"] = "z"
    else:
        errors.setdefault("normalize", []).append("must be empty (raw scores) or 'z' (per-judge z-scores)")
    out["include_controls_in_mean"] = _as_bool(s["include_controls_in_mean"], "include_controls_in_mean", errors)
    out["include_metrics"] = _as_bool(s["include_metrics"], "include_metrics", errors)
    out["confidence_level"] = _as_number(s["confidence_level"], "confidence_level", errors, low=0.5, high=0.999)
    out["significance_level"] = _as_number(
        s["significance_level"], "significance_level", errors, low=0.0, high=0.5, low_open=True
    )
    out["seed"] = _as_number(s["seed"], "seed", errors, low=0, high=2**32 - 1, integer=True)
    if s["n_boot"] in (None, ""):
        out["n_boot"] = None
    else:
        out["n_boot"] = _as_number(s["n_boot"], "n_boot", errors, low=N_BOOT_MIN, high=N_BOOT_MAX, integer=True)
    out["min_shared"] = _as_number(
        s["min_shared"], "min_shared", errors, low=MIN_SHARED_MIN, high=MIN_SHARED_MAX, integer=True
    )
    subset = s["subset_min"]
    if subset in (None, "", {}):
        out["subset_min"] = None
    elif not isinstance(subset, Mapping):
        errors.setdefault("subset_min", []).append(
            f'must map criteria to minimum mean scores, e.g. {{"{slugs[0]}": 4}}'
        )
    else:
        clean = {}
        for crit, value in subset.items():
            if crit not in slugs:
                errors.setdefault("subset_min", []).append(f"unknown criterion {crit!r}")
                continue
            if crit not in ordered:
                errors.setdefault("subset_min", []).append(
                    f"{crit!r} is categorical: named categories have no mean to set a minimum on"
                )
                continue
            if value in (None, ""):
                continue
            low, high = bounds[crit]
            number = _as_number(value, "subset_min", errors, low=low, high=high)
            if number is not None:
                clean[str(crit)] = int(number) if float(number).is_integer() else number
        out["subset_min"] = clean or None
    if errors:
        raise ValidationError(errors)
    return out
