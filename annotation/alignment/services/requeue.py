"""The requeue pass of the alignment app's background runs (scoring and aligner runs)."""

from __future__ import annotations

from ..models import AlignerRun, ScoringRun


def jobs_requeue_stale(*, stale_after=None, queued_after=None) -> int:
    """Send queued (and, with ``stale_after``, stalled running) scoring and aligner runs again.

    Each is a resent message: it runs only if it can claim its run (``config.recovery``).
    """
    from config.recovery import job_resend, jobs_to_resend

    from ..tasks import aligner_run_task, scoring_run_task

    n = sum(
        job_resend(scoring_run_task, pk, stale_after=stale_after)
        for pk in jobs_to_resend(ScoringRun, stale_after=stale_after, queued_after=queued_after)
    )
    return n + sum(
        job_resend(aligner_run_task, pk, stale_after=stale_after)
        for pk in jobs_to_resend(AlignerRun, stale_after=stale_after, queued_after=queued_after)
    )
