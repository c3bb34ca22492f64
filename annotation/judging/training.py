"""Training round: items with reference answers, a pass rule and a retry limit.

A researcher gives training items (original, candidate, a reference value per
criterion on that criterion's scale, an explanation) on the design page, through the
API or in a CSV/TSV/JSONL file (read by :mod:`metrics.core.tabular`, all or nothing).
Before their first real item a judge answers a training attempt; after each answer
they see, per criterion, whether their value is within the accepted range, higher or
lower than the reference (:func:`answer_feedback`), and the explanation — never the
reference value itself. An *attempt* is one pass over ``training_items_per_attempt``
items drawn at random (seeded by the judge's assignment and the attempt) from the
study's pool, or over every item in order when that is 0. Together these keep a
throw-away participant from learning a key that a fresh participant could replay:
feedback gives directions, not values, and each attempt shows other items
(:func:`training_pool_warning` tells the researcher when the pool is too small for
that). The pass rule (:class:`~annotation.judging.models.ScreeningSettings`):
an item is right when every checked criterion is within its tolerance of the reference,
on its own scale (``training_tolerances`` per criterion, else ± ``training_tolerance``
points on point scales, ±10 on a slider; categories: equal); the attempt passes with at least
``training_required`` right items (0: all). A failed attempt may be repeated
``training_retries`` times; failing the last one screens the judge out
(:func:`annotation.judging.screening.screen_out`).

That is the absolute protocol's item. What an item holds, how an answer is read and
when it is right is the protocol unit's (:meth:`~.protocols.base.JudgingProtocol.training_item_clean`
and the methods after it): a side-by-side item is an original, two candidates (A in
``candidate``, B in ``expected["b"]``) and the reference answer per question (A, tie
or B, in ``expected["answers"]``), right when every question with a reference has it.
This module holds what is shared: the pool, attempts, the pass rule's count, retries.

Training answers are :class:`~annotation.judging.models.TrainingAnswer` rows, never
judgments: no report, agreement figure or export reads them.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from annotation.models import Study
from metrics.core import tabular
from metrics.core.assignment import derive_seed

from . import scales
from .enums import ScreenOutRule
from .errors import JudgingError
from .models import Assignment, ScreeningSettings, TrainingAnswer, TrainingItem
from .protocols.registry import protocol_and_design
from .screening import screen_out
from .tokens import item_token_new

MAX_TRAINING_ITEMS = 50
MAX_TEXT_CHARS, MAX_EXPLANATION_CHARS = 2000, 2000
TEXT_COLUMNS = ("original", "candidate", "explanation")


class TrainingInvalid(JudgingError):
    """A training item or answer is not valid (400)."""


class TrainingLocked(JudgingError):
    """Judges have started the training, so its items can no longer change (409)."""

    status_code = 409


class TrainingFinished(JudgingError):
    """The judge has no training left to answer (409)."""

    status_code = 409


# --- the researcher's items ------------------------------------------------------------


def training_texts_clean(
    *, row: Mapping[str, object], columns: tuple[str, ...]
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """(the texts, stripped, errors by column) of a training item's text ``columns`` in a flat
    row: each must be text of at most :data:`MAX_TEXT_CHARS` characters (the explanation
    :data:`MAX_EXPLANATION_CHARS`), and every one but the explanation is needed."""
    errors: dict[str, list[str]] = {}
    texts: dict[str, str] = {}
    for col in columns:
        v = row.get(col, "")
        v = "" if v is None else v
        limit = MAX_EXPLANATION_CHARS if col == "explanation" else MAX_TEXT_CHARS
        if not isinstance(v, str):
            errors.setdefault(col, []).append("must be text")
        elif col != "explanation" and not v.strip():
            errors.setdefault(col, []).append("this column needs a text")
        elif len(v) > limit:
            errors.setdefault(col, []).append(f"at most {limit} characters")
        else:
            texts[col] = v.strip()
    return texts, errors


def training_item_errors(*, criteria: list[dict], row: Mapping[str, object], from_text: bool) -> tuple[dict, dict]:
    """(clean item fields, errors by column) for one training item given as a flat mapping:
    ``original``, ``candidate``, ``explanation`` and one column per criterion slug (the
    reference value; empty: none). At least one reference value is needed."""
    texts, errors = training_texts_clean(row=row, columns=TEXT_COLUMNS)
    clean: dict = {"expected": {}, **texts}
    slugs = [c["slug"] for c in criteria]
    for c in criteria:
        v = row.get(c["slug"])
        if v is None or (isinstance(v, str) and not v.strip()):
            continue
        try:
            clean["expected"][c["slug"]] = scales.value_clean(c["scale"], v, from_text=from_text)
        except ValueError as exc:
            errors.setdefault(c["slug"], []).append(str(exc))
    unknown = sorted(set(row) - set(TEXT_COLUMNS) - set(slugs))
    for col in unknown:
        errors.setdefault(col, []).append(f"unknown column; the criteria are {', '.join(slugs)}")
    if not clean["expected"] and not any(s in errors for s in slugs):
        errors.setdefault(slugs[0], []).append("give the reference value of at least one criterion")
    return clean, errors


def _refuse_if_started(study: Study) -> None:
    if TrainingAnswer.objects.filter(item__study=study).exists():
        raise TrainingLocked("Judges have started the training of this study, so its items can no longer change.")


def _settings_ensure(study: Study) -> ScreeningSettings:
    settings, _ = ScreeningSettings.objects.get_or_create(study=study)
    return settings


@transaction.atomic
def training_item_add(*, study: Study, row: Mapping[str, object], from_text: bool = False) -> TrainingItem:
    """Add one training item at the end (:class:`TrainingInvalid` with errors per field)."""
    Study.objects.select_for_update().filter(pk=study.pk).first()
    _refuse_if_started(study)
    unit, design = protocol_and_design(study_id=study.pk)
    clean, errors = unit.training_item_clean(design=design, row=row, from_text=from_text)
    if errors:
        raise TrainingInvalid(
            "The training item is not valid: " + "; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()) + ".",
            field_errors=errors,
        )
    n = TrainingItem.objects.filter(study=study).count()
    if n >= MAX_TRAINING_ITEMS:
        raise TrainingInvalid(f"A study has at most {MAX_TRAINING_ITEMS} training items.")
    last = TrainingItem.objects.filter(study=study).order_by("-position").values_list("position", flat=True).first()
    _settings_ensure(study)
    return TrainingItem.objects.create(study=study, position=(last or 0) + 1, token=item_token_new(), **clean)


@transaction.atomic
def training_item_delete(*, study: Study, token: str) -> None:
    _refuse_if_started(study)
    deleted, _ = TrainingItem.objects.filter(study=study, token=token).delete()
    if not deleted:
        raise JudgingError("There is no such training item.")


@transaction.atomic
def training_items_import(*, study: Study, data: bytes, filename: str, fmt: str | None = None) -> int:
    """Replace the study's training items by those of a CSV/TSV/JSONL file, all or nothing.

    Columns: ``original``, ``candidate``, ``explanation`` (optional) and one per
    criterion slug. :class:`metrics.core.tabular.TabularError` names every problem
    (file, line, column); :class:`TrainingLocked` once judges have started.
    """
    Study.objects.select_for_update().filter(pk=study.pk).first()
    _refuse_if_started(study)
    fmt = tabular.format_from_name(filename, fmt)
    text = tabular.decode_text(data, filename)
    unit, design = protocol_and_design(study_id=study.pk)
    table = tabular.read_table(text, fmt, filename, required=unit.training_columns(design=design))
    issues: list[tabular.TabularIssue] = []
    items = []
    for line, row in table.rows:
        clean, errors = unit.training_item_clean(design=design, row=row, from_text=fmt != "jsonl")
        for col, errs in errors.items():
            issues.extend(tabular.TabularIssue(e, line=line, column=col) for e in errs)
        items.append(clean)
    if not items:
        issues.append(tabular.TabularIssue("the file has no training items"))
    if len(items) > MAX_TRAINING_ITEMS:
        issues.append(tabular.TabularIssue(f"a study has at most {MAX_TRAINING_ITEMS} training items"))
    if issues:
        raise tabular.TabularError(filename, issues)
    TrainingItem.objects.filter(study=study).delete()
    TrainingItem.objects.bulk_create(
        [TrainingItem(study=study, position=i, token=item_token_new(), **c) for i, c in enumerate(items, 1)]
    )
    _settings_ensure(study)
    return len(items)


def training_items(*, study: Study) -> list[TrainingItem]:
    return list(TrainingItem.objects.filter(study=study).order_by("position"))


# --- the pass rule ----------------------------------------------------------------------


def answer_correct(
    *,
    values: Mapping,
    expected: Mapping,
    criteria: list[dict],
    checked: list[str],
    tolerance: float | Mapping[str, float],
) -> bool:
    """Whether one answer is right: every checked criterion that has a reference value
    is within its tolerance of it, on its own scale (a number applies to every ordered
    criterion; a map gives each criterion its own, :func:`.scales.criteria_tolerances`;
    a categorical criterion must be equal)."""
    units = scales.criteria_units(criteria)
    for slug in checked or list(expected):
        if slug not in expected or slug not in values or slug not in units:
            continue
        t = tolerance.get(slug, units[slug].default_tolerance) if isinstance(tolerance, Mapping) else tolerance
        if not units[slug].within(values[slug], expected[slug], t + 1e-9):
            return False
    return True


#: What :func:`answer_feedback` says of one criterion (the judge's page words them).
WITHIN, TOO_HIGH, TOO_LOW, SAME, DIFFERENT = "within", "too_high", "too_low", "same", "different"


def answer_feedback(
    *, values: Mapping, expected: Mapping, criteria: list[dict], tolerance: float | Mapping[str, float]
) -> dict[str, str]:
    """How an answer compares with the reference, per criterion that has a reference value.

    ``within`` (within the criterion's tolerance, as :func:`answer_correct` reads
    ``tolerance``), ``too_high`` or ``too_low`` on ordered scales;
    ``same`` or ``different`` on a categorical one. This, and the researcher's
    explanation, is what a judge learns from a training item: never the reference
    value, which a throw-away participant could collect and hand on.
    """
    types = {c["slug"]: c["scale"]["type"] for c in criteria}
    units = scales.criteria_units(criteria)
    out: dict[str, str] = {}
    for slug, ref in expected.items():
        if slug not in values:
            continue
        if types.get(slug) == "categorical":
            out[slug] = SAME if values[slug] == ref else DIFFERENT
            continue
        diff = float(values[slug]) - float(ref)
        t = tolerance.get(slug, units[slug].default_tolerance) if isinstance(tolerance, Mapping) else tolerance
        out[slug] = WITHIN if abs(diff) <= t + 1e-9 else (TOO_HIGH if diff > 0 else TOO_LOW)
    return out


def training_answer_feedback(*, answer: TrainingAnswer) -> dict[str, str]:
    """:func:`answer_feedback` of a stored answer, with its study's criteria and tolerance."""
    study_id = answer.item.study_id
    settings = ScreeningSettings.objects.filter(study_id=study_id).first() or ScreeningSettings()
    unit, design = protocol_and_design(study_id=study_id)
    return unit.training_verdicts(design=design, settings=settings, values=answer.values, expected=answer.item.expected)


