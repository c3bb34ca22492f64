"""Ranking's tables: a judge's sets (k candidates of one original, in screen order) and their
judgments (an order with ties, optionally a 0–100 score each), on the shared bases of
:mod:`annotation.judging.models`. Table names and app label are the judging app's
(``judging_rankingitem``, ``judging_rankingjudgment``)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotation.models import Original, Study

from ...models import Assignment, JudgingItemBase, JudgmentBase, item_constraints, judgment_constraints


class RankingItem(JudgingItemBase):
    """k candidates of one original in one judge's order (ranking protocol), as shown.

    ``candidates`` lists the candidates' ids in the order drawn on the judge's screen (a
    seeded shuffle per judge and item), server-side only: the page names them 1..k.
    """

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="ranking_items")
    original = models.ForeignKey(Original, on_delete=models.RESTRICT, related_name="+")
    candidates = models.JSONField(help_text="Candidate ids in screen order (server-side only).")
    is_control = models.BooleanField(default=False, help_text="A control candidate is among the k.")

    class Meta(JudgingItemBase.Meta):
        app_label = "judging"
        constraints = item_constraints("rank")

    def __str__(self) -> str:
        return f"ranking #{self.position} of {self.assignment}"


class RankingJudgment(JudgmentBase):
    """One submission of a ranking: the candidates' ids best first, ties as groups, and
    optionally a 0–100 score each. Revisions add rows; the latest counts."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="ranking_judgments")
    item = models.ForeignKey(RankingItem, on_delete=models.CASCADE, related_name="judgments")
    judge = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="ranking_judgments")
    groups = models.JSONField(help_text="Candidate ids best first; a list of ids is a tie.")
    scores = models.JSONField(default=dict, blank=True, help_text="Candidate id (as text) → 0–100 score, when asked.")

    class Meta(JudgmentBase.Meta):
        app_label = "judging"
        constraints = judgment_constraints("rank")

    def __str__(self) -> str:
        return f"{self.judge} on ranking {self.item_id} (rev. {self.revision})"
