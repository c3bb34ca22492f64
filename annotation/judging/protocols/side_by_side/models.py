"""Side by side's tables: a judge's pairs (two candidates, sides drawn) and their judgments
("A", "tie" or "B" per question), on the shared bases of :mod:`annotation.judging.models`.
Table names and app label are the judging app's (``judging_comparisonitem``,
``judging_comparisonjudgment``)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models import Candidate, Study

from ...models import Assignment, JudgingItemBase, JudgmentBase, item_constraints, judgment_constraints


class ComparisonItem(JudgingItemBase):
    """One pair of candidates in one judge's order (comparison protocol), as shown.

    ``left`` is the candidate shown on the left ("A"), ``right`` the one on the right
    ("B"): the side was drawn per judge and item and is recorded here, server-side
    only. Addressed by an opaque random token like every item.
    """

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="comparison_items")
    left = models.ForeignKey(Candidate, on_delete=models.RESTRICT, related_name="+")
    right = models.ForeignKey(Candidate, on_delete=models.RESTRICT, related_name="+")
    is_control = models.BooleanField(default=False, help_text="A control candidate against a genuine one.")

    class Meta(JudgingItemBase.Meta):
        app_label = "judging"
        constraints = [
            *item_constraints("cmp"),
            models.CheckConstraint(condition=~Q(left=models.F("right")), name="judging_cmp_item_two_candidates"),
        ]

    def __str__(self) -> str:
        return f"pair #{self.position} of {self.assignment}"


class ComparisonJudgment(JudgmentBase):
    """One submission of answers ("A", "tie" or "B" per question) for one pair. Revisions add rows."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="comparison_judgments")
    item = models.ForeignKey(ComparisonItem, on_delete=models.CASCADE, related_name="judgments")
    judge = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="comparison_judgments")
    values = models.JSONField(default=dict, help_text="Question slug → 'A' (left better), 'tie' or 'B' (right better).")

    class Meta(JudgmentBase.Meta):
        app_label = "judging"
        constraints = judgment_constraints("cmp")

    def __str__(self) -> str:
        return f"{self.judge} on pair {self.item_id} (rev. {self.revision})"