def attempt_items(
    *, assignment: Assignment, pool: list[TrainingItem], attempt: int, per_attempt: int
) -> list[TrainingItem]:
    """The training items of one attempt: ``per_attempt`` items of ``pool`` (in position order).

    The pool is shuffled once per judge (seeded by the assignment's seed) and attempt
    n takes the next ``per_attempt`` items of that order, wrapping around: a judge's
    attempt is the same on every request, a retry shows items not seen before while
    the pool lasts, and every judge has a draw of their own. ``per_attempt`` 0, or not
    smaller than the pool: the whole pool in order.
    """
    if not per_attempt or per_attempt >= len(pool):
        return list(pool)
    order = list(pool)
    random.Random(derive_seed(assignment.seed, "training")).shuffle(order)
    start = (attempt - 1) * per_attempt
    return [order[(start + i) % len(order)] for i in range(per_attempt)]


def training_pool_warning(*, n_items: int, per_attempt: int) -> str | None:
    """What the researcher is told when the pool is too small to keep answers from being learned
    (None: large enough). A pool of at least twice the items per attempt is asked for."""
    if n_items == 0:
        return None
    if not per_attempt:
        return (
            f"Every judge answers the same {n_items} training item{'s' if n_items != 1 else ''} in every attempt: "
            "someone who joins once to learn them can pass their way in with a second account. Add more items "
            "and set 'training items per attempt' so that each attempt draws a few of them at random."
        )
    if n_items < 2 * per_attempt:
        return (
            f"{n_items} training item{'s' if n_items != 1 else ''} for {per_attempt} per attempt: attempts "
            f"{'are all the same items' if n_items <= per_attempt else 'share most of their items'}, so answers "
            f"learned once can be replayed. Give at least {2 * per_attempt} items (twice the number per attempt)."
        )
    return None


