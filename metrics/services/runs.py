"""A metric run as people ask for it: create it, cancel or retry it, and requeue the stranded.

:func:`metric_run_create` validates the metric, snapshots the study's candidates into
chunks and queues the start task on commit; the worker's steps are in :mod:`.worker`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.models import Candidate, Study
from config.jobs.enums import JobStatus
from config.jobs.services import job_enqueue
from config.recovery import job_resend, jobs_to_resend
from metrics.core.base.metric import Metric
from metrics.core.base.params import MetricError
from metrics.core.registry import UnknownMetric, create_metric, get_metric
from metrics.core.stats.results import jsonable

from ..enums import Against
from ..models import MetricRun, MetricRunChunk
from ..tasks import metric_run_start_task
from ._shared import resource_paths

#: Candidates per chunk task when the caller gives no ``chunk_size``.
DEFAULT_CHUNK_SIZE = 500


# --------------------------------------------------------------------------- create


def _resolve_params(cls: type[Metric], params: Mapping[str, Any], against: str | None) -> tuple[dict, str]:
    """Merge the run-level ``against`` choice into the metric's parameters.

    Metrics with an ``against`` parameter (bleu, chrf, ter, …) take it from the
    run; others always compare with the original, so ``against=reference`` is
    refused for them rather than silently ignored.
    """
    params = dict(params)
    if "against" in cls.params:
        given = params.get("against")
        if against and given and str(given) != against:
            raise ValidationError({"against": f"against={against!r} contradicts the parameter against={given!r}"})
        params["against"] = against or given or cls.params["against"].default
        return params, str(params["against"])
    if against not in (None, "", Against.ORIGINAL):
        raise ValidationError(
            {"against": f"metric {cls.slug!r} has no 'against' parameter; it cannot score against the reference column"}
        )
    return params, Against.ORIGINAL


def _study_rubric(study: Study) -> str:
    """The study's criteria (names, help texts, scales) as the JSON an LLM judge reads; "" for PEM's."""
    try:
        criteria = study.judging_design.criteria
    except ObjectDoesNotExist:
        return ""
    return json.dumps({"criteria": criteria}, sort_keys=True, ensure_ascii=False) if criteria else ""


def metric_run_create(
    *,
    study: Study,
    metric: str,
    params: Mapping[str, Any] | None = None,
    against: str | None = None,
    resources: Mapping[str, int] | None = None,
    created_by: User | None = None,
    chunk_size: int | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    enqueue: bool = True,
) -> MetricRun:
    """Create a run of ``metric`` over every candidate of ``study`` and queue it.

    ``params`` may hold strings (coerced by the metric's parameter specs);
    ``resources`` maps the metric's resource names to :class:`MetricResource`
    ids (the caller checks the user may use them; see
    ``selectors.metric_resources_for_user``). Raises :class:`ValidationError`
    for an unknown metric, a bad parameter or resource, or a study without
    candidates. If an identical run (same metric, parameters and resources) is
    still queued or running, that run is returned instead of a second one.
    The start task is queued on commit unless ``enqueue`` is false.
    """
    try:
        cls = get_metric(metric)
    except UnknownMetric as exc:
        raise ValidationError({"metric": str(exc)}) from None
    params, against = _resolve_params(cls, params or {}, against)
    if getattr(cls, "takes_study_rubric", False) and not params.get("rubric"):
        # An LLM judge gets the rubric the human judges got: the study's own criteria.
        params["rubric"] = _study_rubric(study)
    resources = {str(k): int(v) for k, v in (resources or {}).items()}
    try:
        instance = create_metric(metric, params, resource_paths(resources))
    except MetricError as exc:
        raise ValidationError(str(exc)) from None
    missing = instance.missing_resources()
    if missing:
        if cls.card is not None and cls.card.prepare:
            # Lead the user to the step that prepares the resource, not to internals.
            raise ValidationError({"resources": f"metric {metric!r} needs {', '.join(missing)}. {cls.card.prepare}"})
        helps = "; ".join(f"{name}: {cls.resources[name].help}" for name in missing)
        raise ValidationError({"resources": f"metric {metric!r} needs resource(s) {', '.join(missing)} ({helps})"})
    normalized = {k: jsonable(v) for k, v in instance.param_values.items()}
    # Heavy metrics (a neural model) ask for larger chunks (``default_chunk_size``);
    # a metric whose statistics span the corpus (BERTScore's idf) for a single one.
    default_chunk_size: int = getattr(cls, "default_chunk_size", 0) or getattr(
        settings, "PARAEVAL_METRIC_CHUNK_SIZE", DEFAULT_CHUNK_SIZE
    )
    chunk_size = int(chunk_size or default_chunk_size)
    if chunk_size < 1:
        raise ValidationError({"chunk_size": "chunk_size must be at least 1"})
    whole_corpus = bool(getattr(instance, "needs_whole_corpus", False))

    with transaction.atomic():
        existing = MetricRun.objects.filter(
            study=study, metric=metric, status__in=[JobStatus.QUEUED, JobStatus.RUNNING]
        ).order_by("-created_at")
        for run in existing:
            if run.params == normalized and run.resources == resources and not run.cancel_requested:
                return run
        candidate_ids = list(
            Candidate.objects.filter(original__study=study).order_by("pk").values_list("pk", flat=True)
        )
        if not candidate_ids:
            raise ValidationError(f"study {study.name!r} has no candidates to score; import its data first")
        run = MetricRun(
            study=study,
            metric=metric,
            params=normalized,
            resources=resources,
            against=against,
            higher_is_better=bool(cls.higher_is_better),
            n=len(candidate_ids),
            chunk_size=chunk_size,
            n_resamples=n_resamples,
            confidence=confidence,
            created_by=created_by,
            phase="queued",
        )
        run.full_clean()
        if whole_corpus:
            chunk_size = len(candidate_ids)
            run.chunk_size = chunk_size
        chunks = [candidate_ids[i : i + chunk_size] for i in range(0, len(candidate_ids), chunk_size)]
        run.progress_total = len(chunks)
        run.save()
        MetricRunChunk.objects.bulk_create(
            [MetricRunChunk(run=run, index=i, candidate_ids=ids) for i, ids in enumerate(chunks)], batch_size=500
        )
        if enqueue:
            _enqueue_start(run.pk)
    return run


def _enqueue_start(run_id: int) -> None:
    transaction.on_commit(lambda: job_enqueue(metric_run_start_task, run_id))


# --------------------------------------------------------------------------- state changes


@transaction.atomic
def metric_run_cancel(*, run: MetricRun) -> MetricRun:
    """Ask the run's chunks to stop and end it as cancelled.

    Chunks already computing finish their computation but write nothing once
    they see the flag; chunks still queued return at once. A finished run is
    returned unchanged.
    """
    locked = MetricRun.objects.select_for_update().get(pk=run.pk)
    if locked.is_finished:
        return locked
    now = timezone.now()
    MetricRun.objects.filter(pk=run.pk).update(
        cancel_requested=True, status=JobStatus.CANCELLED, phase="cancelled", finished_at=now, updated_at=now
    )
    locked.refresh_from_db()
    return locked


@transaction.atomic
def metric_run_retry(*, run: MetricRun) -> MetricRun:
    """Queue a failed or cancelled run again; chunks already done are kept.

    Scores are upserted, so chunks that ran before leave exactly one score per
    candidate; chunks not done start counting their attempts afresh. Raises :class:`ValidationError` for a run that is not failed or
    cancelled.
    """
    locked = MetricRun.objects.select_for_update().get(pk=run.pk)
    if locked.status not in (JobStatus.FAILED, JobStatus.CANCELLED):
        raise ValidationError(f"only failed or cancelled runs can be retried; this one is {locked.status}")
    MetricRun.objects.filter(pk=run.pk).update(
        status=JobStatus.QUEUED,
        phase="queued",
        error="",
        cancel_requested=False,
        finished_at=None,
        updated_at=timezone.now(),
    )
    # A retry gets PARAEVAL_CHUNK_MAX_ATTEMPTS fresh deliveries for every chunk not done.
    MetricRunChunk.objects.filter(run_id=run.pk, done=False).update(attempts=0, updated_at=timezone.now())
    _enqueue_start(run.pk)
    locked.refresh_from_db()
    return locked


def metric_runs_requeue_stale(*, stale_after=None, queued_after=None) -> int:
    """Send the start task again for every queued run (after a broker outage) and, with
    ``stale_after``, for every running run whose heartbeat stopped that long ago (its
    worker died holding a chunk; chunk tasks keep the run's heartbeat). The start task
    re-sends only the chunks not done yet, and a chunk counts once however often it runs.
    Each start is a resent message: it runs only if it can claim the run (``config.recovery``)."""
    n = 0
    for pk in jobs_to_resend(MetricRun, stale_after=stale_after, queued_after=queued_after):
        n += job_resend(metric_run_start_task, pk, stale_after=stale_after)
    return n
