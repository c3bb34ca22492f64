"""The adaptive-allocation setting of a study and its cached per-system tallies."""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from annotation.models import Study, TimeStampedModel


class AdaptiveAllocation(TimeStampedModel):
    """Whether a study hands items out adaptively, and when it may stop.

    ``priorities`` (system name → priority) and ``wrong_bound`` (an upper bound on the
    chance that the ranking is wrong) are refreshed from the judgments at most every
    few seconds (:func:`annotation.adaptive.refresh.adaptive_refresh`), from the judges
    who count (not excluded by a researcher, not screened out). The stop needs
    ``min_judgments``, ``min_judges`` distinct judges and no judge above ``max_judge_share``.
    """

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="adaptive_allocation")
    enabled = models.BooleanField(default=False)
    level = models.FloatField(
        default=0.05,
        validators=[MinValueValidator(0.001), MaxValueValidator(0.5)],
        help_text="Stop when P(the ranking is wrong) is at most this.",
    )
    stop_when_stable = models.BooleanField(
        default=False, help_text="Release the items left once the ranking is stable."
    )
    min_judgments = models.PositiveIntegerField(default=30, help_text="Never stop before this many judgments.")
    # One judge's judgments are not independent evidence about the systems: a judge who scores
    # by something else than quality (text similarity, say) agrees with themselves perfectly.
    min_judges = models.PositiveSmallIntegerField(
        default=3,
        validators=[MinValueValidator(2), MaxValueValidator(1000)],
        help_text="Never stop before this many judges (not excluded, not screened out) have judged.",
    )
    max_judge_share = models.FloatField(
        default=0.5,
        validators=[MinValueValidator(0.05), MaxValueValidator(0.9)],
        help_text="Never stop while one judge gave more than this share of the judgments counted.",
    )
    window = models.PositiveSmallIntegerField(
        default=2,
        validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text="The next item is chosen among this many of the judge's next items in their seeded order.",
    )
    criterion = models.CharField(max_length=40, default="overall")
    priorities = models.JSONField(default=dict, blank=True)
    wrong_bound = models.FloatField(null=True, blank=True)
    judgments_seen = models.PositiveIntegerField(default=0)
    judges_seen = models.PositiveIntegerField(default=0)
    largest_judge_share = models.FloatField(null=True, blank=True)
    refreshed_at = models.DateTimeField(null=True, blank=True)
    stopped_at = models.DateTimeField(null=True, blank=True)
    stop_reason = models.TextField(blank=True)

    def __str__(self) -> str:
        return f"adaptive allocation of {self.study}"
