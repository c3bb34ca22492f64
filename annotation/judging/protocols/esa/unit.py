"""The ESA protocol as a unit: what it declares to the registry."""

from __future__ import annotations

from typing import Any

from annotation.models import Study

from ...enums import EsaPrefill, Protocol
from ...models import JudgingDesign
from ...screening import qc_rows_with_attention
from ..base import AnswerKey, DemoStudy, JudgingProtocol, PlannerPilot, long_format_options_refuse
from ..registry import register
from . import screening as esa_screening
from .imports import EsaImportSummary, esa_judgments_import
from .models import EsaItem, EsaJudgment
from .report import esa_answers, esa_report_compute, esa_tables
from .selectors import EXPORT_QUESTIONS, esa_export_answers, esa_pilot_frame, esa_qc
from .services import (
    categories_allowed,
    esa_assignment_for_participant,
    esa_assignment_late,
    esa_assignments_write,
    esa_item_next_for_judge,
    esa_item_previous_for_judge,
)
from .words import page_words

#: The keys that give a selected span its severity (the page's answers).
SEVERITY_KEYS = (("minor", ("1",)), ("major", ("2",)))


class EsaProtocol(JudgingProtocol):
    slug = "esa"
    name = "error span annotation"
    label = "Error span annotation (ESA): mark the wrong spans, minor or major, then score 0–100"
    item_model = EsaItem
    judgment_model = EsaJudgment
    # Twelve verses of John (the first that demo_verses lets through), all four versions of
    # each, one identical copy and one unrelated verse per original as controls.
    demo = DemoStudy(
        name="Demo: error spans (ESA), Gospel of John",
        participant_title="Mark the errors: Gospel of John",
        description="Error span annotation on 12 verses of John from the demo study: the King James Version as "
        "originals, the World English Bible and the three machine systems as candidates, spans pre-filled by "
        "paraeval's word aligner (unaligned words as possible additions and omissions).",
        verses=slice(0, 12),
        design={
            "protocol": Protocol.ESA,
            "esa_prefill": EsaPrefill.ALIGNER,
            "seed": 2024,
            "control_counts": {"identical": 1, "random": 1, "unigram": 0},
        },
        said="error spans (ESA): '{name}' opened, spans pre-filled by the aligner; "
        "{judges} judges × {items} items (with {controls} controls)",
    )
    fingerprint_key = "esa"
    judge_page = "judging:esa"
    instructions_template = "judging/esa/instructions.html"
    back_keys = ("Backspace",)
    exports = (
        ("Export the error spans (JSON Lines)", "judging:export_esa_jsonl"),
        ("Export the ESA judgments (CSV)", "judging:export_esa_csv"),
    )
    report_template = "judging/esa/_report.html"
    report_settings = ("confidence_level", "seed", "n_boot")
    qc_template = "judging/esa/_qc.html"
    # Training items with a reference score range and major span, attention items drawn
    # among the real ones (:mod:`.screening`).
    has_screening = True
    training_items_template = "judging/esa/_training_items.html"
    training_template = "judging/esa/training.html"
    training_feedback_template = "judging/esa/_training_feedback.html"
    attention_page = "judging:esa"
    training_tolerances = False

    def dashboard_answers(self, *, study):
        return esa_answers(study)

    report_compute = staticmethod(esa_report_compute)

    def report_tables(self, result):
        return esa_tables(result)

    def export_questions(self, *, study: Study) -> list[str] | None:
        return list(EXPORT_QUESTIONS)

    def judgments_import(
        self, *, study: Study, data: bytes, filename: str, fmt: str | None = None, mode: str | None = None
    ) -> EsaImportSummary:
        # A span file: paraeval's JSON Lines, Appraise's or Pearmut's spans (.parsers).
        long_format_options_refuse(unit=self, filename=filename, fmt=fmt, mode=mode)
        return esa_judgments_import(study=study, data=data, filename=filename)

    export_answers = staticmethod(esa_export_answers)

    def planner_pilot(self, *, study: Study, criterion: str | None = None) -> PlannerPilot:
        # One score per item, 0–100: the planner's criterion is that score.
        if criterion not in (None, "score"):
            raise ValueError(f"an ESA study has one score per item ('score', 0–100), not {criterion!r}")
        return PlannerPilot(frame=esa_pilot_frame(study=study), criterion="score", discrete=False)

    assignments_write = staticmethod(esa_assignments_write)
    assignment_late = staticmethod(esa_assignment_late)
    assignment_for_participant = staticmethod(esa_assignment_for_participant)
    entry_next = staticmethod(esa_item_next_for_judge)
    entry_previous = staticmethod(esa_item_previous_for_judge)
    entry_for_token = staticmethod(esa_screening.item_for_judge)
    entry_attention = staticmethod(esa_screening.attention_item)

    def answer_submit(self, **submission: Any) -> Any:
        return esa_screening.answer_submit(**submission)

    def answer_keys(self, *, design: JudgingDesign, rtl: bool) -> list[AnswerKey]:
        # Severities are typed by digit, whichever way the page runs.
        return [AnswerKey(value=v, keys=k) for v, k in SEVERITY_KEYS]

    def instructions_context(self, *, design: JudgingDesign, rtl: bool) -> dict:
        return {"categories": list(design.esa_categories), "prefilled": design.esa_prefill != EsaPrefill.NONE}

    def qc_rows(self, *, study: Study) -> list[dict]:
        return qc_rows_with_attention(
            study=study,
            rows=esa_qc(study=study),
            blank={"n": 0, "passed": 0, "rate": None, "passes": None, "failures": []},
        )

    # --- training and attention checks (:mod:`.screening`) -----------------------------------

    def training_columns(self, *, design: JudgingDesign | None) -> tuple[str, ...]:
        return ("original", "candidate")

    def training_slugs(self, *, design: JudgingDesign | None) -> list[str]:
        return list(esa_screening.SLUGS)

    def training_questions(self, *, design: JudgingDesign) -> list[dict]:
        return [{"slug": "score", "name": "Score (0–100)"}, {"slug": "major", "name": "A major error span"}]

    def training_item_clean(self, *, design: JudgingDesign | None, row, from_text: bool) -> tuple[dict, dict]:
        return esa_screening.training_item_clean(row=row)

    training_answer_clean = staticmethod(esa_screening.answer_clean)
    training_answer_check = staticmethod(esa_screening.training_answer_check)

    def training_verdicts(self, *, design: JudgingDesign | None, settings, values, expected) -> dict[str, str]:
        return esa_screening.training_verdicts(values=values, expected=expected)

    def training_correct(self, *, design: JudgingDesign | None, settings, values, expected) -> bool:
        return esa_screening.training_correct(
            checked=list(settings.training_criteria), values=values, expected=expected
        )

    def training_item_for_judge(self, *, item) -> dict:
        return esa_screening.training_item_for_judge(item)

    def training_page_context(
        self, *, design: JudgingDesign, item, posted: dict, field_errors: dict, rtl: bool
    ) -> dict:
        spans = esa_screening.posted_spans(posted)
        score = esa_screening.posted_score(posted)
        data = {
            "original": item.original,
            "candidate": item.candidate,
            "spans": spans,
            "score": score,
            "categories": categories_allowed(design),
            "pending": False,
            "words": page_words(),
        }
        return {
            "esa_data": data,
            "score_value": "" if score is None else f"{score:g}",
            "back_keys": self.back_keys,
            "training_item": esa_screening.training_item_for_judge(item),
        }

    def training_feedback_rows(self, *, design: JudgingDesign, values: dict, verdicts: dict) -> list[dict]:
        return esa_screening.training_feedback_rows(values=values, verdicts=verdicts)

    def training_feedback_context(self, *, design: JudgingDesign | None, item, values: dict) -> dict:
        return {"your_spans": esa_screening.training_feedback_spans(item=item, values=values)}

    def attention_draw(self, *, design: JudgingDesign | None, rng) -> tuple[str, float]:
        return esa_screening.attention_draw(rng=rng)

    attention_score = staticmethod(esa_screening.attention_score)


ESA = register(EsaProtocol())
