"""Metric runs and their scores, uploaded metric resources, trained PEM models.

A :class:`MetricRun` is one metric (a registry slug, ``metrics.core.registry``)
with one set of parameters and resources over one study's candidates. Its work
is split into :class:`MetricRunChunk` rows that Celery workers process in
parallel; each chunk writes one :class:`MetricScore` per candidate. The run's
state (status, progress, errors, timings) lives here, never in a Celery result
backend. See ``metrics/tasks.py`` for how chunks fan out and finish.
"""

from __future__ import annotations

import math

from django.conf import settings
from django.db import models

from annotation.models import Candidate, Study, TimeStampedModel
from config.jobs.enums import JobStatus
from config.jobs.models import BackgroundJob

from .enums import Against, ResourceKind


class MetricResource(TimeStampedModel):
    """A file a metric reads (phrase table, language model, vectors, PEM model).

    Stored under ``MEDIA_ROOT/metric-resources/``; ``sha256`` is the hash of the
    whole file (the metric's signature records its first 12 hex digits). Usable
    by its owner and by the researchers of ``study`` (where it was uploaded or
    trained), on any study they manage.
    """

    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=32, choices=ResourceKind.choices, default=ResourceKind.OTHER)
    file = models.FileField(upload_to="metric-resources/%Y/%m/", max_length=500)
    filename = models.CharField(max_length=255, help_text="Name of the uploaded file.")
    sha256 = models.CharField(max_length=64)
    size = models.PositiveBigIntegerField(default=0)
    description = models.TextField(blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    study = models.ForeignKey(Study, on_delete=models.SET_NULL, null=True, blank=True, related_name="metric_resources")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_kind_display()}, {self.sha256[:12]})"

    @property
    def short_hash(self) -> str:
        return self.sha256[:12]


class MetricRun(BackgroundJob):
    """One metric with fixed parameters and resources over one study's candidates.

    ``progress_done``/``progress_total`` count chunks. ``params`` holds every
    parameter of the metric, defaults filled in and values coerced, so equal
    parameterisations compare equal. ``resources`` maps the metric's resource
    names to :class:`MetricResource` ids (absent names use the metric's default).
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="metric_runs")
    metric = models.CharField(max_length=64, help_text="Registry slug, e.g. bleu.")
    params = models.JSONField(default=dict, blank=True)
    resources = models.JSONField(default=dict, blank=True)
    against = models.CharField(max_length=16, choices=Against.choices, default=Against.ORIGINAL)
    signature = models.TextField(blank=True)
    higher_is_better = models.BooleanField(default=True)
    corpus_score = models.FloatField(null=True, blank=True)
    ci_low = models.FloatField(null=True, blank=True)
    ci_high = models.FloatField(null=True, blank=True)
    confidence = models.FloatField(default=0.95)
    n_resamples = models.PositiveIntegerField(default=1000)
    n = models.PositiveIntegerField(default=0, help_text="Candidates in the run.")
    corpus_n = models.PositiveIntegerField(default=0, help_text="Candidates in the corpus score (controls excluded).")
    system_scores = models.JSONField(default=list, blank=True, help_text="Per system: n, mean, corpus score.")
    chunk_size = models.PositiveIntegerField(default=500)
    compute_seconds = models.FloatField(default=0.0, help_text="Summed worker time of all chunks.")
    cancel_requested = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["study", "metric", "status"])]

    def __str__(self) -> str:
        return f"{self.metric} on {self.study} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in {JobStatus.QUEUED, JobStatus.RUNNING}

    @property
    def undefined_total(self) -> int:
        """Candidates without a sentence score (e.g. an LLM judge's unparseable answers)."""
        return sum(int(s.get("undefined") or 0) for s in self.system_scores or [])

    @property
    def ci_half_width(self) -> float | None:
        if self.ci_low is None or self.ci_high is None:
            return None
        return (self.ci_high - self.ci_low) / 2

    @property
    def wall_seconds(self) -> float | None:
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None


class MetricRunChunk(TimeStampedModel):
    """A slice of a run's candidates, scored by one task; ``done`` flips once."""

    run = models.ForeignKey(MetricRun, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    candidate_ids = models.JSONField(default=list)
    done = models.BooleanField(default=False)
    seconds = models.FloatField(default=0.0)
    attempts = models.PositiveIntegerField(default=0, help_text="Deliveries of this chunk's task, duplicates included.")

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="uniq_metric_run_chunk")]

    def __str__(self) -> str:
        return f"chunk {self.index} of run {self.run_id}"


class MetricScore(TimeStampedModel):
    """One candidate's sentence score and sufficient statistics in one run."""

    run = models.ForeignKey(MetricRun, on_delete=models.CASCADE, related_name="scores")
    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="metric_scores")
    score = models.FloatField(null=True, blank=True, help_text="Sentence score; empty when undefined (NaN).")
    stats = models.JSONField(default=list, help_text="The segment's sufficient-statistics vector.")

    class Meta:
        ordering = ["run", "candidate"]
        constraints = [models.UniqueConstraint(fields=["run", "candidate"], name="uniq_metric_score")]

    def __str__(self) -> str:
        return f"{self.score} for candidate {self.candidate_id} in run {self.run_id}"

    @staticmethod
    def clean_score(value: float) -> float | None:
        """``None`` for NaN/inf (JSON and SQL have no NaN), else the float."""
        value = float(value)
        return value if math.isfinite(value) else None


class PemModel(BackgroundJob):
    """An SVR trained on one study's judgments (PEM §4), saved as a resource.

    The trained model file is ``resource`` (kind ``pem_model``), so any run of
    the ``pem`` metric on any study the researcher manages can use it.
    ``feature_resources`` maps the feature metrics' resource names (phrase table,
    language model) to :class:`MetricResource` ids used during training.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="pem_models")
    name = models.CharField(max_length=200)
    resource = models.OneToOneField(
        MetricResource, on_delete=models.SET_NULL, null=True, blank=True, related_name="pem_model"
    )
    feature_resources = models.JSONField(default=dict, blank=True)
    options = models.JSONField(default=dict, blank=True, help_text="Training options (seed, test share, …).")
    signature = models.TextField(blank=True)
    test_pearson = models.FloatField(null=True, blank=True)
    hyperparameters = models.JSONField(default=dict, blank=True)
    n_train = models.PositiveIntegerField(default=0)
    n_test = models.PositiveIntegerField(default=0)
    summary = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"PEM model {self.name} ({self.status})"
