"""Training items and attention checks of the ESA protocol (issue 25).

**A training item** is an original, a candidate and a reference, stored in the shared
:class:`~annotation.judging.models.TrainingItem` (``original``, ``candidate``, ``explanation``)
with the reference in ``expected``: ``{"score": [low, high], "major": true | false}``, each
part optional but one of them given. A file, the design page's form or the API give it as
flat columns: ``score_min`` and ``score_max`` (0–100; one alone leaves the other end open; a
value with a tolerance, 70 ± 10, is the range 60–80) and ``major`` (yes or no: whether a
major error span is expected; empty: not checked). There are no tolerances in the rules
form: the range *is* the tolerance.

A training answer is a full ESA answer — spans with severities (and categories) and the
0–100 score — checked exactly as a real answer is (:func:`~.services.spans_clean` against the
item's texts, :func:`~.services.score_clean`). Per reference the verdict is ``within``,
``too_high`` or ``too_low`` for the score and ``agree`` or ``disagree`` for "a major span
marked"; an answer is right when every checked verdict is ``within`` or ``agree``. The
feedback shows the judge's own spans and score and these verdicts, never the reference.

**An attention check** is an item drawn on the judge's own ESA page among the real ones,
served by the same code path and in the same shape (page, next-item API, submit API) as a
real item, its token random like an item's. It is one of two kinds, drawn per check from the
judge's seed:

* ``unrelated``: the candidate is an unrelated sentence (another original of the judge's
  items); it passes with at least one major span or a score of at most
  :data:`UNRELATED_MAX_SCORE` (25);
* ``copy``: the candidate is a copy of the original; it passes with no major span and a
  score of at least :data:`COPY_MIN_SCORE` (50). The bar is the middle of the scale, not
  higher: a copy keeps all the meaning and is fluent, but whether a copy is a *good*
  paraphrase is the study's instructions' call, and an attentive judge must not fail.

Both kinds keep a judge from passing with one habit (never marking anything, or always
scoring low). A check is an :class:`~annotation.judging.models.AttentionCheck` row: the kind
in ``criterion``, the score bound in ``expected``, the score given in ``answer``. Which
original and sentence it shows is drawn again, the same each time, from the judge's seed and
the check's token, so nothing more is stored. Its item carries the proposals the design
would pre-fill for its texts (:func:`~.services.proposals_for`), as a real item does.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import random
from collections.abc import Mapping
from typing import Unpack

from django.utils.translation import gettext

from annotation.models import Original, Study
from metrics.core.assignment import derive_seed

from ...errors import JudgmentInvalid
from ...models import AttentionAnswer, AttentionCheck, JudgingDesign, TrainingItem
from ...selectors.judge import attention_entry_fields, attention_unrelated_text
from ...services.submission import (
    Envelope,
    SubmitResult,
    entry_answer_submit,
    entry_or_check_for_judge,
)
from ...training import training_texts_clean
from ..base import items_answered
from .models import EsaItem, EsaJudgment
from .services import (
    SCORE_MAX,
    SCORE_MIN,
    JudgeEsaItem,
    categories_allowed,
    esa_item_for_judge,
    esa_submit,
    proposals_for,
    score_clean,
    spans_clean,
)

TEXT_COLUMNS = ("original", "candidate", "explanation")
REFERENCE_COLUMNS = ("score_min", "score_max", "major")
#: What a training reference may be given for (the pass rule's "questions checked").
SLUGS = ("score", "major")
#: Verdicts (the feedback page words them; never the reference itself).
#: (``agree``/``disagree`` for the major span, as side by side words it: no "expected" on a judge's page).
WITHIN, TOO_HIGH, TOO_LOW, SAME, DIFFERENT = "within", "too_high", "too_low", "agree", "disagree"
#: Attention checks: the two kinds and their score bounds (the module docstring).
UNRELATED, COPY = "unrelated", "copy"
UNRELATED_MAX_SCORE, COPY_MIN_SCORE = 25.0, 50.0
YES = ("yes", "y", "true", "1", "major")
NO = ("no", "n", "false", "0", "none")


def _blank(v: object) -> bool:
    return v is None or (isinstance(v, str) and not v.strip())


def _score_read(v: object) -> float | None:
    if isinstance(v, bool):
        return None
    try:
        value = float(v.strip()) if isinstance(v, str) else float(v) if isinstance(v, (int, float)) else None
    except ValueError:
        return None
    return value if value is not None and SCORE_MIN <= value <= SCORE_MAX else None


def _major_read(v: object) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in YES:
        return True
    if isinstance(v, str) and v.strip().lower() in NO:
        return False
    return None


def training_item_clean(*, row: Mapping[str, object]) -> tuple[dict, dict]:
    """(clean :class:`TrainingItem` fields, errors by column) for one item given as a flat
    mapping: ``original``, ``candidate``, ``explanation``, ``score_min``, ``score_max``, ``major``."""
    texts, errors = training_texts_clean(row=row, columns=TEXT_COLUMNS)
    expected: dict = {}
    bounds: dict[str, float | None] = {}
    for col in ("score_min", "score_max"):
        v = row.get(col)
        if _blank(v):
            bounds[col] = None
            continue
        bounds[col] = _score_read(v)
        if bounds[col] is None:
            errors.setdefault(col, []).append("a number from 0 to 100")
    lo, hi = bounds.get("score_min"), bounds.get("score_max")
    if lo is not None and hi is not None and lo > hi:
        errors.setdefault("score_max", []).append("score_max must not be below score_min")
    elif (lo is not None or hi is not None) and not {"score_min", "score_max"} & set(errors):
        expected["score"] = [SCORE_MIN if lo is None else lo, SCORE_MAX if hi is None else hi]
    if not _blank(row.get("major")):
        major = _major_read(row.get("major"))
        if major is None:
            errors.setdefault("major", []).append("yes or no (is a major error span expected?)")
        else:
            expected["major"] = major
    for col in sorted(set(row) - set(TEXT_COLUMNS) - set(REFERENCE_COLUMNS)):
        errors.setdefault(col, []).append(f"unknown column; the references are {', '.join(REFERENCE_COLUMNS)}")
    if not expected and not set(REFERENCE_COLUMNS) & set(errors):
        errors.setdefault("score_min", []).append("give a score range (score_min, score_max) or major (yes/no)")
    clean = {
        "original": texts.get("original", ""),
        "candidate": texts.get("candidate", ""),
        "explanation": texts.get("explanation", ""),
        "expected": expected,
    }
    return clean, errors


def answer_clean(
    *,
    design: JudgingDesign | None,
    answers: Mapping[str, object],
    from_text: bool,
    original: str | None = None,
    candidate: str | None = None,
) -> dict:
    """An ESA answer ``{"spans": [...], "score": n}`` checked as a real one
    (:class:`JudgmentInvalid`): a form sends the spans as JSON text. Without the texts the
    spans' offsets are checked later (:func:`training_answer_check`)."""
    spans = answers.get("spans")
    if isinstance(spans, str):  # a form's hidden field: JSON text (empty: no span)
        try:
            spans = json.loads(spans) if spans.strip() else []
        except ValueError:
            spans = None
    elif spans is None and from_text:
        spans = []
    categories = categories_allowed(design) if design is not None else []
    if original is not None and candidate is not None:
        clean = spans_clean(spans=spans, original=original, candidate=candidate, categories=categories)
    else:  # the shape now; the offsets against the item's texts in training_answer_check
        if not isinstance(spans, list):
            raise JudgmentInvalid(
                gettext("spans must be a list of span objects"), field_errors={"spans": ["not a list"]}
            )
        clean = [dict(s) for s in spans if isinstance(s, Mapping)]
        if len(clean) != len(spans):
            spans_clean(spans=spans, original="", candidate="", categories=categories)  # names the bad one
    return {"spans": clean, "score": score_clean(answers.get("score"))}


