"""The abstract table of every kind of background job (study imports, metric runs, reports,
openings, alignment runs, …): each app declares its own concrete job table on it."""

from django.db import models

from .enums import JobStatus


class BackgroundJob(models.Model):
    """State of work done by a Celery worker, kept in our own tables.

    A worker updates ``progress_done``/``progress_total`` as it goes; pages poll it.
    No Celery result backend is involved, so a lab can use any broker.
    """

    # The two time stamps every row of the apps has (annotation.models.TimeStampedModel),
    # declared here because this base sits below the apps; ``updated_at`` is also the job's
    # heartbeat, which the requeue pass reads (config.recovery).
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    phase = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def is_finished(self) -> bool:
        return self.status in {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED}

    @property
    def percent(self) -> int:
        if self.status == JobStatus.SUCCEEDED:
            return 100
        if not self.progress_total:
            return 0
        return min(100, int(100 * self.progress_done / self.progress_total))
