"""The side-by-side protocol as a unit: what it declares to the registry."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.utils.translation import gettext

from annotation.models import Study

from ...models import Assignment, ComparisonItem, ComparisonJudgment, JudgingDesign
from ..base import AnswerKey, JudgingProtocol, judge_progress
from ..registry import register
from .services import (
    comparison_assignment_for_participant,
    comparison_assignment_late,
    comparison_assignments_write,
    comparison_qc,
    comparison_release_unfinished,
    pairs_done,
    pairs_remaining,
    questions,
)

#: The keys of the three places on the screen, left to right: the key under an answer
#: chooses it, whichever way the page is mirrored.
SCREEN_KEYS = (("ArrowLeft", "1"), ("ArrowDown", "2"), ("ArrowRight", "3"))


class SideBySideProtocol(JudgingProtocol):
    slug = "comparison"
    name = "side-by-side comparison"
    label = "Side-by-side comparison: which of two candidates is better"
    judge_page = "judging:compare"
    instructions_template = "judging/compare_instructions.html"
    # "B" is an answer here ("B is better"), so it never means "go back".
    back_keys = ("Backspace",)
    exports = (("Export the comparisons (CSV)", "judging:export_comparisons"),)
    dashboard_answers = "metrics.dashboard.services.figures.comparison_answers"
    report_builder = "metrics.reports.comparison.comparison_report_build"
    report_settings = ("confidence_level", "seed", "n_boot")
    report_tables = "metrics.reports.comparison.comparison_tables"
    report_template = "reports/_comparison.html"

    def assignments_write(self, *, study: Study, design: JudgingDesign, judges: list[User]) -> tuple[int, int]:
        return comparison_assignments_write(study=study, design=design, judges=judges)

    def assignment_late(self, *, study: Study, design: JudgingDesign, judge: User) -> Assignment:
        return comparison_assignment_late(study=study, design=design, judge=judge)

    def assignment_for_participant(self, *, study: Study, design: JudgingDesign, judge: User,
                                   n_items: int | None) -> Assignment:
        return comparison_assignment_for_participant(study=study, design=design, judge=judge, n_items=n_items)

    def assignment_release_unfinished(self, *, assignment: Assignment) -> int:
        return comparison_release_unfinished(assignment=assignment)

    def items_done(self, *, assignment: Assignment) -> int:
        return pairs_done(assignment=assignment)

    def progress_by_judge(self, *, study: Study) -> dict[int, tuple[int, int, float]]:
        return judge_progress(study=study, item_model=ComparisonItem, judgment_model=ComparisonJudgment)

    def items_remaining(self, *, assignment: Assignment) -> int:
        return pairs_remaining(assignment=assignment)

    def answer_keys(self, *, design: JudgingDesign, rtl: bool) -> list[AnswerKey]:
        # Source order A, tie, B; drawn left to right, or right to left on a mirrored page.
        places = (2, 1, 0) if rtl else (0, 1, 2)
        return [AnswerKey(value=v, keys=SCREEN_KEYS[p]) for v, p in zip(("A", "tie", "B"), places)]

    def answers_for_page(self, *, design: JudgingDesign, rtl: bool) -> list[dict]:
        """Each answer as the page draws it: value, translated label, its keys (space
        separated, for the script), the key printed under it and its digit."""
        labels = {"A": gettext("A is better"), "tie": gettext("About the same"), "B": gettext("B is better")}
        return [{"value": k.value, "label": labels[k.value], "keys": " ".join(k.keys), "shown": k.shown,
                 "digit": k.keys[1]} for k in self.answer_keys(design=design, rtl=rtl)]

    def instructions_context(self, *, design: JudgingDesign, rtl: bool) -> dict:
        return {"questions": questions(design), "answers": self.answers_for_page(design=design, rtl=rtl)}

    def qc_rows(self, *, study: Study) -> list[dict]:
        return comparison_qc(study=study)


SIDE_BY_SIDE = register(SideBySideProtocol())