def training_answer_check(*, design: JudgingDesign | None, item: TrainingItem, values: dict) -> dict:
    """The answer's spans checked against the training item's texts, as on a real item."""
    categories = categories_allowed(design) if design is not None else []
    return {
        "spans": spans_clean(
            spans=values.get("spans"), original=item.original, candidate=item.candidate, categories=categories
        ),
        "score": values["score"],
    }


def _has_major(values: Mapping) -> bool:
    return any(isinstance(s, Mapping) and s.get("severity") == "major" for s in values.get("spans") or [])


def training_verdicts(*, values: Mapping, expected: Mapping) -> dict[str, str]:
    """Per reference given: the score ``within``/``too_high``/``too_low`` its range, a major
    span marked or not ``agree``/``disagree`` with the reference."""
    out: dict[str, str] = {}
    rng = expected.get("score")
    if rng and values.get("score") is not None:
        score = float(values["score"])
        out["score"] = WITHIN if rng[0] - 1e-9 <= score <= rng[1] + 1e-9 else (TOO_HIGH if score > rng[1] else TOO_LOW)
    if "major" in expected:
        out["major"] = SAME if _has_major(values) == bool(expected["major"]) else DIFFERENT
    return out


def training_correct(*, checked: list[str], values: Mapping, expected: Mapping) -> bool:
    verdicts = training_verdicts(values=values, expected=expected)
    return all(v in (WITHIN, SAME) for slug, v in verdicts.items() if not checked or slug in checked)


