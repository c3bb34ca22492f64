"""The rubric an LLM judge gets: the study's criteria, each with its name, help and scale.

The same data the human judges see (``JudgingDesign.criteria``: a list of
``{"slug", "name", "help", "scale"}``, the scale ``points``, ``slider`` or
``categorical``; see ``annotation/judging/scales.py``), plus the study-wide
instructions. Plain data here: metrics.core imports nothing of the apps, so the
web side hands the rubric over as JSON (the run's ``rubric`` parameter) and
PEM's four criteria on five labelled points are the default (:data:`PEM_RUBRIC`).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Criterion", "Rubric", "PEM_RUBRIC", "PEM_INSTRUCTIONS", "rubric_from_json"]

#: What the judges are told before they rate (our wording of PEM §5's task).
PEM_INSTRUCTIONS = (
    "You will see an original sentence and a candidate paraphrase of it, written by a person or a program. "
    "Rate the paraphrase on the criterion below, on its scale. Judge this pair alone."
)


@dataclass(frozen=True)
class Criterion:
    """One criterion and its scale (``scale`` as in ``annotation/judging/scales.py``)."""

    slug: str
    name: str
    help: str
    scale: Mapping[str, Any]

    @property
    def kind(self) -> str:
        return str(self.scale["type"])

    def values(self) -> list[int] | None:
        """Allowed answers of a discrete scale in order (None for a 0–100 slider)."""
        if self.kind == "points":
            return list(range(int(self.scale["min"]), int(self.scale["max"]) + 1))
        if self.kind == "categorical":
            return list(range(len(self.scale["categories"])))
        return None

    def labels(self) -> list[str]:
        if self.kind == "points":
            return [str(x) for x in self.scale["labels"]]
        if self.kind == "categorical":
            return [str(x) for x in self.scale["categories"]]
        return []

    def bounds(self) -> tuple[float, float]:
        """Lowest and highest value on the scale."""
        vals = self.values()
        if vals is None:
            return float(self.scale.get("min", 0)), float(self.scale.get("max", 100))
        return float(vals[0]), float(vals[-1])

    def scale_text(self) -> str:
        """The scale as the prompt shows it: one line a value, or the slider's anchors."""
        if self.kind == "slider":
            anchors = self.scale.get("anchors") or {}
            lo, hi = self.bounds()
            parts = [f"{int(lo)} = {anchors.get('low', 'lowest')}"]
            if anchors.get("mid"):
                parts.append(f"{int((lo + hi) / 2)} = {anchors['mid']}")
            parts.append(f"{int(hi)} = {anchors.get('high', 'highest')}")
            return "A number from {} to {}: {}".format(int(lo), int(hi), "; ".join(parts))
        return "\n".join(f"{v} = {label}" for v, label in zip(self.values() or [], self.labels()))

    def answer_format(self) -> str:
        lo, hi = self.bounds()
        if self.kind == "slider":
            return f"a number from {int(lo)} to {int(hi)}"
        return f"a whole number from {int(lo)} to {int(hi)}"

    def clean(self, value: float) -> float | None:
        """``value`` when it lies on the scale, else None."""
        if not math.isfinite(value):
            return None
        vals = self.values()
        if vals is None:
            lo, hi = self.bounds()
            return float(value) if lo <= value <= hi else None
        return float(value) if float(value).is_integer() and int(value) in vals else None


@dataclass(frozen=True)
class Rubric:
    """The criteria and the instructions; :meth:`fingerprint` identifies it in signatures."""

    criteria: tuple[Criterion, ...]
    instructions: str = PEM_INSTRUCTIONS

    def criterion(self, slug: str) -> Criterion:
        for c in self.criteria:
            if c.slug == slug:
                return c
        known = ", ".join(c.slug for c in self.criteria)
        raise KeyError(f"the rubric has no criterion {slug!r}; it has {known}")

    def to_json(self) -> str:
        return json.dumps(
            {
                "instructions": self.instructions,
                "criteria": [
                    {"slug": c.slug, "name": c.name, "help": c.help, "scale": dict(c.scale)} for c in self.criteria
                ],
            },
            sort_keys=True,
            ensure_ascii=False,
        )

    def fingerprint(self) -> str:
        """First 12 hex digits of the SHA-256 of the canonical JSON."""
        return hashlib.sha256(self.to_json().encode("utf-8")).hexdigest()[:12]


_PEM = (
    (
        "adequacy",
        "Adequacy",
        "Does the paraphrase say what the original says? Judge the meaning only, not the style.",
        [
            "None of the meaning",
            "Little of the meaning",
            "Much of the meaning",
            "Most of the meaning",
            "All of the meaning",
        ],
    ),
    (
        "fluency",
        "Fluency",
        "Is the paraphrase fluent, grammatical English, read on its own?",
        ["Incomprehensible", "Broken", "Awkward but clear", "Good", "Flawless"],
    ),
    (
        "dissimilarity",
        "Lexical dissimilarity",
        "How much has the wording changed from the original? Count changed words, not changed meaning.",
        [
            "Same wording",
            "A word or two changed",
            "Some wording changed",
            "Much wording changed",
            "Entirely new wording",
        ],
    ),
    (
        "overall",
        "Overall",
        "A good paraphrase keeps the meaning, is fluent, and words things as differently from the original as it "
        "can. 5 is a perfect paraphrase, 1 an unacceptable one.",
        ["Unacceptable", "Poor", "Fair", "Good", "Perfect"],
    ),
)

#: PEM's four criteria on labelled 1–5 scales (Liu, Dahlmeier & Ng 2010, §5.1), worded
#: as paraeval's default judging design words them for the human judges.
PEM_RUBRIC = Rubric(
    tuple(
        Criterion(slug, name, help_, {"type": "points", "min": 1, "max": 5, "labels": labels})
        for slug, name, help_, labels in _PEM
    )
)


def rubric_from_json(text: str) -> Rubric:
    """A :class:`Rubric` from ``{"criteria": [...], "instructions": "..."}`` (or a bare criteria list).

    Empty text gives :data:`PEM_RUBRIC`. Raises ``ValueError`` naming what is wrong.
    """
    if not text or not text.strip():
        return PEM_RUBRIC
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the rubric is not valid JSON: {exc.msg} (line {exc.lineno})") from None
    if isinstance(data, list):
        data = {"criteria": data}
    if not isinstance(data, dict) or not isinstance(data.get("criteria"), list) or not data["criteria"]:
        raise ValueError("the rubric needs a non-empty list of criteria")
    criteria = []
    for i, c in enumerate(data["criteria"], 1):
        if not isinstance(c, dict) or not isinstance(c.get("slug"), str) or not isinstance(c.get("scale"), dict):
            raise ValueError(f"rubric criterion {i} needs a slug and a scale")
        scale = dict(c["scale"])
        kind = scale.get("type")
        if kind == "points":
            ok = (
                isinstance(scale.get("labels"), list)
                and isinstance(scale.get("min"), int)
                and isinstance(scale.get("max"), int)
                and len(scale["labels"]) == scale["max"] - scale["min"] + 1
            )
        elif kind == "categorical":
            ok = isinstance(scale.get("categories"), list) and len(scale["categories"]) >= 2
        elif kind == "slider":
            ok = True
        else:
            ok = False
        if not ok:
            raise ValueError(f"rubric criterion {c['slug']!r} has an invalid {kind or 'untyped'} scale")
        criteria.append(Criterion(c["slug"], str(c.get("name") or c["slug"]), str(c.get("help") or ""), scale))
    instructions = data.get("instructions")
    return Rubric(tuple(criteria), PEM_INSTRUCTIONS if not instructions else str(instructions))
