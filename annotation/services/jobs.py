"""Background jobs of the study app: sending a task to the broker, and which stranded jobs to send again
(the requeue pass of import and generation jobs is :func:`annotation.services.queueing.jobs_requeue_stale`)."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

# The logger's name from before the split into modules, so that log filters keep matching.
logger = logging.getLogger("annotation.services")


def job_enqueue(task, *args, eta: datetime | None = None) -> bool:
    """Send a task to the broker (``eta``: to run no sooner than then); if the broker is
    away, log and leave the job queued.

    A web request must never fail because the broker is down: the job row already
    exists, and ``manage.py requeue_jobs`` (or the next worker start) sends it again.
    """
    try:
        task.apply_async(args=args, eta=eta)
        return True
    except Exception as exc:  # kombu raises many kinds of connection errors
        # One line per job, no traceback: during an outage every queued job lands here, and the
        # same connection error's traceback repeated hides what the operator needs (which service).
        logger.warning(
            "broker unavailable; %s%r stays queued (%s: %s)", task.name, args, type(exc).__name__, _one_line(exc)
        )
        return False


def _one_line(exc: BaseException) -> str:
    """``exc``'s message on one line, at most 300 characters (for a log line that stands for a traceback)."""
    return " ".join(str(exc).split())[:300]


def jobs_to_resend(model, *, stale_after: timedelta | None = None, queued_after: timedelta | None = None) -> list[int]:
    """Ids of ``model`` jobs to send to the broker again: queued ones, and with
    ``stale_after`` running ones whose worker stopped its heartbeat that long ago.
    See :func:`config.recovery.jobs_to_resend`."""
    from config.recovery import jobs_to_resend

    return jobs_to_resend(model, stale_after=stale_after, queued_after=queued_after)
