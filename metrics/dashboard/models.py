"""One row per watched study: the researcher's settings and the cached figures."""

from __future__ import annotations

import json
from decimal import Decimal

from django.core.validators import MinValueValidator
from django.db import models

from annotation.models import Study, TimeStampedModel


class Dashboard(TimeStampedModel):
    """A study's dashboard: the per-item rate for the projected cost, the cached snapshot
    of every figure (with the version stamp of the data it was computed from) and the last plan.

    ``snapshot_text`` is what the page and the API serve, the snapshot as JSON text (``snapshot``
    decodes it); the worker rewrites it when the study's version stamp moves
    (:func:`metrics.dashboard.selectors.dashboard_version`). It is stored once, as text: a refresh
    writes it and a poll sends it as it is.
    The heavy answers (agreement, ranking, correlations) keep their own stamp, so that
    they can be recomputed less often than the counts.
    """

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="dashboard")
    item_rate = models.DecimalField(
        max_digits=9,
        decimal_places=4,
        default=Decimal("0"),
        validators=[MinValueValidator(Decimal("0"))],
        help_text="What one judged item costs (platform fee included, if you like).",
    )
    currency = models.CharField(max_length=8, default="GBP")
    snapshot_text = models.TextField(
        blank=True,
        default="",
        help_text="The snapshot as the API sends it (JSON text): a poll sends these bytes instead of "
        "decoding and encoding hundreds of KiB each time.",
    )
    snapshot_version = models.CharField(max_length=64, blank=True)
    snapshot_at = models.DateTimeField(null=True, blank=True)
    answers_version = models.CharField(max_length=64, blank=True)
    answers_at = models.DateTimeField(null=True, blank=True)
    compute_seconds = models.FloatField(null=True, blank=True)
    refresh_wall_seconds = models.FloatField(
        null=True,
        blank=True,
        help_text="Wall time of the last refresh (the worker's and the database's): the "
        "next one rests in proportion (PARAEVAL_DASHBOARD_DUTY).",
    )
    refresh_queued_at = models.DateTimeField(null=True, blank=True)
    viewed_at = models.DateTimeField(null=True, blank=True, help_text="Last time a researcher polled it.")
    plan = models.JSONField(default=dict, blank=True, help_text="The last planner answer (see docs/planning.md).")
    plan_at = models.DateTimeField(null=True, blank=True)

    @property
    def snapshot(self) -> dict:
        """The snapshot as values, decoded from ``snapshot_text`` at each access (empty before the
        worker's first refresh)."""
        return json.loads(self.snapshot_text) if self.snapshot_text else {}

    def __str__(self) -> str:
        return f"dashboard of {self.study}"