def required_right(settings: ScreeningSettings, n_items: int) -> int:
    return n_items if not settings.training_required else min(settings.training_required, n_items)


@dataclass(frozen=True)
class TrainingState:
    """Where a judge stands in the training (all of it may be shown to that judge)."""

    n_items: int
    attempt: int  # the attempt in progress or last finished (1-based; 0: not started)
    attempts_allowed: int
    answered: int  # in ``attempt``
    right: int  # in ``attempt``
    required: int
    passed: bool
    screened_out: bool
    next_item: TrainingItem | None = None
    answers: list[TrainingAnswer] = field(default_factory=list)

    @property
    def attempt_finished(self) -> bool:
        return self.attempt > 0 and self.answered == self.n_items

    @property
    def can_retry(self) -> bool:
        return self.attempt_finished and not self.passed and self.attempt < self.attempts_allowed


def training_state(*, assignment: Assignment, settings: ScreeningSettings | None = None) -> TrainingState:
    settings = settings or ScreeningSettings.objects.filter(study_id=assignment.study_id).first() or ScreeningSettings()
    pool = list(TrainingItem.objects.filter(study_id=assignment.study_id).order_by("position"))
    answers = list(
        TrainingAnswer.objects.filter(assignment=assignment)
        .select_related("item")
        .order_by("attempt", "created_at", "id")
    )
    attempt = max((a.attempt for a in answers), default=0)
    current = [a for a in answers if a.attempt == attempt]
    done = {a.item_id for a in current}
    per_attempt = settings.training_items_per_attempt

    def draw(n: int) -> list[TrainingItem]:
        return attempt_items(assignment=assignment, pool=pool, attempt=n, per_attempt=per_attempt)

    items = draw(max(attempt, 1))
    finished = attempt > 0 and len(current) >= len(items)
    ended = assignment.training_passed_at is not None or assignment.screened_out_at is not None
    if ended or not pool:
        nxt = None
    elif finished:  # a failed attempt with a retry left: the next attempt is a new draw
        nxt = draw(attempt + 1)[0]
    else:
        nxt = next((i for i in items if i.pk not in done), None)
    return TrainingState(
        n_items=len(items),
        attempt=attempt,
        attempts_allowed=1 + settings.training_retries,
        answered=len(current),
        right=sum(a.correct for a in current),
        required=required_right(settings, len(items)),
        passed=assignment.training_passed_at is not None,
        screened_out=assignment.screened_out_at is not None,
        next_item=nxt,
        answers=current,
    )


