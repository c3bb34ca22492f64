"""The side-by-side protocol as a unit: what it declares to the registry."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext

from annotation.models import Study

from ...models import JudgingDesign
from ..base import AnswerKey, JudgingProtocol, PilotUnsupported, PlannerPilot
from ..registry import register
from . import screening as sbs_screening
from .models import ComparisonItem, ComparisonJudgment
from .report import side_by_side_answers, side_by_side_report_compute, side_by_side_tables
from .services import (
    pair_next_for_judge,
    pair_previous_for_judge,
    questions,
    side_by_side_assignment_for_participant,
    side_by_side_assignment_late,
    side_by_side_assignments_write,
    side_by_side_export_answers,
    side_by_side_export_questions,
    side_by_side_per_pair,
    side_by_side_qc,
    side_by_side_rated_per_system,
)

#: The keys of the three places on the screen, left to right: the key under an answer
#: chooses it, whichever way the page is mirrored.
SCREEN_KEYS = (("ArrowLeft", "1"), ("ArrowDown", "2"), ("ArrowRight", "3"))


class SideBySideProtocol(JudgingProtocol):
    slug = "comparison"
    name = "side-by-side comparison"
    label = "Side-by-side comparison: which of two candidates is better"
    item_model = ComparisonItem
    judgment_model = ComparisonJudgment
    fingerprint_key = "comparisons"
    judge_page = "judging:compare"
    instructions_template = "judging/side_by_side/instructions.html"
    # "B" is an answer here ("B is better"), so it never means "go back".
    back_keys = ("Backspace",)
    exports = (("Export the comparisons (CSV)", "judging:export_comparisons"),)
    report_settings = ("confidence_level", "seed", "n_boot")
    report_template = "judging/side_by_side/_report.html"
    qc_template = "judging/side_by_side/_qc.html"
    # Training pairs with reference answers, attention pairs drawn among the real ones (issue 24).
    has_screening = True
    training_items_template = "judging/side_by_side/_training_items.html"
    training_template = "judging/side_by_side/training.html"
    attention_page = "judging:compare"
    training_tolerances = False

    # Its items are pairs: the two candidate ids in order, shared by every judge of the pair.

    def dashboard_answers(self, *, study):
        return side_by_side_answers(study)

    report_compute = staticmethod(side_by_side_report_compute)

    def report_tables(self, result):
        return side_by_side_tables(result)

    def assigned_per_item(self, *, study: Study) -> dict:
        return side_by_side_per_pair(study=study, done=False)

    def done_per_item(self, *, study: Study) -> dict:
        return side_by_side_per_pair(study=study, done=True)

    def item_candidates(self, item) -> tuple[int, ...]:
        return tuple(item)

    rated_per_system = staticmethod(side_by_side_rated_per_system)
    export_questions = staticmethod(side_by_side_export_questions)
    export_answers = staticmethod(side_by_side_export_answers)

    def planner_pilot(self, *, study: Study, criterion: str | None = None) -> PlannerPilot:
        raise PilotUnsupported(
            "the planner estimates from scores, and a side-by-side study gives preferences between "
            "two paraphrases; plan it from stated assumptions (source 'stated': system means and spreads)"
        )

    assignments_write = staticmethod(side_by_side_assignments_write)
    assignment_late = staticmethod(side_by_side_assignment_late)
    assignment_for_participant = staticmethod(side_by_side_assignment_for_participant)
    entry_next = staticmethod(pair_next_for_judge)
    entry_previous = staticmethod(pair_previous_for_judge)
    entry_for_token = staticmethod(sbs_screening.pair_or_attention_for_judge)
    entry_attention = staticmethod(sbs_screening.attention_pair)

    def answer_submit(self, **submission: Any) -> Any:
        return sbs_screening.answer_submit(**submission)

    def answer_keys(self, *, design: JudgingDesign, rtl: bool) -> list[AnswerKey]:
        # Source order A, tie, B; drawn left to right, or right to left on a mirrored page.
        places = (2, 1, 0) if rtl else (0, 1, 2)
        return [AnswerKey(value=v, keys=SCREEN_KEYS[p]) for v, p in zip(("A", "tie", "B"), places)]

    def answers_for_page(self, *, design: JudgingDesign, rtl: bool) -> list[dict]:
        """Each answer as the page draws it: value, translated label, its keys (space
        separated, for the script), the key printed under it and its digit."""
        labels = {"A": gettext("A is better"), "tie": gettext("About the same"), "B": gettext("B is better")}
        return [
            {"value": k.value, "label": labels[k.value], "keys": " ".join(k.keys), "shown": k.shown, "digit": k.keys[1]}
            for k in self.answer_keys(design=design, rtl=rtl)
        ]

    def instructions_context(self, *, design: JudgingDesign, rtl: bool) -> dict:
        return {"questions": questions(design), "answers": self.answers_for_page(design=design, rtl=rtl)}

    # --- training and attention checks (:mod:`.screening`) -----------------------------------

    def training_columns(self, *, design: JudgingDesign | None) -> tuple[str, ...]:
        return ("original", "a", "b")

    def training_slugs(self, *, design: JudgingDesign | None) -> list[str]:
        return [q["slug"] for q in questions(design)] if design is not None else []

    def training_questions(self, *, design: JudgingDesign) -> list[dict]:
        return questions(design)

    def training_item_clean(self, *, design: JudgingDesign | None, row, from_text: bool) -> tuple[dict, dict]:
        return sbs_screening.training_item_clean(design=design, row=row)

    training_answer_clean = staticmethod(sbs_screening.training_answer_clean)

    def training_verdicts(self, *, design: JudgingDesign | None, settings, values, expected) -> dict[str, str]:
        return sbs_screening.training_verdicts(values=values, expected=expected)

    def training_correct(self, *, design: JudgingDesign | None, settings, values, expected) -> bool:
        return sbs_screening.training_correct(
            checked=list(settings.training_criteria), values=values, expected=expected
        )

    def training_item_for_judge(self, *, item) -> dict:
        return sbs_screening.training_item_for_judge(item)

    def training_page_context(
        self, *, design: JudgingDesign, item, posted: dict, field_errors: dict, rtl: bool
    ) -> dict:
        qs = questions(design)
        for q in qs:
            q["checked"] = posted.get(q["slug"])
            q["errors"] = field_errors.get(q["slug"], [])
        return {
            "questions": qs,
            "answers": self.answers_for_page(design=design, rtl=rtl),
            "pair": sbs_screening.training_item_for_judge(item),
        }

    def training_feedback_rows(self, *, design: JudgingDesign, values: dict, verdicts: dict) -> list[dict]:
        labels = {a["value"]: a["label"] for a in self.answers_for_page(design=design, rtl=False)}
        return [
            {"name": q["name"], "yours": labels.get(values.get(q["slug"]), "—"), "verdict": verdicts.get(q["slug"], "")}
            for q in questions(design)
        ]

    attention_draw = staticmethod(sbs_screening.attention_draw)
    attention_score = staticmethod(sbs_screening.attention_score)
    qc_rows = staticmethod(side_by_side_qc)


SIDE_BY_SIDE = register(SideBySideProtocol())
