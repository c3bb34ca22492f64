"""The ranking protocol as a unit: what it declares to the registry."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext

from annotation.models import Study
from metrics.core.stats.comparison import CONTROL_ACCURACY_BLANK

from ...enums import Protocol
from ...models import JudgingDesign
from ...screening import qc_rows_with_attention
from ..base import AnswerKey, DemoStudy, JudgingProtocol, PilotUnsupported, PlannerPilot, long_format_options_refuse
from ..registry import register
from . import screening as rank_screening
from .imports import RankingImportSummary, rankings_import_file
from .models import RankingItem, RankingJudgment
from .report import ranking_answers, ranking_report_compute
from .selectors import (
    ranking_export_answers,
    ranking_export_questions,
    ranking_per_set,
    ranking_pilot_frame,
    ranking_qc,
    ranking_rated_per_system,
)
from .services import (
    ranking_assignment_for_participant,
    ranking_assignment_late,
    ranking_assignments_write,
    ranking_next_for_judge,
    ranking_previous_for_judge,
)
from .tables import ranking_tables


class RankingProtocol(JudgingProtocol):
    slug = "ranking"
    name = "ranking"
    label = "Ranking: order k candidates of one original at once"
    item_model = RankingItem
    judgment_model = RankingJudgment
    # Twelve verses of John after those of the ESA demo, all four versions of each ranked
    # together, one identical copy and one unrelated verse per original as controls (each in
    # a set with three versions).
    demo = DemoStudy(
        name="Demo: ranking 4 versions (Gospel of John)",
        participant_title="Rank the versions: Gospel of John",
        description="Ranking on 12 verses of John from the demo study: the King James Version as originals, the "
        "World English Bible and the three machine systems ranked together, four at once.",
        verses=slice(12, 24),
        design={
            "protocol": Protocol.RANKING,
            "ranking_k": 4,
            "seed": 2025,
            "control_counts": {"identical": 1, "random": 1, "unigram": 0},
        },
        said="ranking: '{name}' opened with k = 4; {judges} judges × {items} sets of 4 (with {controls} controls)",
    )
    fingerprint_key = "rankings"
    judge_page = "judging:rank"
    instructions_template = "judging/ranking/instructions.html"
    back_keys = ("Backspace",)
    exports = (
        ("Export the rankings (JSONL)", "judging:export_rankings_jsonl"),
        ("Export the rankings (CSV)", "judging:export_rankings"),
    )
    report_settings = ("confidence_level", "seed", "n_boot")
    report_template = "judging/ranking/_report.html"
    qc_template = "judging/ranking/_qc.html"
    # Training sets with a reference order, attention sets drawn among the real ones (:mod:`.screening`).
    has_screening = True
    training_items_template = "judging/ranking/_training_items.html"
    training_template = "judging/ranking/training.html"
    attention_page = "judging:rank"
    training_tolerances = False
    training_questions_checked = False

    # Its items are sets: (original, candidate ids), shared by every judge of the set.

    def dashboard_answers(self, *, study):
        return ranking_answers(study)

    report_compute = staticmethod(ranking_report_compute)

    def report_tables(self, result):
        return ranking_tables(result)

    def assigned_per_item(self, *, study: Study) -> dict:
        return ranking_per_set(study=study, done=False)

    def done_per_item(self, *, study: Study) -> dict:
        return ranking_per_set(study=study, done=True)

    def item_candidates(self, item) -> tuple[int, ...]:
        return tuple(item[1])

    rated_per_system = staticmethod(ranking_rated_per_system)
    export_questions = staticmethod(ranking_export_questions)
    export_answers = staticmethod(ranking_export_answers)

    def judgments_import(
        self, *, study: Study, data: bytes, filename: str, fmt: str | None = None, mode: str | None = None
    ) -> RankingImportSummary:
        # A ranking file: JSON Lines, best first, ties as nested lists (.parsers).
        long_format_options_refuse(unit=self, filename=filename, fmt=fmt, mode=mode)
        return rankings_import_file(study=study, data=data, filename=filename)

    def planner_pilot(self, *, study: Study, criterion: str | None = None) -> PlannerPilot:
        # The planner simulates scores: a ranking's 0–100 scores are some, its orders are not.
        if not JudgingDesign.objects.get(study=study).ranking_scores:
            raise PilotUnsupported(
                "the planner estimates from scores, and this ranking study asks for orders only; "
                "plan it from stated assumptions (source 'stated': system means and spreads), "
                "or ask judges for 0–100 scores in the design"
            )
        if criterion not in (None, "score"):
            raise ValueError(f"a ranking study's pilot is its 0–100 scores ('score'), not {criterion!r}")
        return PlannerPilot(frame=ranking_pilot_frame(study=study), criterion="score", discrete=False)

    assignments_write = staticmethod(ranking_assignments_write)
    assignment_late = staticmethod(ranking_assignment_late)
    assignment_for_participant = staticmethod(ranking_assignment_for_participant)
    entry_next = staticmethod(ranking_next_for_judge)
    entry_previous = staticmethod(ranking_previous_for_judge)
    entry_for_token = staticmethod(rank_screening.entry_for_judge)
    entry_attention = staticmethod(rank_screening.attention_entry)

    def answer_submit(self, **submission: Any) -> Any:
        return rank_screening.answer_submit(**submission)

    def answer_keys(self, *, design: JudgingDesign | None, rtl: bool) -> list[AnswerKey]:
        """The page's keys: a digit selects the paraphrase that shows it (places on the screen,
        the same on a mirrored page), the arrows move it along the list (which runs top to
        bottom whatever the direction), = ties or unties it."""
        k = design.ranking_k if design is not None else 6
        return [
            AnswerKey(value="select", keys=tuple(str(p) for p in range(1, k + 1))),
            AnswerKey(value="better", keys=("ArrowUp",)),
            AnswerKey(value="worse", keys=("ArrowDown",)),
            AnswerKey(value="tie", keys=("=",)),
        ]

    def instructions_context(self, *, design: JudgingDesign, rtl: bool) -> dict:
        return {"k": design.ranking_k, "asks_scores": design.ranking_scores}

    def qc_rows(self, *, study: Study) -> list[dict]:
        return qc_rows_with_attention(study=study, rows=ranking_qc(study=study), blank=CONTROL_ACCURACY_BLANK)

    # --- training and attention checks (:mod:`.screening`) -----------------------------------

    def training_columns(self, *, design: JudgingDesign | None) -> tuple[str, ...]:
        return ("original", "p1", "p2", "reference")

    def training_slugs(self, *, design: JudgingDesign | None) -> list[str]:
        return [rank_screening.QUESTION]

    def training_questions(self, *, design: JudgingDesign) -> list[dict]:
        return [{"slug": rank_screening.QUESTION, "name": gettext("Order of the paraphrases")}]

    def training_item_clean(self, *, design: JudgingDesign | None, row, from_text: bool) -> tuple[dict, dict]:
        return rank_screening.training_item_clean(design=design, row=row)

    training_answer_clean = staticmethod(rank_screening.training_answer_clean)

    def training_verdicts(self, *, design: JudgingDesign | None, settings, values, expected) -> dict[str, str]:
        return rank_screening.training_verdicts(values=values, expected=expected)

    def training_correct(self, *, design: JudgingDesign | None, settings, values, expected) -> bool:
        return rank_screening.training_correct(values=values, expected=expected)

    def training_item_for_judge(self, *, item) -> dict:
        return rank_screening.training_item_for_judge(item)

    def training_page_context(
        self, *, design: JudgingDesign, item, posted: dict, field_errors: dict, rtl: bool
    ) -> dict:
        shown = rank_screening.training_item_for_judge(item)
        candidates = [
            {
                "place": c["place"],
                "text": c["text"],
                "rank": posted.get(f"rank_{c['place']}", ""),
                "rank_errors": field_errors.get(f"rank_{c['place']}", []),
                "score": "",
                "score_errors": [],
            }
            for c in shown["candidates"]
        ]
        return {
            "training": shown,
            "candidates": candidates,
            "k": len(candidates),
            "order_errors": field_errors.get("order", []),
        }

    def training_feedback_rows(self, *, design: JudgingDesign, values: dict, verdicts: dict) -> list[dict]:
        ranks = rank_screening.ranks_of(values.get("order") or [])
        return [
            {
                "name": gettext("Paraphrase %(place)s") % {"place": place},
                "yours": gettext("rank %(rank)s") % {"rank": ranks.get(int(place), "—")},
                "verdict": verdict,
            }
            for place, verdict in sorted(verdicts.items(), key=lambda kv: int(kv[0]))
        ]

    def attention_draw(self, *, design: JudgingDesign | None, rng) -> tuple[str, float]:
        return rank_screening.attention_draw(rng=rng)

    def attention_score(self, *, design: JudgingDesign | None, check, value) -> tuple[float | None, bool]:
        return rank_screening.attention_score(check=check, value=value)


RANKING = register(RankingProtocol())