@transaction.atomic
def training_answer_submit(
    *, assignment: Assignment, token: str, scores: Mapping[str, object], from_text: bool = False
) -> tuple[TrainingAnswer, TrainingState]:
    """Store a judge's answer to the training item ``token`` in their current attempt.

    The answer is checked as the protocol checks a real one (every criterion a value on
    its scale, every comparison question A, tie or B: :class:`JudgmentInvalid`) and
    marked right or not by the protocol's unit. When the
    answer completes an attempt the pass rule is applied: passed sets
    ``training_passed_at``; failed with no attempt left screens the judge out. A new
    attempt starts with the first answer after a failed one. :class:`TrainingFinished`
    when the judge passed, was screened out, or answers an item twice in one attempt.
    """
    assignment = Assignment.objects.select_for_update().select_related("study").get(pk=assignment.pk)
    if assignment.screened_out_at is not None or assignment.training_passed_at is not None:
        raise TrainingFinished(gettext("Your training is finished."))
    settings = ScreeningSettings.objects.filter(study_id=assignment.study_id).first() or ScreeningSettings()
    state = training_state(assignment=assignment, settings=settings)
    attempt = state.attempt + 1 if (state.attempt == 0 or state.attempt_finished) else state.attempt
    if attempt > state.attempts_allowed:
        raise TrainingFinished(gettext("You have no training attempts left."))
    pool = list(TrainingItem.objects.filter(study_id=assignment.study_id).order_by("position"))
    drawn = attempt_items(
        assignment=assignment, pool=pool, attempt=attempt, per_attempt=settings.training_items_per_attempt
    )
    item = next((i for i in drawn if i.token == token), None) if isinstance(token, str) else None
    if item is None:  # not a training item, or not one of this attempt's
        raise TrainingInvalid(gettext("There is no such training item."))
    unit, design = protocol_and_design(study_id=assignment.study_id)
    clean = unit.training_answer_clean(design=design, answers=scores, from_text=from_text)
    clean = unit.training_answer_check(design=design, item=item, values=clean)
    if TrainingAnswer.objects.filter(assignment=assignment, item=item, attempt=attempt).exists():
        raise TrainingFinished(gettext("You have already answered this training item."))
    answer = TrainingAnswer.objects.create(
        assignment=assignment,
        item=item,
        attempt=attempt,
        values=clean,
        correct=unit.training_correct(design=design, settings=settings, values=clean, expected=item.expected),
    )
    state = training_state(assignment=assignment, settings=settings)
    if state.attempt_finished:
        if state.right >= state.required:
            assignment.training_passed_at = timezone.now()
            assignment.save(update_fields=["training_passed_at", "updated_at"])
        elif attempt >= state.attempts_allowed:
            screen_out(
                assignment=assignment,
                rule=ScreenOutRule.TRAINING,
                reason=(
                    f"Training failed: {state.right} of {state.n_items} items right (needed {state.required}) "
                    f"in attempt {attempt} of {state.attempts_allowed}."
                ),
            )
        state = training_state(assignment=assignment, settings=settings)
    return answer, state


def value_from_text(criterion: dict, value: object) -> object:
    """A form's text value read as ``criterion``'s scale reads text (a bad one is kept: the
    answer's check names the problem)."""
    if value in (None, ""):
        return None
    try:
        return scales.value_clean(criterion["scale"], value, from_text=True)
    except ValueError:
        return value  # scores_clean names the problem


def training_required(*, study: Study) -> bool:
    return TrainingItem.objects.filter(study=study).exists()


__all__ = [
    "TrainingFinished",
    "TrainingInvalid",
    "TrainingLocked",
    "TrainingState",
    "answer_correct",
    "answer_feedback",
    "attempt_items",
    "training_answer_feedback",
    "training_answer_submit",
    "training_pool_warning",
    "training_item_add",
    "training_item_delete",
    "training_items",
    "training_items_import",
    "training_required",
    "training_state",
]
