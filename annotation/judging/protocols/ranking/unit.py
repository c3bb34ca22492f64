"""The ranking protocol as a unit: what it declares to the registry."""

from __future__ import annotations

from django.contrib.auth.models import User

from annotation.models import Study

from ...models import Assignment, JudgingDesign, RankingItem, RankingJudgment
from ..base import AnswerKey, JudgingProtocol, judge_progress
from ..registry import register
from .services import (
    ranking_assignment_for_participant,
    ranking_assignment_late,
    ranking_assignments_write,
    ranking_qc,
    ranking_release_unfinished,
    rankings_done,
    rankings_remaining,
)


class RankingProtocol(JudgingProtocol):
    slug = "ranking"
    name = "ranking"
    label = "Ranking: order k candidates of one original at once"
    judge_page = "judging:rank"
    instructions_template = "judging/rank_instructions.html"
    back_keys = ("Backspace",)
    exports = (("Export the rankings (JSONL)", "judging:export_rankings_jsonl"),
               ("Export the rankings (CSV)", "judging:export_rankings"))
    dashboard_answers = "metrics.dashboard.services.figures.ranking_answers"
    report_builder = "metrics.reports.ranking.ranking_report_build"
    report_settings = ("confidence_level", "seed", "n_boot")
    report_tables = "metrics.reports.ranking.ranking_tables"
    report_template = "reports/_ranking.html"
    qc_template = "judging/_rank_qc.html"

    def assignments_write(self, *, study: Study, design: JudgingDesign, judges: list[User]) -> tuple[int, int]:
        return ranking_assignments_write(study=study, design=design, judges=judges)

    def assignment_late(self, *, study: Study, design: JudgingDesign, judge: User) -> Assignment:
        return ranking_assignment_late(study=study, design=design, judge=judge)

    def assignment_for_participant(self, *, study: Study, design: JudgingDesign, judge: User,
                                   n_items: int | None) -> Assignment:
        return ranking_assignment_for_participant(study=study, design=design, judge=judge, n_items=n_items)

    def assignment_release_unfinished(self, *, assignment: Assignment) -> int:
        return ranking_release_unfinished(assignment=assignment)

    def items_done(self, *, assignment: Assignment) -> int:
        return rankings_done(assignment=assignment)

    def items_remaining(self, *, assignment: Assignment) -> int:
        return rankings_remaining(assignment=assignment)

    def progress_by_judge(self, *, study: Study) -> dict[int, tuple[int, int, float]]:
        return judge_progress(study=study, item_model=RankingItem, judgment_model=RankingJudgment)

    def answer_keys(self, *, design: JudgingDesign | None, rtl: bool) -> list[AnswerKey]:
        """The page's keys: a digit selects the paraphrase that shows it (places on the screen,
        the same on a mirrored page), the arrows move it along the list (which runs top to
        bottom whatever the direction), = ties or unties it."""
        k = design.ranking_k if design is not None else 6
        return [AnswerKey(value="select", keys=tuple(str(p) for p in range(1, k + 1))),
                AnswerKey(value="better", keys=("ArrowUp",)), AnswerKey(value="worse", keys=("ArrowDown",)),
                AnswerKey(value="tie", keys=("=",))]

    def instructions_context(self, *, design: JudgingDesign, rtl: bool) -> dict:
        return {"k": design.ranking_k, "asks_scores": design.ranking_scores}

    def qc_rows(self, *, study: Study) -> list[dict]:
        return ranking_qc(study=study)


RANKING = register(RankingProtocol())
