"""Reports: a study's agreement and correlation tables, plots and exports.

A :class:`Report` is built by a Celery worker (``metrics/reports/tasks.py``) from the
study's judgments and metric runs as they were at build time. It records everything
needed to say what the numbers were computed from: the settings, the judges left out,
the judgments fingerprint (``annotation.judging.selectors.judgments_fingerprint``) and
the metric runs with their signatures. ``result`` is the JSON-able dict of
``metrics.core.stats.build_report``; plots are SVG text in :class:`ReportPlot` rows.
"""

from __future__ import annotations

from django.conf import settings as django_settings
from django.db import models

from annotation.models import Study, TimeStampedModel
from config.jobs.enums import JobStatus
from config.jobs.models import BackgroundJob


class Report(BackgroundJob):
    """One build of a study's report with one set of settings.

    ``progress_done``/``progress_total`` count build phases. ``settings`` is the
    cleaned settings (``services.report_settings_clean``); ``result`` the output of
    ``build_report`` (null until the build succeeds). ``metric_runs`` lists every
    metric run considered: ``{"id", "metric", "name", "signature", "higher_is_better",
    "negated", "n_scores", "used", "note"}``.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="reports")
    settings = models.JSONField(default=dict, blank=True)
    result = models.JSONField(null=True, blank=True)
    fingerprint = models.CharField(
        max_length=64, blank=True, help_text="judgments_fingerprint of the data the report was built from."
    )
    excluded_judges = models.JSONField(default=list, blank=True, help_text="Judges left out of every table.")
    metric_runs = models.JSONField(default=list, blank=True, help_text="Metric runs considered, with signatures.")
    build_info = models.JSONField(default=dict, blank=True, help_text="Library versions and timings of the build.")
    compute_seconds = models.FloatField(default=0.0)
    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["study", "status"], name="report_study_status")]

    def __str__(self) -> str:
        return f"Report #{self.pk} of {self.study} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in {JobStatus.QUEUED, JobStatus.RUNNING}

    @property
    def metric_run_ids(self) -> list[int]:
        return sorted(int(r["id"]) for r in self.metric_runs or [])


class ReportPlot(TimeStampedModel):
    """One SVG figure of a report (matplotlib output, served as ``image/svg+xml``)."""

    report = models.ForeignKey(Report, on_delete=models.CASCADE, related_name="plots")
    slug = models.SlugField(max_length=100)
    title = models.CharField(max_length=200)
    caption = models.TextField(blank=True)
    position = models.PositiveIntegerField(default=0)
    svg = models.TextField()

    class Meta:
        ordering = ["report", "position", "slug"]
        constraints = [models.UniqueConstraint(fields=["report", "slug"], name="report_uniq_plot_slug")]

    def __str__(self) -> str:
        return f"{self.slug} of report {self.report_id}"
