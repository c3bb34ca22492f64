"""Screening judges out: the settings, the screen-out itself, live attention checks and
the automatic QC check as judgments arrive (queued after each judgment by
:func:`annotation.judging.services.queueing.after_judgment`, run here by the worker).

A screened-out judge's assignment carries ``screened_out_at``, the rule
(:class:`~annotation.judging.enums.ScreenOutRule`) and a reason. From then on the
judge sees only the "screened out" page, cannot submit, and
:func:`annotation.judging.selectors.judges_excluded` lists them, so their judgments
are kept apart and never counted (judgments frame, reports, agreement, QC verdicts,
exports); unlike a researcher's exclusion this cannot be undone from the QC page.

Attention checks are :class:`~annotation.judging.models.AttentionCheck` rows: an
instruction ("for Fluency, choose 2") shown after a seeded number of real items. They
are not items: they have their own page and token, are stored apart from judgments,
and nothing on them refers to the study's candidates, systems or controls.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext

from annotation.models import Study
from metrics.core.assignment import derive_seed

from . import scales
from .defaults import default_criteria
from .enums import AttentionPolicy, ScreenOutRule
from .errors import DesignInvalid, JudgingError
from .models import Assignment, AttentionCheck, JudgingDesign, ScreeningSettings, TrainingAnswer, TrainingItem
from .protocols.registry import protocol_and_design
from .selectors.exclusions import judges_excluded
from .tokens import item_token_new

SETTINGS_FIELDS = (
    "training_criteria",
    "training_tolerance",
    "training_tolerances",
    "training_required",
    "training_retries",
    "training_items_per_attempt",
    "attention_count",
    "attention_policy",
    "attention_max_failures",
    "qc_auto",
    "qc_auto_pvalue",
    "qc_auto_min_controls",
)


class ScreenedOut(JudgingError):
    """The judge was screened out of this study (403)."""

    status_code = 403


class TrainingFirst(JudgingError):
    """The judge must pass the training before rating (403)."""

    status_code = 403


class AttentionPending(JudgingError):
    """An attention check is waiting on the judge's page (409)."""

    status_code = 409


def settings_for_study(*, study: Study) -> ScreeningSettings | None:
    return ScreeningSettings.objects.filter(study=study).first()


@transaction.atomic
def screening_settings_update(*, study: Study, changes: Mapping[str, object]) -> ScreeningSettings:
    """Change screening settings (any of :data:`SETTINGS_FIELDS`); :class:`DesignInvalid` with errors per field."""
    unknown = sorted(set(changes) - set(SETTINGS_FIELDS))
    if unknown:
        raise DesignInvalid(f"unknown screening field(s): {', '.join(unknown)}")
    settings, _ = ScreeningSettings.objects.select_for_update().get_or_create(study=study)
    errors: dict[str, list[str]] = {}
    if (
        "training_items_per_attempt" in changes
        and changes["training_items_per_attempt"] != settings.training_items_per_attempt
        and TrainingAnswer.objects.filter(item__study=study).exists()
    ):
        # A judge's attempt is drawn with this number: changing it would change attempts under way.
        errors["training_items_per_attempt"] = [
            "judges have started the training, so the number of items per attempt can no longer change"
        ]
    for f, v in changes.items():
        setattr(settings, f, v)
    unit, design = protocol_and_design(study_id=study.pk)
    # Tolerances are on criteria's scales; a protocol whose answers are not (A, tie, B) has none.
    criteria = (design.criteria if design else _default_criteria()) if unit.training_tolerances else []
    slugs = unit.training_slugs(design=design)
    if settings.training_tolerances in (None, ""):
        settings.training_tolerances = {}
    tolerance_problems = scales.tolerances_errors(criteria, settings.training_tolerances)
    if tolerance_problems:
        errors["training_tolerances"] = tolerance_problems
    else:
        settings.training_tolerances = {k: float(v) for k, v in settings.training_tolerances.items() if v is not None}
    crit = settings.training_criteria
    if not isinstance(crit, list) or not all(isinstance(c, str) for c in crit):
        errors["training_criteria"] = ["a list of criterion slugs"]
    elif set(crit) - set(slugs):
        errors["training_criteria"] = [f"unknown criterion or question; they are {', '.join(slugs)}"]
    try:
        settings.full_clean(exclude=["study"])
    except ValidationError as exc:
        for k, v in exc.message_dict.items():
            errors.setdefault(k, []).extend(v)
    if errors:
        raise DesignInvalid("The screening settings are not valid.", field_errors=errors)
    settings.save()
    return settings


