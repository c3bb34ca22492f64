"""Criteria and their scales, as data.

A judging design holds 1–8 criteria; each is a dict ``{"slug", "name", "help",
"scale"}`` whose ``scale`` is one of

* ``{"type": "points", "min": 1, "max": 5, "labels": [...]}`` — a labelled
  k-point scale, 2 ≤ k ≤ 11 whole numbers from ``min`` to ``max`` (one label per
  point). Ordinal data: Krippendorff's α at the ordinal level, weighted κ.
* ``{"type": "slider", "min": 0, "max": 100, "anchors": {"low", "mid", "high"}}`` —
  a continuous 0–100 slider as WMT's direct assessment (Graham et al. 2013, 2017):
  end anchors and an optional mid anchor. Interval data: α at the interval level,
  ICC and Pearson; per-judge z-scores are available for it.
* ``{"type": "categorical", "categories": ["yes", "no", ...]}`` — named values,
  stored as their 0-based position. Nominal data: α at the nominal level, Fleiss'
  and Cohen's κ.

PEM's four criteria on five points (Liu, Dahlmeier & Ng 2010, §5.1) are the default
(:mod:`.defaults`). Designs saved before scales existed held ``labels`` directly on
the criterion; :func:`criteria_normalise` still reads that shape, so old clients of
the API keep working.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeGuard

from metrics.core.controls import CONTROL_KINDS

SCALE_TYPES = ("points", "slider", "categorical")
MIN_CRITERIA, MAX_CRITERIA = 1, 8
MIN_POINTS, MAX_POINTS = 2, 11
MIN_CATEGORIES, MAX_CATEGORIES = 2, 11
SLIDER_MIN, SLIDER_MAX = 0, 100
POINTS_RANGE = (-10, 100)  # a k-point scale's min and max must lie in here
MAX_LABEL_CHARS, MAX_NAME_CHARS, MAX_HELP_CHARS = 60, 60, 600
SLUG_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")

#: Krippendorff's level of measurement per scale type.
ALPHA_LEVEL = {"points": "ordinal", "slider": "interval", "categorical": "nominal"}


def _is_int(v: object) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def criteria_normalise(criteria: object) -> object:
    """Return ``criteria`` with legacy criteria (``labels`` and no ``scale``) turned
    into 1..k point scales; anything else is returned unchanged for :func:`criteria_errors`."""
    if not isinstance(criteria, list):
        return criteria
    out = []
    for c in criteria:
        if isinstance(c, dict) and "scale" not in c and isinstance(c.get("labels"), list):
            c = {k: v for k, v in c.items() if k != "labels"} | {
                "scale": {"type": "points", "min": 1, "max": len(c["labels"]), "labels": list(c["labels"])}
            }
        out.append(c)
    return out


def scale_errors(scale: object) -> list[str]:
    """What is wrong with one scale (empty when it is valid)."""
    if not isinstance(scale, dict) or scale.get("type") not in SCALE_TYPES:
        return [f"the scale needs a type: one of {', '.join(SCALE_TYPES)}"]
    kind = scale["type"]
    errs: list[str] = []
    if kind == "points":
        lo, hi, labels = scale.get("min"), scale.get("max"), scale.get("labels")
        if not (_is_int(lo) and _is_int(hi)) or not POINTS_RANGE[0] <= lo < hi <= POINTS_RANGE[1]:
            return [f"a point scale needs whole numbers min < max between {POINTS_RANGE[0]} and {POINTS_RANGE[1]}"]
        k = hi - lo + 1
        if not MIN_POINTS <= k <= MAX_POINTS:
            errs.append(f"a point scale has {MIN_POINTS} to {MAX_POINTS} points (this one has {k})")
        if (
            not isinstance(labels, list)
            or len(labels) != k
            or not all(isinstance(lbl, str) and lbl.strip() and len(lbl) <= MAX_LABEL_CHARS for lbl in labels)
        ):
            errs.append(
                f"a point scale needs one non-empty label (at most {MAX_LABEL_CHARS} characters) per point: {k} labels"
            )
    elif kind == "slider":
        if scale.get("min", SLIDER_MIN) != SLIDER_MIN or scale.get("max", SLIDER_MAX) != SLIDER_MAX:
            errs.append(f"a slider runs from {SLIDER_MIN} to {SLIDER_MAX}")
        anchors = scale.get("anchors")
        if (
            not isinstance(anchors, dict)
            or set(anchors) - {"low", "mid", "high"}
            or not all(isinstance(anchors.get(a), str) and anchors[a].strip() for a in ("low", "high"))
            or not all(isinstance(v, str) and len(v) <= MAX_LABEL_CHARS for v in anchors.values())
        ):
            errs.append(
                "a slider needs anchors: 'low' and 'high' texts, and optionally 'mid' "
                f"(at most {MAX_LABEL_CHARS} characters each)"
            )
    else:
        cats = scale.get("categories")
        if (
            not isinstance(cats, list)
            or not MIN_CATEGORIES <= len(cats) <= MAX_CATEGORIES
            or not all(isinstance(x, str) and x.strip() and len(x) <= MAX_LABEL_CHARS for x in cats)
        ):
            errs.append(f"a categorical scale needs {MIN_CATEGORIES} to {MAX_CATEGORIES} non-empty category names")
        elif len({x.strip().casefold() for x in cats}) != len(cats):
            errs.append("category names must differ")
    extra = set(scale) - {"type", "min", "max", "labels", "anchors", "categories"}
    if extra:
        errs.append(f"unknown scale field(s): {', '.join(sorted(map(str, extra)))}")
    return errs


def criteria_errors(criteria: object) -> list[str]:
    """What is wrong with a design's criteria list (empty when it is valid)."""
    if not isinstance(criteria, list) or not MIN_CRITERIA <= len(criteria) <= MAX_CRITERIA:
        return [f"a design has {MIN_CRITERIA} to {MAX_CRITERIA} criteria"]
    errs: list[str] = []
    seen: set[str] = set()
    for i, c in enumerate(criteria, 1):
        if not isinstance(c, dict):
            errs.append(f"criterion {i} must be an object with slug, name, help and scale")
            continue
        slug = c.get("slug")
        label = f"criterion '{slug}'" if isinstance(slug, str) else f"criterion {i}"
        if not isinstance(slug, str) or not SLUG_RE.match(slug):
            errs.append(f"{label} needs a slug of lower-case letters, digits and '_' (starting with a letter)")
        elif slug in seen:
            errs.append(f"{label} appears twice")
        else:
            seen.add(slug)
        if not isinstance(c.get("name"), str) or not c["name"].strip() or len(c["name"]) > MAX_NAME_CHARS:
            errs.append(f"{label} needs a name (at most {MAX_NAME_CHARS} characters)")
        if not isinstance(c.get("help", ""), str) or len(c.get("help", "")) > MAX_HELP_CHARS:
            errs.append(f"{label} help text must be text (at most {MAX_HELP_CHARS} characters)")
        extra = set(c) - {"slug", "name", "help", "scale"}
        if extra:
            errs.append(f"{label} has unknown field(s): {', '.join(sorted(map(str, extra)))}")
        errs.extend(f"{label}: {e}" for e in scale_errors(c.get("scale")))
    return errs


