"""Default wording and settings of a judging design (the researcher can edit them).

The wording is ours; the criteria and the controls' expected scores follow PEM
(Liu, Dahlmeier & Ng 2010, §5.1). Nothing here may name a system or a control:
criteria texts are shown to judges.
"""

from __future__ import annotations

import secrets

from metrics.core.controls import CONTROL_KINDS, DEFAULT_EXPECTED_SCORES

from .enums import CRITERIA, ESA_DEFAULT_CATEGORIES

DEFAULT_CRITERIA: tuple[dict, ...] = (
    {
        "slug": "adequacy",
        "name": "Adequacy",
        "help": "Does the paraphrase say what the original says? Judge the meaning only, not the style.",
        "labels": [
            "None of the meaning",
            "Little of the meaning",
            "Much of the meaning",
            "Most of the meaning",
            "All of the meaning",
        ],
    },
    {
        "slug": "fluency",
        "name": "Fluency",
        "help": "Is the paraphrase fluent, grammatical English, read on its own?",
        "labels": ["Incomprehensible", "Broken", "Awkward but clear", "Good", "Flawless"],
    },
    {
        "slug": "dissimilarity",
        "name": "Lexical dissimilarity",
        "help": "How much has the wording changed from the original? Count changed words, not changed meaning.",
        "labels": [
            "Same wording",
            "A word or two changed",
            "Some wording changed",
            "Much wording changed",
            "Entirely new wording",
        ],
    },
    {
        "slug": "overall",
        "name": "Overall",
        "help": "A good paraphrase keeps the meaning, is fluent, and words things as differently from the "
        "original as it can. 5 is a perfect paraphrase, 1 an unacceptable one.",
        "labels": ["Unacceptable", "Poor", "Fair", "Good", "Perfect"],
    },
)
assert tuple(c["slug"] for c in DEFAULT_CRITERIA) == CRITERIA


#: PEM's report defaults: Tables 1 and 3 on the overall score, and Table 2 again on the
#: subset of items with mean adequacy ≥ 4 and mean fluency ≥ 4 (PEM §5.2). A study whose
#: design lacks these criteria gets its first criterion and no subset.
PEM_REPORT_TARGET = "overall"
PEM_TABLE2_SUBSET: dict[str, float] = {"adequacy": 4, "fluency": 4}


def default_criteria() -> list[dict]:
    """PEM's four criteria, each on a labelled 1–5 point scale (see :mod:`.scales`)."""
    return [
        {
            "slug": c["slug"],
            "name": c["name"],
            "help": c["help"],
            "scale": {"type": "points", "min": 1, "max": 5, "labels": list(c["labels"])},
        }
        for c in DEFAULT_CRITERIA
    ]


def default_control_counts() -> dict[str, int]:
    """One control of each kind per original (PEM §5.1)."""
    return dict.fromkeys(CONTROL_KINDS, 1)


def default_expected_scores() -> dict[str, dict[str, int | float]]:
    # PEM's defaults are whole numbers; a design's expected scores (this dict, edited) may not be.
    return {kind: dict(scores) for kind, scores in DEFAULT_EXPECTED_SCORES.items()}


def default_esa_categories() -> list[str]:
    """The error categories an ESA study offers unless the researcher sets its own."""
    return list(ESA_DEFAULT_CATEGORIES)


def new_seed() -> int:
    """A fresh random seed in [0, 2^31) — small enough to type into a form or a paper."""
    return secrets.randbelow(2**31)
