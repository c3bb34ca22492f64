"""Sending a background job's task to the broker. Which stranded jobs to send again, and
sending them, is the requeue pass's (:mod:`config.recovery`)."""

from __future__ import annotations

import logging
from datetime import datetime

# The logger's name from before the job plumbing moved below the apps, so that operators'
# log filters keep matching the broker-unavailable warning.
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