def training_item_for_judge(item: TrainingItem) -> dict:
    """What the judge's training API gives: the texts and the token (never the reference)."""
    return {"token": item.token, "original": item.original, "candidate": item.candidate}


def training_feedback_rows(*, values: Mapping, verdicts: Mapping) -> list[dict]:
    """The feedback table: the judge's score, whether they marked a major span, and their spans."""
    spans = [s for s in values.get("spans") or [] if isinstance(s, Mapping)]
    majors = sum(1 for s in spans if s.get("severity") == "major")
    minors = len(spans) - majors
    return [
        {
            "name": gettext("Score (0–100)"),
            "yours": f"{float(values.get('score', 0)):g}",
            "verdict": verdicts.get("score", ""),
        },
        {
            "name": gettext("A major error marked"),
            "yours": (gettext("Yes") if majors else gettext("No"))
            + " "
            + gettext("(%(major)d major, %(minor)d minor)") % {"major": majors, "minor": minors},
            "verdict": verdicts.get("major", ""),
        },
    ]


def training_feedback_spans(*, item: TrainingItem, values: Mapping) -> list[dict]:
    """The judge's own spans as the feedback page lists them: the marked words, side, severity."""
    out = []
    for s in values.get("spans") or []:
        text = item.original if s.get("side") == "original" else item.candidate
        out.append(
            {
                "text": gettext("[missing]") if s.get("missing") else text[s["start"] : s["end"]],
                "side": s.get("side"),
                "severity": s.get("severity"),
                "category": s.get("category") or "",
            }
        )
    return out


# --- attention checks -----------------------------------------------------------------------


def attention_draw(*, rng: random.Random) -> tuple[str, float]:
    """A new check: its kind and its score bound (the module docstring)."""
    kind = rng.choice((UNRELATED, COPY))
    return kind, UNRELATED_MAX_SCORE if kind == UNRELATED else COPY_MIN_SCORE


def attention_passed(*, kind: str, bound: float, spans: list, score: float) -> bool:
    major = _has_major({"spans": spans})
    if kind == COPY:
        return not major and score >= bound - 1e-9
    return major or score <= bound + 1e-9


def attention_texts(check: AttentionCheck) -> tuple[Original, str]:
    """(the original shown, the candidate shown): drawn again from the judge's seed and the token."""
    assignment = check.assignment
    rng = random.Random(derive_seed(assignment.seed, "attention-esa", check.token))
    ids = sorted(set(EsaItem.objects.filter(assignment=assignment).values_list("candidate__original_id", flat=True)))
    original = Original.objects.get(pk=rng.choice(ids))
    if check.criterion == COPY:
        return original, original.text
    others = [i for i in ids if i != original.pk]
    return original, attention_unrelated_text(rng, others)