def scale_values(scale: Mapping) -> list[int] | None:
    """The allowed values of a discrete scale in order (None for a slider)."""
    if scale["type"] == "points":
        return list(range(scale["min"], scale["max"] + 1))
    if scale["type"] == "categorical":
        return list(range(len(scale["categories"])))
    return None


def scale_labels(scale: Mapping) -> list[str] | None:
    if scale["type"] == "points":
        return list(scale["labels"])
    if scale["type"] == "categorical":
        return list(scale["categories"])
    return None


def scale_describe(scale: Mapping) -> str:
    """Short wording of the allowed values, for error messages."""
    if scale["type"] == "points":
        return f"a whole number from {scale['min']} to {scale['max']}"
    if scale["type"] == "slider":
        return f"a number from {SLIDER_MIN} to {SLIDER_MAX}"
    return "one of " + ", ".join(f"{i} ({name})" for i, name in enumerate(scale["categories"]))


def value_clean(scale: Mapping, value: object, *, from_text: bool = False) -> int | float:
    """The stored value of ``value`` on ``scale``; ``ValueError`` with the reason otherwise.

    Points and categories are whole numbers (a category may also be given by its
    name, case-insensitively); slider values are finite numbers from 0 to 100
    (whole numbers are stored as int, so the same answer compares equal on a retry).
    Strings holding numbers are accepted only with ``from_text`` (forms and files send
    text; a JSON client sends numbers, and "3" there is a mistake worth reporting).
    """
    kind = scale["type"]
    if isinstance(value, bool) or value is None:
        raise ValueError(f"the value must be {scale_describe(scale)}")
    if kind != "slider" and isinstance(value, str) and (from_text or kind == "categorical"):
        # A category by its name, or (in files and forms) a point by its label.
        labels, values = scale_labels(scale), scale_values(scale)
        assert labels is not None and values is not None  # a discrete scale: not a slider
        names = [c.strip().casefold() for c in labels]
        if value.strip().casefold() in names:
            return values[names.index(value.strip().casefold())]
        if kind == "categorical" and not value.strip().lstrip("-").isdigit():
            raise ValueError(f"unknown category {value!r}; the value must be {scale_describe(scale)}")
    if isinstance(value, str):
        if not from_text:
            raise ValueError(f"the value must be {scale_describe(scale)}, as a number")
        try:
            value = float(value.strip())
        except ValueError:
            raise ValueError(f"the value must be {scale_describe(scale)}") from None
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"the value must be {scale_describe(scale)}")
    if kind == "slider":
        if not SLIDER_MIN <= value <= SLIDER_MAX:
            raise ValueError(f"the value must be {scale_describe(scale)}")
        return int(value) if float(value).is_integer() else float(value)
    values = scale_values(scale)
    assert values is not None  # a discrete scale: the slider returned above
    if float(value) != int(value) or int(value) not in values:
        raise ValueError(f"the value must be {scale_describe(scale)}")
    return int(value)


