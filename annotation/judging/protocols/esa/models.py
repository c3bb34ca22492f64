"""ESA's tables: a judge's items (one candidate, with the spans shown pre-filled), their
judgments (spans and a 0–100 score), on the shared bases of :mod:`annotation.judging.models`,
and the study's imported span proposals. Table names and app label are the judging app's
(``judging_esaitem``, ``judging_esajudgment``, ``judging_esaproposal``)."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from annotation.models import Candidate, Study, TimeStampedModel

from ...models import Assignment, JudgingItemBase, JudgmentBase, item_constraints, judgment_constraints


class EsaItem(JudgingItemBase):
    """One candidate in one ESA judge's order (error-span protocol), as shown.

    ``proposed`` holds the spans shown pre-filled to this judge (span dicts as
    :mod:`metrics.core.spans.model` defines them: side, start, end, severity, category,
    missing; code-point offsets, end exclusive), copied when the item was written so that
    what was proposed is known whatever happens to its source later. Addressed by an
    opaque random token like every item.
    """

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="esa_items")
    candidate = models.ForeignKey(Candidate, on_delete=models.RESTRICT, related_name="+")
    is_control = models.BooleanField(default=False)
    proposed = models.JSONField(default=list, blank=True, help_text="Spans shown pre-filled (server-side).")

    class Meta(JudgingItemBase.Meta):
        app_label = "judging"
        constraints = [
            *item_constraints("esa"),
            models.UniqueConstraint(fields=["assignment", "candidate"], name="judging_uniq_esa_item_candidate"),
        ]

    def __str__(self) -> str:
        return f"ESA item #{self.position} of {self.assignment}"


class EsaProposal(TimeStampedModel):
    """The spans an imported proposal file proposes for one candidate of an ESA study (design
    ``esa_prefill == "imported"``), span dicts as :attr:`EsaItem.proposed`; opening copies
    them onto each judge's item. A new file replaces the study's proposals as a whole."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="esa_proposals")
    candidate = models.OneToOneField(Candidate, on_delete=models.CASCADE, related_name="+")
    spans = models.JSONField(default=list, blank=True)

    class Meta:
        app_label = "judging"
        ordering = ["study", "candidate"]

    def __str__(self) -> str:
        return f"ESA proposal for candidate {self.candidate_id}"


class EsaJudgment(JudgmentBase):
    """One submission of an ESA item: the spans kept, edited or added, and the 0–100 score.

    Revisions add rows; the latest counts (as every judgment).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="esa_judgments")
    item = models.ForeignKey(EsaItem, on_delete=models.CASCADE, related_name="judgments")
    judge = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="esa_judgments")
    spans = models.JSONField(
        default=list, help_text="Span dicts (side, start, end, severity, category, missing, proposed)."
    )
    score = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0), MaxValueValidator(100)])

    class Meta(JudgmentBase.Meta):
        app_label = "judging"
        constraints = [
            *judgment_constraints("esa"),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | (Q(score__gte=0) & Q(score__lte=100)), name="judging_esa_score_range"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.judge} on ESA item {self.item_id} (rev. {self.revision})"