def _default_criteria() -> list[dict]:
    return default_criteria()


# --- screening out ----------------------------------------------------------------------


def screen_out(*, assignment: Assignment, rule: str, reason: str) -> bool:
    """Mark ``assignment`` screened out (once: a second call changes nothing and returns False)."""
    now = timezone.now()
    n = Assignment.objects.filter(pk=assignment.pk, screened_out_at__isnull=True).update(
        screened_out_at=now, screened_out_rule=rule, screened_out_reason=reason[:2000], updated_at=now
    )
    if n:
        assignment.screened_out_at, assignment.screened_out_rule, assignment.screened_out_reason = now, rule, reason
    return bool(n)


def judges_screened_out(*, study: Study) -> dict[str, Assignment]:
    """Username → assignment of every judge screened out of ``study``."""
    return {
        a.judge.username: a
        for a in Assignment.objects.filter(study=study, screened_out_at__isnull=False).select_related("judge")
    }


def attention_results(*, study: Study) -> dict[str, tuple[int, int]]:
    """Username → (attention checks answered, passed) for every judge of ``study`` who answered one."""
    rows = (
        AttentionCheck.objects.filter(assignment__study=study, answered_at__isnull=False)
        .values("assignment__judge__username")
        .annotate(n=Count("id"), ok=Count("id", filter=Q(passed=True)))
        .order_by()
    )
    return {r["assignment__judge__username"]: (r["n"], r["ok"]) for r in rows}


def qc_rows_with_attention(*, study: Study, rows: list[dict], blank: Mapping[str, object]) -> list[dict]:
    """A protocol's QC rows (one per judge with answered controls, ``judge`` their username) with
    ``attention``: (checks answered, passed), None where the judge answered none; and a row of
    ``blank``'s values, ``excluded`` and ``attention`` for a judge who answered checks but no
    control yet, so that the QC page lists every judge the checks say something of. By judge."""
    attention = attention_results(study=study)
    excluded = judges_excluded(study=study)
    seen = {r["judge"] for r in rows}
    out = [r | {"attention": attention.get(r["judge"])} for r in rows]
    out += [
        {"judge": judge, **blank, "excluded": judge in excluded, "attention": answered}
        for judge, answered in attention.items()
        if judge not in seen
    ]
    return sorted(out, key=lambda r: r["judge"])


# --- the judge's gate --------------------------------------------------------------------


def judge_gate(*, assignment: Assignment, done: int) -> tuple[str, AttentionCheck | None] | None:
    """What must come before the judge's next real item, having rated ``done`` items:
    ``("screened_out", None)``, ``("training", None)``, ``("attention", check)`` or None."""
    if assignment.screened_out_at is not None:
        return "screened_out", None
    settings = ScreeningSettings.objects.filter(study_id=assignment.study_id).first()
    if settings is None:
        return None
    if assignment.training_passed_at is None and TrainingItem.objects.filter(study_id=assignment.study_id).exists():
        return "training", None
    if settings.attention_count:
        attention_plan(assignment=assignment, settings=settings)
        check = (
            AttentionCheck.objects.filter(assignment=assignment, answered_at__isnull=True, after_done__lte=done)
            .order_by("after_done", "id")
            .first()
        )
        if check is not None:
            return "attention", check
    return None


def judge_gate_raise(*, assignment: Assignment, done: int) -> None:
    """:func:`judge_gate` for the API: raise the error that says what to do first."""
    gate = judge_gate(assignment=assignment, done=done)
    if gate is None:
        return
    if gate[0] == "screened_out":
        raise ScreenedOut(gettext("You were screened out of this study; thank you for your time."))
    if gate[0] == "training":
        raise TrainingFirst(gettext("Complete the training on the judge's page before rating."))
    raise AttentionPending(gettext("Answer the attention check on the judge's page to continue."))