def criteria_slugs(criteria: Sequence[Mapping]) -> list[str]:
    return [c["slug"] for c in criteria]


def alpha_levels(criteria: Sequence[Mapping]) -> dict[str, str]:
    """Krippendorff's level of measurement per criterion slug, from its scale type."""
    return {c["slug"]: ALPHA_LEVEL[c["scale"]["type"]] for c in criteria}


def scale_types(criteria: Sequence[Mapping]) -> dict[str, str]:
    return {c["slug"]: c["scale"]["type"] for c in criteria}


# --- the scale as a unit -------------------------------------------------------------------
# Everything downstream that needs to know what a criterion's values mean (figures, QC,
# training, attention checks, report settings) asks :func:`scale_unit`, never the
# criterion's name or a fixed 1–5 range.

#: Default training tolerance per scale type: ±1 point, ±10 on a 0–100 slider, exact for categories.
DEFAULT_TOLERANCE = {"points": 1.0, "slider": 10.0, "categorical": 0.0}
#: A slider answer within this distance of the asked value passes an attention check.
SLIDER_ATTENTION_TOLERANCE = 5
SLIDER_ATTENTION_VALUES = (0, 25, 50, 75, 100)
#: A control whose expected value lies in the lowest quarter of an ordered scale is
#: "known bad" on it, and the judge's control test asks that it be rated below genuine items.
LOW_SHARE = 0.25


