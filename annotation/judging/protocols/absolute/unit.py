"""The absolute protocol as a unit: what it declares to the registry."""

from __future__ import annotations

from django.contrib.auth.models import User

from annotation.models import Study

from ... import screening
from ...models import Assignment, AssignmentItem, JudgingDesign, Judgment
from ..base import JudgingProtocol, judge_progress
from ..registry import register
from .services import (
    absolute_assignment_for_participant,
    absolute_assignment_late,
    absolute_assignments_write,
    absolute_release_unfinished,
)


class AbsoluteProtocol(JudgingProtocol):
    slug = "absolute"
    name = "absolute rating"
    label = "Absolute: each pair rated on the design's criteria and scales"
    judge_page = "judging:rate"
    instructions_template = "judging/instructions.html"
    # The rating page's answers are digits (the scale's points), so B may go back.
    back_keys = ("b", "B", "Backspace")
    opens_in_background = True
    imports_judgments = True
    dashboard_answers = "metrics.dashboard.services.figures.absolute_answers"
    adaptive_allocation = True
    has_screening = True

    def assignments_write(self, *, study: Study, design: JudgingDesign, judges: list[User]) -> tuple[int, int]:
        return absolute_assignments_write(study=study, design=design, judges=judges)

    def assignment_late(self, *, study: Study, design: JudgingDesign, judge: User) -> Assignment:
        return absolute_assignment_late(study=study, design=design, judge=judge)

    def assignment_for_participant(self, *, study: Study, design: JudgingDesign, judge: User,
                                   n_items: int | None) -> Assignment:
        return absolute_assignment_for_participant(study=study, design=design, judge=judge, n_items=n_items)

    def assignment_release_unfinished(self, *, assignment: Assignment) -> int:
        return absolute_release_unfinished(assignment=assignment)

    def items_done(self, *, assignment: Assignment) -> int:
        return AssignmentItem.objects.filter(assignment=assignment, done_at__isnull=False).count()

    def progress_by_judge(self, *, study: Study) -> dict[int, tuple[int, int, float]]:
        return judge_progress(study=study, item_model=AssignmentItem, judgment_model=Judgment)

    def items_remaining(self, *, assignment: Assignment) -> int:
        return AssignmentItem.objects.filter(assignment=assignment, done_at__isnull=True).count()

    def qc_auto_check(self, *, assignment: Assignment) -> bool:
        return screening.after_judgment(assignment=assignment)


ABSOLUTE = register(AbsoluteProtocol())