# --- attention checks ----------------------------------------------------------------------


def _attention_criteria(assignment: Assignment) -> list[dict]:
    design = JudgingDesign.objects.filter(study_id=assignment.study_id).first()
    return design.criteria if design else _default_criteria()


def attention_plan(*, assignment: Assignment, settings: ScreeningSettings) -> int:
    """Create the judge's attention checks once (seeded by their assignment's seed): after
    how many real items each appears, which criterion and which value it asks for."""
    if AttentionCheck.objects.filter(assignment=assignment).exists() or assignment.n_items < 2:
        return 0
    rng = random.Random(derive_seed(assignment.seed, "attention"))
    n = min(settings.attention_count, assignment.n_items - 1)
    positions = sorted(rng.sample(range(1, assignment.n_items), n))
    unit, design = protocol_and_design(study_id=assignment.study_id)
    rows = []
    for after in positions:
        criterion, expected = unit.attention_draw(design=design, rng=rng)
        rows.append(
            AttentionCheck(
                assignment=assignment, token=item_token_new(), after_done=after, criterion=criterion, expected=expected
            )
        )
    AttentionCheck.objects.bulk_create(rows)
    return len(rows)


def attention_for_judge(check: AttentionCheck) -> dict:
    """The check as the attention page shows it (a protocol whose :attr:`attention_page` is
    that page): the criterion (name, scale) and the value to choose."""
    criteria = _attention_criteria(check.assignment)
    c = next((c for c in criteria if c["slug"] == check.criterion), criteria[0])
    value = int(check.expected) if float(check.expected).is_integer() else check.expected
    labels = scales.scale_labels(c["scale"])
    if labels:  # a discrete scale: the expected value was drawn from its (whole) values
        values = scales.scale_values(c["scale"])
        assert values is not None and isinstance(value, int)
        label = labels[values.index(value)]
    else:
        label = str(value)
    return {"token": check.token, "criterion": c, "value": value, "label": label}


@transaction.atomic
def attention_answer(*, assignment: Assignment, token: str, value: object) -> tuple[AttentionCheck, int, bool]:
    """Record the answer to an attention check: (check, failures so far, screened out now).

    What the answer is and whether it is the requested one is the protocol unit's
    (:meth:`~.protocols.base.JudgingProtocol.attention_score`: a value on a criterion's
    scale, or the answers to a comparison pair).
    With the ``end`` policy the judge is screened out at ``attention_max_failures``
    failures; with ``warn`` the page only tells them."""
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if assignment.screened_out_at is not None:
        raise ScreenedOut(gettext("You were screened out of this study; thank you for your time."))
    check = (
        AttentionCheck.objects.filter(assignment=assignment, token=token, answered_at__isnull=True).first()
        if isinstance(token, str)
        else None
    )
    if check is None:
        raise JudgingError(gettext("There is no such attention check waiting."), field_errors={"token": ["unknown"]})
    unit, design = protocol_and_design(study_id=assignment.study_id)
    check.answer, check.passed = unit.attention_score(design=design, check=check, value=value)
    check.answered_at = timezone.now()
    check.save(update_fields=["answer", "passed", "answered_at", "updated_at"])
    failures, ended = attention_record(assignment=assignment)
    return check, failures, ended


def attention_record(*, assignment: Assignment) -> tuple[int, bool]:
    """After a check's first answer is saved: (failures so far, screened out now) under the
    study's policy. The caller holds the assignment's row lock."""
    failures = AttentionCheck.objects.filter(assignment=assignment, passed=False).count()
    settings = ScreeningSettings.objects.filter(study_id=assignment.study_id).first() or ScreeningSettings()
    ended = False
    if settings.attention_policy == AttentionPolicy.END and failures >= settings.attention_max_failures:
        ended = screen_out(
            assignment=assignment,
            rule=ScreenOutRule.ATTENTION,
            reason=(f"Failed {failures} attention check(s) (the limit is {settings.attention_max_failures})."),
        )
    return failures, ended