@dataclass(frozen=True)
class ScaleUnit:
    """What one criterion's scale means, for every consumer.

    ``level`` is the level of measurement (ordinal, interval, nominal); ``ordered``
    whether higher values mean more of the criterion (direction: points and sliders
    ascend; categories have no order); ``low``/``high`` the range of stored values;
    ``values``/``labels`` the discrete values and their wording (None for a slider);
    ``qc_test`` the control test that fits (one-sided Mann–Whitney U for ordered
    scales; none for named categories, whose values have no "below")."""

    type: str
    level: str
    ordered: bool
    low: float
    high: float
    values: tuple[int, ...] | None
    labels: tuple[str, ...] | None
    qc_test: str | None
    default_tolerance: float

    @property
    def discrete(self) -> bool:
        return self.values is not None

    @property
    def continuous(self) -> bool:
        """Whether a value may fall between whole numbers (the slider); else it is one of ``values``."""
        return not self.discrete

    def value_from_text(self, text: str) -> int | float:
        """A value as a form posts it, in the type this scale stores (ValueError when it is no number).
        Only the type: :func:`value_clean` says whether it is allowed."""
        return float(text) if self.continuous else int(text)

    def value_stored(self, value: float) -> int | float:
        """A number in the type this scale stores: whole numbers as int, a slider's fraction as float."""
        return int(value) if self.discrete or float(value).is_integer() else float(value)

    @property
    def zscored(self) -> bool:
        """Whether per-judge z-scores (WMT's, :mod:`metrics.core.stats.zscores`) are shown
        for this scale: the 0–100 slider only, an interval scale each judge uses with their
        own mean and spread. Points and categories keep their raw values only."""
        return self.type == "slider"

    def range_text(self) -> str:
        """How the values read in a heading: "1–5", "0–100" or "categories"."""
        if self.type == "categorical":
            return "categories"
        return f"{self.low:g}–{self.high:g}"

    def axis_label(self, name: str) -> str:
        """A figure axis for this criterion's raw values, e.g. "Meaning (0–100)"."""
        return f"{name} ({self.range_text()})"

    def axis_limits(self) -> tuple[float, float]:
        """The axis range that shows every possible value with a margin."""
        pad = 0.5 if self.discrete else (self.high - self.low) * 0.03
        return self.low - pad, self.high + pad

    def is_low(self, value: float) -> bool:
        """Whether ``value`` lies in the lowest quarter of an ordered scale (a known-bad control's value)."""
        if not self.ordered:
            return False
        return (float(value) - self.low) / (self.high - self.low) < LOW_SHARE

    def tolerance_errors(self, tolerance: object) -> list[str]:
        """What is wrong with a training tolerance on this scale (empty when it fits)."""
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not math.isfinite(tolerance):
            return ["a tolerance is a number"]
        if self.type == "categorical":
            return [] if tolerance == 0 else ["named categories have no distance: the answer must be exact (0)"]
        if not 0 <= tolerance < self.high - self.low:
            return [
                f"a tolerance on this scale is at least 0 and below {self.high - self.low:g} "
                f"(the width of {self.range_text()})"
            ]
        return []

    def tolerance_text(self, tolerance: float) -> str:
        if self.type == "categorical" or tolerance == 0:
            return "exact"
        return f"±{tolerance:g}" + (" point" + ("s" if tolerance != 1 else "") if self.type == "points" else "")

    def within(self, answer: float, reference: float, tolerance: float) -> bool:
        """Whether an answer is right against a reference value with this tolerance."""
        if self.type == "categorical":
            return answer == reference
        return abs(float(answer) - float(reference)) <= tolerance

    @property
    def attention_values(self) -> tuple[float, ...]:
        """The values an attention check may ask for."""
        return self.values if self.values is not None else SLIDER_ATTENTION_VALUES

    @property
    def attention_tolerance(self) -> float:
        return SLIDER_ATTENTION_TOLERANCE if self.type == "slider" else 0

    def value_text(self, value: float) -> str:
        """A value as the judge reads it: its label on a labelled scale, else the number."""
        if self.labels is not None and self.values is not None and value in self.values:
            return self.labels[self.values.index(int(value))]
        return f"{value:g}"


def scale_unit(scale: Mapping) -> ScaleUnit:
    """The :class:`ScaleUnit` of a valid scale (see :func:`scale_errors`)."""
    kind = scale["type"]
    values = scale_values(scale)
    labels = scale_labels(scale)
    if kind == "points":
        low, high = float(scale["min"]), float(scale["max"])
    elif kind == "slider":
        low, high = float(SLIDER_MIN), float(SLIDER_MAX)
    else:
        low, high = 0.0, float(len(scale["categories"]) - 1)
    ordered = kind != "categorical"
    return ScaleUnit(
        type=kind,
        level=ALPHA_LEVEL[kind],
        ordered=ordered,
        low=low,
        high=high,
        values=tuple(values) if values is not None else None,
        labels=tuple(labels) if labels is not None else None,
        qc_test="mann-whitney" if ordered else None,
        default_tolerance=DEFAULT_TOLERANCE[kind],
    )


#: A slider's judge-facing words, in the order the design page shows them (only ``mid`` may be empty).
SLIDER_ANCHORS = ("low", "mid", "high")


def scale_wording(scale: Mapping) -> list[tuple[str, str]]:
    """(field suffix, current text) of a scale's judge-facing words: a point scale's labels,
    a slider's anchors, the categories' names."""
    if scale["type"] == "points":
        values = scale_values(scale)
        assert values is not None  # a point scale
        return [(f"label_{v}", lbl) for v, lbl in zip(values, scale["labels"])]
    if scale["type"] == "slider":
        anchors = scale.get("anchors", {})
        return [(f"anchor_{a}", anchors.get(a, "")) for a in SLIDER_ANCHORS]
    return [(f"category_{i}", name) for i, name in enumerate(scale["categories"])]