def attention_score(*, design: JudgingDesign | None, check: AttentionCheck, value: object) -> tuple[float, bool]:
    """The answer to a check, given as a real answer ``{"spans", "score"}`` (page and ESA API)
    and checked as one: (the score as stored, whether the check passed)."""
    if not isinstance(value, Mapping):
        raise JudgmentInvalid(gettext("Set the score (0–100) before submitting."), field_errors={"score": ["required"]})
    original, candidate = attention_texts(check)
    clean = answer_clean(design=design, answers=value, from_text=False, original=original.text, candidate=candidate)
    return clean["score"], attention_passed(
        kind=check.criterion, bound=check.expected, spans=clean["spans"], score=clean["score"]
    )


def attention_item(*, check: AttentionCheck) -> JudgeEsaItem:
    """The check as the judge receives it: a :class:`JudgeEsaItem` like the next real item (its
    place, progress, way back, proposals, serve stamp and context), its token the check's."""
    assignment = check.assignment
    original, candidate = attention_texts(check)
    design = JudgingDesign.objects.get(study_id=assignment.study_id)
    proposed = proposals_for(design=design, original=original.text, candidate=candidate)
    return JudgeEsaItem(
        **attention_entry_fields(
            check=check,
            done=items_answered(item_model=EsaItem, assignment=assignment),
            item_model=EsaItem,
            original=original,
            shown=bool(design.show_context),
        ),
        original=original.text,
        candidate=candidate,
        spans=[dict(s, proposed=True) for s in proposed],
        score=None,
        proposals_pending=bool(proposed),
    )


def answer_submit(*, spans: object, score: object, **envelope: Unpack[Envelope]) -> SubmitResult:
    """Answer an item of the judge's page, a real one or an attention check (page and ESA
    API): one path for both, so that the refusals, their order and texts, the replays and
    the revisions cannot tell them apart (issue 38 item 11). The checks run in
    :func:`~.services.esa_submit`'s order (the key's form, the item, the spans against the
    shown texts, the score, the active time), then the shared core: the item's
    (:func:`~annotation.judging.services.submission.submission_store`) or the check's
    (:func:`~annotation.judging.services.submission.attention_store`, which also scores it
    with the study's policy)."""

    def check_values(check: AttentionCheck) -> dict:
        design = JudgingDesign.objects.get(study=envelope["study"])
        original, candidate = attention_texts(check)
        return {
            "spans": spans_clean(
                spans=spans, original=original.text, candidate=candidate, categories=categories_allowed(design)
            ),
            "score": score_clean(score),
        }

    return entry_answer_submit(
        item_submit=functools.partial(esa_submit, spans=spans, score=score),
        check_values=check_values,
        check_score=lambda check, v: (
            float(v["score"]),  # type: ignore[arg-type]  # score_clean gave a number
            attention_passed(kind=check.criterion, bound=check.expected, spans=v["spans"], score=v["score"]),  # type: ignore[arg-type]
        ),
        item_model=EsaItem,
        judgment_model=EsaJudgment,
        fields_of=lambda v: {"spans": v["spans"], "score": v["score"]},
        **envelope,
    )


def posted_spans(posted: Mapping[str, object]) -> list[dict]:
    """The spans a training form sent, to show them again with its error (bad JSON: none)."""
    try:
        spans = json.loads(str(posted.get("spans") or "[]"))
    except ValueError:
        return []
    return [s for s in spans if isinstance(s, dict)] if isinstance(spans, list) else []


def posted_score(posted: Mapping[str, object]) -> float | None:
    return _score_read(posted.get("score")) if not _blank(posted.get("score")) else None


def item_for_judge(*, study: Study, judge, token: str) -> JudgeEsaItem:
    """An item of the judge's own assignment by its token (revise page, item API), attention
    items included: a token the judge was given is answered the same way whatever it stands
    for (a 404 for a check alone would tell it apart). An answered check shows its score."""
    return entry_or_check_for_judge(
        study, judge, token, entry_for_judge=esa_item_for_judge, check_entry=attention_item, check_answered=_answered
    )


def _answered(entry: JudgeEsaItem, latest: AttentionAnswer) -> JudgeEsaItem:
    """An answered attention check as the judge sent it last, read back as an item's latest judgment."""
    spans = [dict(s) for s in latest.values.get("spans") or []]
    return dataclasses.replace(
        entry, score=latest.values.get("score"), revision=latest.revision, proposals_pending=False, spans=spans
    )
