"""Absolute rating's tables: a judge's items (one candidate each) and their judgments (a
value per criterion), on the shared bases of :mod:`annotation.judging.models`. Table names
and app label are the judging app's (``judging_assignmentitem``, ``judging_judgment``)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models import Candidate, Study

from ...models import Assignment, JudgingItemBase, JudgmentBase, item_constraints, judgment_constraints


class AssignmentItem(JudgingItemBase):
    """One candidate in one judge's order, addressed by an opaque random token."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="items")
    # RESTRICT: a candidate someone is assigned to rate cannot silently disappear (the
    # study import's "replace" reports this as work that depends on the data), but it goes
    # with its study when the study itself is deleted (PROTECT blocked that for good).
    candidate = models.ForeignKey(Candidate, on_delete=models.RESTRICT, related_name="judging_items")

    class Meta(JudgingItemBase.Meta):
        app_label = "judging"
        constraints = [
            *item_constraints(),
            models.UniqueConstraint(fields=["assignment", "candidate"], name="judging_uniq_item_candidate"),
        ]
        indexes = [
            # "The judge's next item" reads only unrated rows, in order.
            models.Index(
                fields=["assignment", "position"], condition=Q(done_at__isnull=True), name="judging_item_todo"
            ),
            # Progress counts only rated rows (a few thousand of a study's 175,000 at 500 judges):
            # per judge and per item, read from this small index instead of every assigned row.
            models.Index(
                fields=["assignment", "candidate"], condition=Q(done_at__isnull=False), name="judging_item_done"
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.position} of {self.assignment}"


class Judgment(JudgmentBase):
    """One submission of a value per criterion for one item. Revisions add rows; the latest counts.

    ``values`` maps criterion slug → value on that criterion's scale (int for points and
    categories, int or float for a slider). A judgment from the judge's page or the API
    has every criterion of the design; an imported one may lack some (a missing cell in
    the imported file).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="judgments")
    item = models.ForeignKey(AssignmentItem, on_delete=models.CASCADE, related_name="judgments")
    judge = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="judgments")
    values = models.JSONField(default=dict, help_text="Criterion slug → value on that criterion's scale.")
    # The first protocol's timing fields carry help texts the others' lack (kept, so that no
    # migration changes them).
    served_at = models.DateTimeField(help_text="When the server sent the item to the judge.")
    seconds = models.FloatField(
        null=True, blank=True, help_text="Server time from serving to submitting (imported: the file's time, if any)."
    )
    active_seconds = models.FloatField(
        null=True, blank=True, help_text="Time the page was visible and focused (client)."
    )

    class Meta(JudgmentBase.Meta):
        app_label = "judging"
        constraints = judgment_constraints()
        indexes = [models.Index(fields=["study", "is_latest"], name="judging_judgment_latest")]

    def __str__(self) -> str:
        return f"{self.judge} on {self.item_id} (rev. {self.revision})"

    @property
    def scores(self) -> dict[str, int | float]:
        return dict(self.values)
