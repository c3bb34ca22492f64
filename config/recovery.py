"""Recovery of background work: heartbeats, claims, and resending lost jobs.

Every kind of background work is a job row (status, ``updated_at``) plus a Celery
task that takes the row's id. A job can be stranded two ways: its message never
reached the broker (the broker was down when the web request queued it: the job
stays 'queued'), or its whole worker process died mid-task (the SQLite broker never
delivers that message again, Redis only after its visibility timeout: the job stays
'running'). This module makes recovery automatic:

* **Heartbeat.** While a worker runs a job's task, a thread touches the job's row
  (``updated_at``) every ``PARAEVAL_JOB_HEARTBEAT_SECONDS``, however long the task's
  own steps are. A 'running' job untouched for ``PARAEVAL_REQUEUE_STALE_SECONDS``
  therefore has no live worker.
* **Requeue.** :func:`requeue_jobs` (the ``requeue_jobs`` command, the periodic
  :func:`requeue_stale_jobs_task` that Celery beat runs every
  ``PARAEVAL_REQUEUE_INTERVAL_SECONDS``, and every worker's start) sends such jobs
  again. A resent message is marked (:data:`REQUEUE_HEADER`).
* **Claim.** A marked message runs only if it can claim its job in one conditional
  UPDATE: the job is still queued, or running with no heartbeat for the stale
  period. Otherwise someone is working on it (or it finished) and the message is
  dropped. So a slow job that is alive is never run twice at once, and two resent
  copies (beat and cron, two workers starting) never both run. The first message
  of a job flips it from 'queued' to 'running' the same way, so a resent copy that
  arrives while the first one runs finds it claimed.

Which tasks are jobs is :data:`JOB_TASKS`. Every task's service is idempotent as
well (a finished job is left alone; metric chunks count once), so a message the
broker delivers again after all changes nothing.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from celery import Task, shared_task
from celery.signals import worker_ready
from django.apps import apps
from django.conf import settings
from django.db import connections
from django.db.models import Q
from django.utils import timezone
from django.utils.module_loading import import_string

from config.jobs.enums import JobStatus

logger = logging.getLogger(__name__)

#: Message header of a resent job: the stale period (seconds) its claim uses.
REQUEUE_HEADER = "paraeval_requeue_stale"


@dataclass(frozen=True)
class JobTaskSpec:
    model: str  #: app_label.Model of the job row; the task's first argument is its id
    claims: bool = True  #: False for tasks of which many run per job at once (metric chunks)


#: Task name -> the job row it works on. A task not named here is left alone.
JOB_TASKS: dict[str, JobTaskSpec] = {
    "annotation.import_job_run": JobTaskSpec("annotation.ImportJob"),
    "annotation.system_generate_run": JobTaskSpec("annotation.ImportJob"),
    "alignment.scoring_run": JobTaskSpec("alignment.ScoringRun"),
    "alignment.aligner_run": JobTaskSpec("alignment.AlignerRun"),
    "metrics.metric_run_start": JobTaskSpec("metrics.MetricRun"),
    # Many chunks of one run run at once; each counts once by its own ``done`` flag.
    # They keep their run's heartbeat going.
    "metrics.metric_run_chunk": JobTaskSpec("metrics.MetricRun", claims=False),
    "reports.report_build": JobTaskSpec("reports.Report"),
    "judging.open_job_run": JobTaskSpec("judging.OpenJob"),
}


def _model(label: str):
    return apps.get_model(label)


def stale_after_default() -> timedelta:
    return timedelta(seconds=settings.PARAEVAL_REQUEUE_STALE_SECONDS)


# --------------------------------------------------------------------------- claims


def job_claim(model, pk: int, *, stale_after: timedelta | None) -> bool:
    """Take the job for the message about to run it; True if this message may run it.

    ``stale_after=None`` (the job's first message, or one the broker delivered
    again): flip 'queued' to 'running' if it still is, and run in any case — the
    broker only delivers one of its own messages again when the first delivery's
    worker is gone. A resent message (``stale_after`` from its header) runs only if
    the job is still 'queued', or 'running' without a heartbeat for ``stale_after``
    (at least three heartbeats); the same UPDATE marks it running now, so of
    several resent copies exactly one wins.
    """
    now = timezone.now()
    rows = model.objects.filter(pk=pk)
    if stale_after is None:
        rows.filter(status=JobStatus.QUEUED).update(status=JobStatus.RUNNING, updated_at=now)
        return True
    stale_after = max(stale_after, timedelta(seconds=3 * settings.PARAEVAL_JOB_HEARTBEAT_SECONDS))
    return bool(
        rows.filter(Q(status=JobStatus.QUEUED) | Q(status=JobStatus.RUNNING, updated_at__lt=now - stale_after)).update(
            status=JobStatus.RUNNING, updated_at=now
        )
    )


class JobHeartbeat:
    """A thread that touches a running job's row every ``every`` seconds until stopped.

    It lives in the process that runs the task, so it stops when that process dies:
    exactly the signal the requeue needs. It has its own database connection.
    """

    def __init__(self, model, pk: int, every: float):
        self.model, self.pk, self.every = model, pk, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"heartbeat-{model._meta.label}-{pk}")

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=10)

    def beat(self) -> None:
        self.model.objects.filter(pk=self.pk, status=JobStatus.RUNNING).update(updated_at=timezone.now())

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.every):
                try:
                    self.beat()
                except Exception:  # a busy SQLite file or a dropped connection: try again next time
                    logger.warning("heartbeat of %s %s failed", self.model._meta.label, self.pk, exc_info=True)
                    connections.close_all()
        finally:
            connections.close_all()  # this thread's connections only


class JobTask(Task):
    """The project's Celery task class: job tasks claim their job and keep its heartbeat.

    Set as the app's ``task_cls`` (config/celery.py), so every ``@shared_task``
    gets it; tasks not in :data:`JOB_TASKS` run unchanged, and so does a task
    called directly as a function.
    """

    def __call__(self, *args, **kwargs):
        spec = JOB_TASKS.get(self.name)
        req = self.request
        if spec is None or req.called_directly or not args:
            return super().__call__(*args, **kwargs)
        model, pk = _model(spec.model), args[0]
        marker = getattr(req, REQUEUE_HEADER, None)
        if marker is None:
            marker = (req.headers or {}).get(REQUEUE_HEADER)
        stale_after = None if marker is None else timedelta(seconds=float(marker))
        if spec.claims and not job_claim(model, pk, stale_after=stale_after):
            logger.info(
                "%s %s: a resent message found the job finished or claimed by a live worker; dropped", self.name, pk
            )
            return None
        if req.is_eager:  # run in the caller's thread: nothing to keep alive
            return self.run(*args, **kwargs)
        with JobHeartbeat(model, pk, settings.PARAEVAL_JOB_HEARTBEAT_SECONDS):
            # self.run, not super().__call__: the worker already pushed this request's context
            return self.run(*args, **kwargs)


# --------------------------------------------------------------------------- requeue


def job_resend(task, pk: int, *, stale_after: timedelta | None, **options) -> bool:
    """Send a job's task again, marked as resent (see :func:`job_claim`).

    ``stale_after`` is the period after which a running job counts as abandoned
    (``None``: the default setting); ``options`` go to ``apply_async``. Like
    ``annotation.services.job_enqueue``, a
    broker that is away is logged, not raised: the job stays as it is for the next pass.
    """
    seconds = (stale_after or stale_after_default()).total_seconds()
    try:
        task.apply_async(args=(pk,), headers={REQUEUE_HEADER: seconds}, **options)
        return True
    except Exception as exc:  # kombu raises many kinds of connection errors
        # One line per job, no traceback (the same connection error, once for every stranded job).
        logger.warning(
            "broker unavailable; %s(%r) not resent (%s: %s)",
            task.name,
            pk,
            type(exc).__name__,
            " ".join(str(exc).split())[:300],
        )
        return False


def jobs_to_resend(model, *, stale_after: timedelta | None = None, queued_after: timedelta | None = None) -> list[int]:
    """Ids of ``model`` jobs to send again.

    Queued jobs: all of them, or with ``queued_after`` those queued (or last resent)
    that long ago — a periodic pass must not resend a job that simply waits its turn
    every time; each one chosen is touched, so the next pass leaves it alone for
    another ``queued_after`` and two passes at once do not both pick it. Running jobs
    (only with ``stale_after``): those whose row no heartbeat touched for that long.
    """
    now = timezone.now()
    queued = model.objects.filter(status=JobStatus.QUEUED)
    if queued_after is not None:
        cutoff = now - queued_after
        picked = []
        for pk in queued.filter(updated_at__lt=cutoff).values_list("pk", flat=True):
            if model.objects.filter(pk=pk, status=JobStatus.QUEUED, updated_at__lt=cutoff).update(updated_at=now):
                picked.append(pk)
    else:
        picked = list(queued.values_list("pk", flat=True))
    if stale_after is not None:
        picked += list(
            model.objects.filter(status=JobStatus.RUNNING, updated_at__lt=now - stale_after).values_list(
                "pk", flat=True
            )
        )
    return picked


#: (function, what) for every kind of worker-run job, in the order the apps were installed: each app's
#: ``AppConfig.ready`` adds its own (:func:`requeuer_register`), so this module names and loads no app code.
_REQUEUERS: list[tuple[Callable[..., int] | str, str]] = []


def requeuer_register(func: Callable[..., int] | str, what: str) -> None:
    """Add the service that resends one kind of job (``func(stale_after=..., [queued_after=...]) -> count``),
    or its dotted path: an app's ``ready`` names it so, and it is imported when a requeue pass first
    asks for it, so that a process that never requeues (a ``manage.py`` command, a test's Django)
    starts without the app's services and what they load (pandas, scipy: about 0.8 s a start).

    ``what`` names the jobs in the command's output ("requeued 3 metric run(s)"). Registering the same
    function again changes nothing (``ready`` may run twice in tests).
    """
    if all(known != func for known, _ in _REQUEUERS):
        _REQUEUERS.append((func, what))


def requeuers() -> list[tuple[Callable[..., int], str]]:
    """(function, what) for every kind of job that registered (:func:`requeuer_register`)."""
    return [(import_string(func) if isinstance(func, str) else func, what) for func, what in _REQUEUERS]


def requeue_jobs(*, stale_after: timedelta | None, queued_after: timedelta | None = None) -> list[tuple[int, str]]:
    """Send stranded jobs of every kind again; returns ``(count, what)`` per kind.

    Queued jobs (all, or with ``queued_after`` those waiting that long) and, with
    ``stale_after``, running jobs without a heartbeat for that long. Safe at any time
    and from several places at once: a resent message runs only if it claims its job.
    """
    out = []
    for func, what in requeuers():
        kwargs = {"stale_after": stale_after}
        if queued_after is not None and "queued_after" in inspect.signature(func).parameters:
            kwargs["queued_after"] = queued_after
        out.append((func(**kwargs), what))
    return out


@shared_task(name="paraeval.requeue_stale_jobs", ignore_result=True)
def requeue_stale_jobs_task() -> int:
    """The periodic pass (Celery beat): stranded queued and running jobs, with the stale setting."""
    stale = stale_after_default()
    counts = requeue_jobs(stale_after=stale, queued_after=stale)
    total = sum(n for n, _ in counts)
    if total:
        logger.warning("requeued %s", ", ".join(f"{n} {what}" for n, what in counts if n))
    return total


@worker_ready.connect(dispatch_uid="paraeval-requeue-on-worker-start")
def requeue_queued_on_worker_start(sender=None, **kwargs) -> None:
    """A worker is up: send the jobs still queued (e.g. queued while the broker was down).

    Each one is a resent message, so a job whose first message is still waiting in
    the broker runs once: whichever message comes first claims it.
    """
    if not settings.PARAEVAL_REQUEUE_ON_WORKER_START:
        return
    try:
        counts = requeue_jobs(stale_after=None)
        total = sum(n for n, _ in counts)
        if total:
            logger.warning("worker start: sent %s", ", ".join(f"{n} queued {what}" for n, what in counts if n))
    except Exception:  # the database may be away too; the periodic pass tries again
        logger.exception("could not send queued jobs at worker start")
    finally:
        connections.close_all()
