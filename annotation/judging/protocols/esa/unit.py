"""The ESA protocol as a unit: what it declares to the registry."""

from __future__ import annotations

from django.contrib.auth.models import User

from annotation.models import Study

from ...enums import EsaPrefill
from ...models import Assignment, EsaItem, EsaJudgment, JudgingDesign
from ..base import AnswerKey, JudgingProtocol, judge_progress
from ..registry import register
from .services import (
    esa_assignment_for_participant,
    esa_assignment_late,
    esa_assignments_write,
    esa_qc,
    esa_release_unfinished,
    items_done,
    items_remaining,
)

#: The keys that give a selected span its severity (the page's answers).
SEVERITY_KEYS = (("minor", ("1",)), ("major", ("2",)))


class EsaProtocol(JudgingProtocol):
    slug = "esa"
    name = "error span annotation"
    label = "Error span annotation (ESA): mark the wrong spans, minor or major, then score 0–100"
    judge_page = "judging:esa"
    instructions_template = "judging/esa_instructions.html"
    back_keys = ("Backspace",)
    exports = (("Export the error spans (JSON Lines)", "judging:export_esa_jsonl"),
               ("Export the ESA judgments (CSV)", "judging:export_esa_csv"))
    report_builder = "metrics.reports.esa.esa_report_build"
    report_tables = "metrics.reports.esa.esa_tables"
    report_template = "reports/_esa.html"
    report_settings = ("confidence_level", "seed", "n_boot")
    dashboard_answers = "metrics.dashboard.services.figures.esa_answers"
    qc_template = "judging/_esa_qc.html"

    def assignments_write(self, *, study: Study, design: JudgingDesign, judges: list[User]) -> tuple[int, int]:
        return esa_assignments_write(study=study, design=design, judges=judges)

    def assignment_late(self, *, study: Study, design: JudgingDesign, judge: User) -> Assignment:
        return esa_assignment_late(study=study, design=design, judge=judge)

    def assignment_for_participant(self, *, study: Study, design: JudgingDesign, judge: User,
                                   n_items: int | None) -> Assignment:
        return esa_assignment_for_participant(study=study, design=design, judge=judge, n_items=n_items)

    def assignment_release_unfinished(self, *, assignment: Assignment) -> int:
        return esa_release_unfinished(assignment=assignment)

    def items_done(self, *, assignment: Assignment) -> int:
        return items_done(assignment=assignment)

    def items_remaining(self, *, assignment: Assignment) -> int:
        return items_remaining(assignment=assignment)

    def progress_by_judge(self, *, study: Study) -> dict[int, tuple[int, int, float]]:
        return judge_progress(study=study, item_model=EsaItem, judgment_model=EsaJudgment)

    def answer_keys(self, *, design: JudgingDesign, rtl: bool) -> list[AnswerKey]:
        # Severities are typed by digit, whichever way the page runs.
        return [AnswerKey(value=v, keys=k) for v, k in SEVERITY_KEYS]

    def instructions_context(self, *, design: JudgingDesign, rtl: bool) -> dict:
        return {"categories": list(design.esa_categories), "prefilled": design.esa_prefill != EsaPrefill.NONE}

    def qc_rows(self, *, study: Study) -> list[dict]:
        return esa_qc(study=study)


ESA = register(EsaProtocol())
