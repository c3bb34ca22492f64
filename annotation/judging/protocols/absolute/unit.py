"""The absolute protocol as a unit: what it declares to the registry."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from annotation.models import Study

from ... import scales, training
from ...defaults import PEM_REPORT_TARGET, default_criteria
from ...enums import ImportMode
from ...errors import JudgingError
from ...models import JudgingDesign
from ...selectors.design import study_criteria
from ..base import JudgingProtocol, PlannerPilot
from ..registry import register
from .exports import criteria_tidy_rows, criteria_wide_rows
from .frame import judgments_frame
from .imports import JudgmentImportSummary, judgments_import_file
from .models import AssignmentItem, Judgment
from .report import absolute_answers, absolute_report_compute, absolute_tables
from .selectors import item_for_judge, item_next_for_judge, item_previous_for_judge
from .services import (
    absolute_assignment_for_participant,
    absolute_assignment_late,
    absolute_assignments_write,
    judgment_submit,
    scores_clean,
)


def _criteria(design: JudgingDesign | None) -> list[dict]:
    if design is None:
        return default_criteria()
    return design.criteria


def _tolerance(criteria: list[dict], settings) -> dict[str, float]:
    return scales.criteria_tolerances(criteria, settings.training_tolerances, points=settings.training_tolerance)


class AbsoluteProtocol(JudgingProtocol):
    slug = "absolute"
    name = "absolute rating"
    label = "Absolute: each pair rated on the design's criteria and scales"
    item_model = AssignmentItem
    judgment_model = Judgment
    fingerprint_key = "judgments"
    fingerprint_always = True
    judge_page = "judging:rate"
    instructions_template = "judging/absolute/instructions.html"
    training_items_template = "judging/absolute/_training_items.html"
    training_template = "judging/absolute/training.html"
    # The rating page's answers are digits (the scale's points), so B may go back.
    back_keys = ("B", "b", "Backspace")
    opens_in_background = True
    imports_judgments = True
    opens_onto_imported_judgments = True
    adaptive_allocation = True
    has_screening = True

    dashboard_answers = staticmethod(absolute_answers)
    report_compute = staticmethod(absolute_report_compute)

    def report_tables(self, result):
        return absolute_tables(result)

    assignments_write = staticmethod(absolute_assignments_write)

    def judgments_import(
        self, *, study: Study, data: bytes, filename: str, fmt: str | None = None, mode: str | None = None
    ) -> JudgmentImportSummary:
        # The long format of criterion values (annotation.importing.judgments), with its modes.
        return judgments_import_file(study=study, data=data, filename=filename, fmt=fmt, mode=mode or ImportMode.REFUSE)

    assignment_late = staticmethod(absolute_assignment_late)
    assignment_for_participant = staticmethod(absolute_assignment_for_participant)

    # Its items are rated on the rating page (its views.py); its attention
    # checks have a page of their own (``attention_page``), so it answers no entry_attention.

    def export_rows(self, *, study: Study, wide: bool) -> Iterator[list]:
        return criteria_wide_rows(study=study) if wide else criteria_tidy_rows(study=study)

    entry_next = staticmethod(item_next_for_judge)
    entry_previous = staticmethod(item_previous_for_judge)
    entry_for_token = staticmethod(item_for_judge)

    def answer_submit(self, **submission: Any) -> Any:
        return judgment_submit(**submission)

    def planner_pilot(self, *, study: Study, criterion: str | None = None) -> PlannerPilot:
        """The study's ratings as the planner's pilot: on ``criterion``, or ``overall`` when
        the design has it, else its first criterion. ``ValueError`` for a criterion the
        design does not have."""
        criteria = study_criteria(study=study)
        slugs = [c["slug"] for c in criteria]
        if criterion is None:
            criterion = PEM_REPORT_TARGET if PEM_REPORT_TARGET in slugs or not slugs else slugs[0]
        elif criterion not in slugs:
            raise ValueError(f"the design has no criterion {criterion!r} (it has {', '.join(slugs)})")
        scale: dict = next((c["scale"] for c in criteria if c["slug"] == criterion), {})
        # The simulator draws 1–5 points when discrete: only such a scale is simulated as one.
        discrete = not scale or (scale.get("type") == "points" and scale.get("min") == 1 and scale.get("max") == 5)
        return PlannerPilot(frame=judgments_frame(study=study), criterion=criterion, discrete=discrete)

    # --- training and attention checks: reference values on each criterion's scale -------

    def training_columns(self, *, design: JudgingDesign | None) -> tuple[str, ...]:
        return ("original", "candidate")

    def training_slugs(self, *, design: JudgingDesign | None) -> list[str]:
        return [c["slug"] for c in _criteria(design)]

    def training_item_clean(self, *, design: JudgingDesign | None, row, from_text: bool) -> tuple[dict, dict]:
        return training.training_item_errors(criteria=_criteria(design), row=row, from_text=from_text)

    def training_answer_clean(self, *, design: JudgingDesign | None, answers, from_text: bool) -> dict:
        criteria = _criteria(design)
        if from_text:  # a form posts text: read each value as its scale reads text
            answers = {c["slug"]: training.value_from_text(c, answers.get(c["slug"])) for c in criteria}
        return scores_clean(criteria=criteria, scores=answers)

    def training_verdicts(self, *, design: JudgingDesign | None, settings, values, expected) -> dict[str, str]:
        criteria = _criteria(design)
        return training.answer_feedback(
            values=values, expected=expected, criteria=criteria, tolerance=_tolerance(criteria, settings)
        )

    def training_correct(self, *, design: JudgingDesign | None, settings, values, expected) -> bool:
        criteria = _criteria(design)
        return training.answer_correct(
            values=values,
            expected=expected,
            criteria=criteria,
            checked=list(settings.training_criteria),
            tolerance=_tolerance(criteria, settings),
        )

    def training_item_for_judge(self, *, item) -> dict:
        return {"token": item.token, "original": item.original, "paraphrase": item.candidate}

    def attention_draw(self, *, design: JudgingDesign | None, rng) -> tuple[str, float]:
        c = rng.choice(_criteria(design))
        return c["slug"], rng.choice(list(scales.scale_unit(c["scale"]).attention_values))

    def attention_score(self, *, design: JudgingDesign | None, check, value) -> tuple[float | None, bool]:
        c = next((c for c in _criteria(design) if c["slug"] == check.criterion), None)
        try:
            answer = scales.value_clean(c["scale"], value, from_text=isinstance(value, str)) if c else None
        except ValueError as exc:
            raise JudgingError(str(exc), field_errors={"value": [str(exc)]}) from None
        tolerance = scales.scale_unit(c["scale"]).attention_tolerance if c else 0
        return answer, answer is not None and abs(float(answer) - check.expected) <= tolerance


ABSOLUTE = register(AbsoluteProtocol())