def scale_reworded(scale: Mapping, words: Sequence[str]) -> dict:
    """``scale`` with new judge-facing words, in :func:`scale_wording`'s order (an empty
    slider ``mid`` anchor is left out)."""
    out = dict(scale)
    if scale["type"] == "points":
        out["labels"] = list(words)
    elif scale["type"] == "slider":
        out["anchors"] = {a: w for a, w in zip(SLIDER_ANCHORS, words) if w or a != "mid"}
    else:
        out["categories"] = list(words)
    return out


def criteria_units(criteria: Sequence[Mapping]) -> dict[str, ScaleUnit]:
    """Criterion slug → its :class:`ScaleUnit`, in the design's order."""
    return {c["slug"]: scale_unit(c["scale"]) for c in criteria}


def criteria_zscored(criteria: Sequence[Mapping]) -> list[str]:
    """The slugs of the criteria that get per-judge z-scores (:attr:`ScaleUnit.zscored`), in order."""
    return [c["slug"] for c in criteria if scale_unit(c["scale"]).zscored]


def criteria_tolerances(
    criteria: Sequence[Mapping], tolerances: Mapping[str, float] | None = None, *, points: float | None = None
) -> dict[str, float]:
    """The training tolerance of every criterion, on its own scale: the researcher's
    ``tolerances[slug]`` if set, else ``points`` for a point scale (the study's
    single "± points" setting) and the scale's default otherwise (:data:`DEFAULT_TOLERANCE`)."""
    out = {}
    for c in criteria:
        unit = scale_unit(c["scale"])
        given = (tolerances or {}).get(c["slug"])
        if given is not None:
            out[c["slug"]] = float(given)
        elif unit.type == "points" and points is not None:
            out[c["slug"]] = float(points)
        else:
            out[c["slug"]] = unit.default_tolerance
    return out


def tolerances_errors(criteria: Sequence[Mapping], tolerances: object) -> list[str]:
    """What is wrong with a per-criterion tolerance map (empty when every entry fits its scale)."""
    if not isinstance(tolerances, Mapping):
        return ["a map of criterion slug → tolerance on its scale"]
    units = criteria_units(criteria)
    errs = []
    for slug, t in tolerances.items():
        if slug not in units:
            errs.append(f"unknown criterion {slug!r}; the criteria are {', '.join(units)}")
        elif t is not None:
            errs.extend(f"{slug}: {e}" for e in units[slug].tolerance_errors(t))
    return errs


def criteria_qc_tests(
    criteria: Sequence[Mapping], expected: Mapping[str, Mapping[str, float]], kinds_order: Sequence[str] = CONTROL_KINDS
) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """The judge control tests a design supports: ``(name, criterion, control kinds)``.

    For every criterion whose scale has a control test (ordered scales), the control
    kinds whose expected value there is known-bad (:meth:`ScaleUnit.is_low`) are tested
    together: their scores must lie below genuine candidates' (one-sided Mann–Whitney U,
    :func:`metrics.core.stats.qc.judge_qc`). Categorical criteria get none (named
    categories have no "below"); criteria without expected values get none. For PEM's
    design this gives adequacy of random and unigram controls, fluency of unigram,
    dissimilarity of identical and overall of random and unigram controls."""
    tests = []
    for c in criteria:
        unit = scale_unit(c["scale"])
        if unit.qc_test is None:
            continue
        kinds = tuple(
            k
            for k in kinds_order
            if (expected.get(k) or {}).get(c["slug"]) is not None and unit.is_low(expected[k][c["slug"]])
        )
        if kinds:
            tests.append((f"{c['slug']}_of_{'_and_'.join(kinds)}", c["slug"], kinds))
    return tuple(tests)


def qc_test_label(criteria: Sequence[Mapping], crit: str, kinds: Sequence[str]) -> str:
    """A QC test's column heading, e.g. "Meaning: random & unigram controls"."""
    cname = next((c["name"] for c in criteria if c["slug"] == crit), crit)
    return f"{cname}: {' & '.join(kinds)} control{'s' if len(kinds) > 1 else ''}"
