# Over 400 lines: this session's feature work (protocols, screening, field studies, speed) landed here; splitting it along its seams is issue 17's remaining step, done once so code moves only once.
"""Writes for metric runs, their scores, metric resources and PEM models.

Views, APIs, Celery tasks, the demo and management commands call these. The
numbers come from ``metrics.core`` (the registry's metrics and
:func:`metrics.core.base.bootstrap_ci`); this module only moves data between
the database and the metric engine and keeps each run's state.

Life of a run (the tasks in ``metrics/tasks.py`` call the three worker steps):

1. :func:`metric_run_create` (web): validates the slug, parameters and
   resources by building the metric, snapshots the study's candidate ids into
   :class:`~metrics.models.MetricRunChunk` rows of ``chunk_size`` and queues the
   start task on commit.
2. :func:`metric_run_start` (worker): marks the run running, records its
   signature and returns the chunks still to do; the task fans them out.
3. :func:`metric_run_chunk_execute` (worker, many in parallel): scores one
   chunk, upserts its :class:`~metrics.models.MetricScore` rows and flips the
   chunk's ``done`` flag and the run's chunk counter in ONE transaction, so a
   chunk executed twice writes the same rows and counts once.
4. :func:`metric_run_finalize` (worker, by whichever chunk completed the run):
   corpus score, bootstrap CI and per-system scores from ALL stored statistics.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.files import File
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.enums import JobStatus
from annotation.models import Candidate, Study
from annotation.services import job_enqueue
from metrics.core.base import Metric, MetricError, bootstrap_ci
from metrics.core.registry import UnknownMetric, create_metric, get_metric

from .enums import Against, ResourceKind
from .models import MetricResource, MetricRun, MetricRunChunk, MetricScore, PemModel

logger = logging.getLogger(__name__)

#: Candidates per chunk task when the caller gives no ``chunk_size``.
DEFAULT_CHUNK_SIZE = 500
#: Uploaded resources above this size are refused (bytes).
RESOURCE_MAX_BYTES = getattr(settings, "PARAEVAL_RESOURCE_MAX_BYTES", 4 * 1024**3)

FINISHED = (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED)


# --------------------------------------------------------------------------- resources


def _sha256_of(fh) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    fh.seek(0)
    for block in iter(lambda: fh.read(1 << 20), b""):
        h.update(block)
        size += len(block)
    fh.seek(0)
    return h.hexdigest(), size


@transaction.atomic
def metric_resource_create(
    *,
    name: str,
    kind: str,
    file: File,
    owner: User | None,
    study: Study | None = None,
    description: str = "",
) -> MetricResource:
    """Store an uploaded resource file under MEDIA_ROOT with its SHA-256.

    Raises :class:`ValidationError` for an empty or oversized file, an unknown
    kind, or a ``pem_model`` that is not a data-only PEM model (an old pickled
    model is refused here, at upload, and is never unpickled). The declared
    size (``file.size``, known from the upload's headers and spool) is checked
    before a byte is read.
    """
    declared = getattr(file, "size", None)
    if declared is not None and declared > RESOURCE_MAX_BYTES:
        raise ValidationError({"file": f"The file is {declared:,} bytes; the limit is {RESOURCE_MAX_BYTES:,}."})
    digest, size = _sha256_of(file)
    if size == 0:
        raise ValidationError({"file": "The file is empty."})
    if size > RESOURCE_MAX_BYTES:
        raise ValidationError({"file": f"The file is {size:,} bytes; the limit is {RESOURCE_MAX_BYTES:,}."})
    filename = (getattr(file, "name", "") or "resource").rsplit("/", 1)[-1]
    if kind == ResourceKind.PEM_MODEL:
        _check_pem_model_file(file, filename)
    resource = MetricResource(
        name=name.strip() or filename, kind=kind, filename=filename[:255], sha256=digest, size=size,
        owner=owner, study=study, description=description,
    )
    resource.file.save(filename, file, save=False)
    try:
        resource.full_clean()
    except ValidationError:
        resource.file.delete(save=False)
        raise
    resource.save()
    return resource


def _check_pem_model_file(file, filename: str) -> None:
    """Refuse a ``pem_model`` upload that :meth:`PemModel.load` would refuse (it never unpickles)."""
    from metrics.core.pem import PemFileError
    from metrics.core.pem import PemModel as CorePemModel

    file.seek(0)
    try:
        CorePemModel.load(file)
    except PemFileError as exc:
        raise ValidationError({"file": str(exc).replace(str(getattr(file, "name", "")), filename, 1)}) from None
    finally:
        file.seek(0)


# --------------------------------------------------------------------------- metric instances


_CACHE_SIZE = 4
_metric_cache: OrderedDict[tuple, Metric] = OrderedDict()
_metric_cache_lock = threading.Lock()


def _resource_paths(resource_ids: Mapping[str, int]) -> dict[str, str]:
    """Map resource names to the stored files of :class:`MetricResource` ids."""
    ids = {name: int(pk) for name, pk in resource_ids.items()}
    found = {r.pk: r for r in MetricResource.objects.filter(pk__in=ids.values())}
    paths = {}
    for name, pk in ids.items():
        res = found.get(pk)
        if res is None:
            raise MetricError(f"resource {name!r}: uploaded resource #{pk} no longer exists")
        paths[name] = res.file.path
    return paths


def metric_for_run(run: MetricRun) -> Metric:
    """The metric object of ``run``, cached per worker process.

    Resources (phrase tables, language models, vectors) load lazily inside the
    metric object and can take seconds, so every chunk of a run that lands on
    the same worker process reuses one instance. Uploaded resource files never
    change (their SHA-256 is fixed at upload), so the key is safe.
    """
    key = (run.metric, json.dumps(run.params, sort_keys=True), json.dumps(run.resources, sort_keys=True))
    with _metric_cache_lock:
        metric = _metric_cache.get(key)
        if metric is not None:
            _metric_cache.move_to_end(key)
            return metric
    metric = create_metric(run.metric, run.params, _resource_paths(run.resources))
    with _metric_cache_lock:
        _metric_cache[key] = metric
        while len(_metric_cache) > _CACHE_SIZE:
            _metric_cache.popitem(last=False)
    return metric


def _jsonable(value: Any) -> Any:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    return value


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
    resources = {str(k): int(v) for k, v in (resources or {}).items()}
    try:
        instance = create_metric(metric, params, _resource_paths(resources))
    except MetricError as exc:
        raise ValidationError(str(exc)) from None
    missing = instance.missing_resources()
    if missing:
        if cls.card is not None and cls.card.prepare:
            # Lead the user to the step that prepares the resource, not to internals.
            raise ValidationError({"resources": f"metric {metric!r} needs {', '.join(missing)}. {cls.card.prepare}"})
        helps = "; ".join(f"{name}: {cls.resources[name].help}" for name in missing)
        raise ValidationError({"resources": f"metric {metric!r} needs resource(s) {', '.join(missing)} ({helps})"})
    normalized = {k: _jsonable(v) for k, v in instance.param_values.items()}
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
        existing = (
            MetricRun.objects.filter(study=study, metric=metric, status__in=[JobStatus.QUEUED, JobStatus.RUNNING])
            .order_by("-created_at")
        )
        for run in existing:
            if run.params == normalized and run.resources == resources and not run.cancel_requested:
                return run
        candidate_ids = list(
            Candidate.objects.filter(original__study=study).order_by("pk").values_list("pk", flat=True)
        )
        if not candidate_ids:
            raise ValidationError(f"study {study.name!r} has no candidates to score; import its data first")
        run = MetricRun(
            study=study, metric=metric, params=normalized, resources=resources, against=against,
            higher_is_better=bool(cls.higher_is_better), n=len(candidate_ids), chunk_size=chunk_size,
            n_resamples=n_resamples, confidence=confidence, created_by=created_by, phase="queued",
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
    from .tasks import metric_run_start_task

    transaction.on_commit(lambda: job_enqueue(metric_run_start_task, run_id))


# --------------------------------------------------------------------------- state changes


def _run_update(run_id: int, **fields) -> int:
    return MetricRun.objects.filter(pk=run_id).update(**fields, updated_at=timezone.now())


def metric_run_fail(*, run_id: int, error: str) -> None:
    """Record ``error`` and end the run as failed (a finished run is left alone)."""
    MetricRun.objects.filter(pk=run_id, status__in=[JobStatus.QUEUED, JobStatus.RUNNING]).update(
        status=JobStatus.FAILED, phase="failed", error=error[:10_000], finished_at=timezone.now(),
        updated_at=timezone.now(),
    )


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
        status=JobStatus.QUEUED, phase="queued", error="", cancel_requested=False, finished_at=None,
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
    from config.recovery import job_resend, jobs_to_resend

    from .tasks import metric_run_start_task

    n = 0
    for pk in jobs_to_resend(MetricRun, stale_after=stale_after, queued_after=queued_after):
        n += job_resend(metric_run_start_task, pk, stale_after=stale_after)
    return n


# --------------------------------------------------------------------------- worker steps


def metric_run_start(*, run_id: int) -> list[int]:
    """Mark the run running, record its signature; return the ids of chunks not done.

    Safe to run twice. A finished or cancelled run returns ``[]``. A metric
    that cannot be built (e.g. an unreadable resource) fails the run.
    """
    run = MetricRun.objects.get(pk=run_id)
    if run.is_finished or run.cancel_requested:
        return []
    try:
        signature = metric_for_run(run).signature()
    except (MetricError, UnknownMetric) as exc:
        metric_run_fail(run_id=run_id, error=str(exc))
        return []
    now = timezone.now()
    with transaction.atomic():
        locked = MetricRun.objects.select_for_update().get(pk=run_id)
        if locked.is_finished or locked.cancel_requested:
            return []
        fields: dict[str, Any] = {"status": JobStatus.RUNNING, "phase": "scoring", "signature": signature}
        if locked.started_at is None:
            fields["started_at"] = now
        _run_update(run_id, **fields)
    return list(MetricRunChunk.objects.filter(run_id=run_id, done=False).order_by("index").values_list("pk", flat=True))


_SEGMENT = re.compile(r"\bsegment (\d+)\b")


def _name_segments(message: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """Replace core's 0-based 'segment i' by the candidate it is, for the researcher."""

    def name(match: re.Match) -> str:
        i = int(match.group(1))
        if 0 <= i < len(rows):
            r = rows[i]
            return f"candidate {r['pk']} (original {r['original__external_id']!r}, system {r['system__name']!r})"
        return match.group(0)

    return _SEGMENT.sub(name, message)


def metric_run_chunk_execute(*, run_id: int, chunk_id: int) -> bool:
    """Score one chunk and store its scores; return True when this call finished the run.

    Idempotent: the scores are upserted on (run, candidate), and the chunk's
    ``done`` flag and the run's chunk counter change in the same transaction
    only if the chunk was not done yet — so a chunk delivered twice (a retry,
    a worker killed after writing, a duplicate message) counts once. Whoever
    sees the counter reach the total (or finds every chunk done on a run
    still running, after a crash) calls :func:`metric_run_finalize`.

    A :class:`~metrics.core.base.MetricError` (missing reference, unreadable
    resource, …) or any other error inside the metric fails the run with its
    message, naming the candidate where the metric names a segment. Database
    errors propagate so the task can retry.
    """
    # Every delivery is counted, even one that finds nothing to do (to see duplicates).
    # The count is committed before any work, so a delivery whose worker process dies
    # on this chunk (out of memory, a crash in native code) still counts.
    MetricRunChunk.objects.filter(pk=chunk_id, run_id=run_id).update(attempts=F("attempts") + 1)
    run = MetricRun.objects.get(pk=run_id)
    if run.is_finished or run.cancel_requested:
        return False
    chunk = MetricRunChunk.objects.get(pk=chunk_id, run_id=run_id)
    if chunk.done:
        return _finalize_if_complete(run_id)
    max_attempts = int(getattr(settings, "PARAEVAL_CHUNK_MAX_ATTEMPTS", 3))
    if chunk.attempts > max_attempts:
        # Earlier deliveries neither finished nor failed: their worker died (a broker
        # delivers an acks_late message again only then, and recovery resends only
        # chunks of runs whose heartbeat stopped). Without a cap the chunk would kill
        # a worker on every redelivery, forever.
        ids = chunk.candidate_ids
        where = f", candidates {ids[0]}–{ids[-1]}" if ids else ""
        metric_run_fail(run_id=run_id, error=(
            f"chunk {chunk.index + 1} of {run.progress_total}{where} was started {chunk.attempts - 1} times and "
            f"its worker process died each time (PARAEVAL_CHUNK_MAX_ATTEMPTS={max_attempts}); the run stops here. "
            "Look at the worker's log (out of memory?), then retry, perhaps with a smaller chunk size."
        ))
        return False

    t0 = time.perf_counter()
    by_pk = {
        r["pk"]: r
        for r in Candidate.objects.filter(pk__in=chunk.candidate_ids).values(
            "pk", "text", "original__text", "original__reference", "original__external_id", "system__name"
        )
    }
    # Candidates deleted since the run was planned are skipped.
    rows = [by_pk[pk] for pk in chunk.candidate_ids if pk in by_pk]
    scored = rows
    try:
        metric = metric_for_run(run)
        scored, index = _distinct_rows(metric, rows)
        stats = np.asarray(metric.segment_stats(
            [r["original__text"] for r in scored],
            [r["text"] for r in scored],
            [r["original__reference"] or None for r in scored],
        ), dtype=np.float64).reshape(len(scored), -1)
        scores = np.asarray(metric.sentence_scores(stats) if len(scored) else np.zeros(0), dtype=np.float64)
        stats, scores = stats[index], scores[index]
    except (MetricError, UnknownMetric) as exc:
        metric_run_fail(run_id=run_id, error=_name_segments(str(exc), scored))
        return False
    except Exception as exc:  # a bug in a metric must end the run visibly, not hang it
        logger.exception("metric run %s chunk %s failed", run_id, chunk_id)
        metric_run_fail(run_id=run_id, error=f"{type(exc).__name__}: {_name_segments(str(exc), scored)}")
        return False
    seconds = time.perf_counter() - t0

    now = timezone.now()
    objs = [
        MetricScore(
            run_id=run_id, candidate_id=r["pk"], score=MetricScore.clean_score(s),
            stats=[float(x) for x in row], created_at=now, updated_at=now,
        )
        for r, s, row in zip(rows, scores, stats)
    ]
    with transaction.atomic():
        # The chunk row lock makes a concurrent duplicate wait, then see done=True.
        locked = MetricRunChunk.objects.select_for_update().get(pk=chunk_id)
        if locked.done:
            return False
        state = MetricRun.objects.filter(pk=run_id).values("status", "cancel_requested").get()
        if state["status"] in FINISHED or state["cancel_requested"]:
            return False
        MetricScore.objects.bulk_create(
            objs, batch_size=1000, update_conflicts=True, unique_fields=["run", "candidate"],
            update_fields=["score", "stats", "updated_at"],
        )
        MetricRunChunk.objects.filter(pk=chunk_id).update(done=True, seconds=seconds, updated_at=now)
        _run_update(run_id, progress_done=F("progress_done") + 1, compute_seconds=F("compute_seconds") + seconds)
        progress = MetricRun.objects.filter(pk=run_id).values("progress_done", "progress_total").get()
    if progress["progress_done"] >= progress["progress_total"]:
        return metric_run_finalize(run_id=run_id)
    return False


_Row = TypeVar("_Row", bound=Mapping[str, Any])


def _distinct_rows(metric: Metric, rows: list[_Row]) -> tuple[list[_Row], np.ndarray]:
    """The rows to score, one per distinct (original, candidate, reference), and for
    each of ``rows`` the index of its scored row.

    One text often stands for several systems (ParaBank's identical outputs of a
    dozen systems are a candidate each). A chunk's segments are independent by the
    chunking contract, so scoring each distinct triple once and copying its
    statistics is exact, and saves the neural metrics most of their work on such
    studies. Whole-corpus metrics (BERTScore's idf) see every row, duplicates included.
    """
    if getattr(metric, "needs_whole_corpus", False):
        return rows, np.arange(len(rows), dtype=np.intp)
    first: dict[tuple, int] = {}
    scored: list[_Row] = []
    index = np.empty(len(rows), dtype=np.intp)
    for i, r in enumerate(rows):
        key = (r["original__text"], r["text"], r["original__reference"] or None)
        k = first.get(key)
        if k is None:
            k = first[key] = len(scored)
            scored.append(r)
        index[i] = k
    return scored, index


def _finalize_if_complete(run_id: int) -> bool:
    """After a crash between the last chunk's commit and finalize: finish the run."""
    run = MetricRun.objects.get(pk=run_id)
    if run.status == JobStatus.RUNNING and not MetricRunChunk.objects.filter(run_id=run_id, done=False).exists():
        return metric_run_finalize(run_id=run_id)
    return False


def _finite(x: float) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def metric_run_finalize(*, run_id: int) -> bool:
    """Aggregate every stored score of a run: corpus score, bootstrap CI, per system.

    The corpus score and its percentile bootstrap CI (``bootstrap_ci``, by
    re-summing the stored statistics) are over the non-control candidates
    (all candidates when a study has only controls); per-system rows cover
    every system. Runs once: the run row is locked and must still be running
    with every chunk done; returns True when this call finished the run.
    """
    run = MetricRun.objects.get(pk=run_id)
    if run.status != JobStatus.RUNNING or run.cancel_requested:
        return False
    _run_update(run_id, phase="aggregating")
    rows = list(
        MetricScore.objects.filter(run_id=run_id)
        .order_by("candidate_id")
        .values_list("score", "stats", "candidate__system__name", "candidate__system__kind")
    )
    try:
        metric = metric_for_run(run)
        fields = _aggregate(metric, rows, n_resamples=run.n_resamples, confidence=run.confidence)
    except Exception as exc:
        logger.exception("metric run %s: aggregation failed", run_id)
        metric_run_fail(run_id=run_id, error=f"aggregation failed: {type(exc).__name__}: {exc}")
        return False
    with transaction.atomic():
        locked = MetricRun.objects.select_for_update().get(pk=run_id)
        if locked.status != JobStatus.RUNNING or locked.cancel_requested:
            return False
        if MetricRunChunk.objects.filter(run_id=run_id, done=False).exists():
            return False
        now = timezone.now()
        _run_update(run_id, status=JobStatus.SUCCEEDED, phase="done", finished_at=now, **fields)
    return True


def _aggregate(metric: Metric, rows: list[tuple], *, n_resamples: int, confidence: float) -> dict[str, Any]:
    from annotation.enums import SystemKind

    if not rows:
        raise MetricError("no scores were stored")
    stats = np.asarray([r[1] for r in rows], dtype=np.float64)
    scores = np.asarray([np.nan if r[0] is None else r[0] for r in rows], dtype=np.float64)
    systems = np.asarray([r[2] for r in rows], dtype=object)
    controls = np.asarray([r[3] in SystemKind.control_kinds() for r in rows])
    corpus_rows = ~controls if (~controls).any() else np.ones(len(rows), dtype=bool)
    corpus_stats = stats[corpus_rows]
    ci = bootstrap_ci(metric, corpus_stats, n_resamples=n_resamples, confidence=confidence)
    per_system = []
    for name in sorted(set(systems.tolist())):
        mask = systems == name
        finite = scores[mask][np.isfinite(scores[mask])]
        per_system.append({
            "system": name,
            "is_control": bool(controls[mask][0]),
            "n": int(mask.sum()),
            "mean": _finite(finite.mean()) if finite.size else None,
            "corpus": _finite(metric.aggregate(stats[mask])),
        })
    return {
        "corpus_score": _finite(ci.statistic),
        "ci_low": _finite(ci.ci_low),
        "ci_high": _finite(ci.ci_high),
        "corpus_n": int(corpus_rows.sum()),
        "system_scores": per_system,
    }


def metric_run_execute(*, run_id: int) -> MetricRun:
    """Run every step of a run in this process (demo, CLI, tests): start, chunks, finalize."""
    for chunk_id in metric_run_start(run_id=run_id):
        metric_run_chunk_execute(run_id=run_id, chunk_id=chunk_id)
    _finalize_if_complete(run_id)
    return MetricRun.objects.get(pk=run_id)


# --------------------------------------------------------------------------- PEM models

#: Resources of the PEM feature metrics that a training may name (others are refused).
PEM_FEATURE_RESOURCES = ("phrase_table", "lm")


def pem_model_fail(*, pem_model_id: int, error: str) -> None:
    """Record ``error`` and end the training as failed (a finished one is left alone)."""
    PemModel.objects.filter(pk=pem_model_id, status__in=[JobStatus.QUEUED, JobStatus.RUNNING]).update(
        status=JobStatus.FAILED, phase="failed", error=error[:10_000], finished_at=timezone.now(),
        updated_at=timezone.now(),
    )


def pem_model_create(
    *,
    study: Study,
    name: str,
    created_by: User | None,
    feature_resources: Mapping[str, int] | None = None,
    test_share: float = 0.2,
    seed: int = 0,
    enqueue: bool = True,
) -> PemModel:
    """Queue the training of a PEM model on ``study``'s judgments.

    ``feature_resources`` maps ``phrase_table`` and/or ``lm`` to
    :class:`MetricResource` ids (absent ones: the feature metrics' defaults);
    the caller checks the user may use them. Raises :class:`ValidationError`
    when the study has no overall judgments yet or an argument is bad.
    """
    from .selectors import pem_training_targets

    feature_resources = {str(k): int(v) for k, v in (feature_resources or {}).items()}
    unknown = sorted(set(feature_resources) - set(PEM_FEATURE_RESOURCES))
    if unknown:
        raise ValidationError({"feature_resources": f"unknown PEM feature resource(s): {', '.join(unknown)}"})
    missing = sorted(set(feature_resources.values()) - set(
        MetricResource.objects.filter(pk__in=feature_resources.values()).values_list("pk", flat=True)))
    if missing:
        raise ValidationError({"feature_resources": f"no resource #{missing[0]}"})
    if not 0 < test_share < 1:
        raise ValidationError({"test_share": "the test share must lie strictly between 0 and 1"})
    if pem_training_targets(study=study).empty:
        raise ValidationError(f"study {study.name!r} has no overall judgments yet; PEM trains on them")
    with transaction.atomic():
        model = PemModel(
            study=study, name=name.strip(), created_by=created_by, feature_resources=feature_resources,
            options={"test_share": float(test_share), "seed": int(seed)}, phase="queued", progress_total=3,
        )
        model.full_clean()
        model.save()
        if enqueue:
            from .tasks import pem_model_train_task

            pk = model.pk
            transaction.on_commit(lambda: job_enqueue(pem_model_train_task, pk))
    return model


def _pem_update(pem_model_id: int, **fields) -> None:
    PemModel.objects.filter(pk=pem_model_id).update(**fields, updated_at=timezone.now())


def pem_model_train(*, pem_model_id: int) -> PemModel:
    """Train a queued PEM model (the worker's side); a finished one is returned as is.

    Targets (``selectors.pem_training_targets``): the judges' mean overall
    score per candidate, controls at their fixed expected overall score.
    Features: ``metrics.core.pem.pem_features`` (pivot F1, LM fluency, target
    F1) with the chosen phrase table and LM. ``metrics.core.pem.pem_train``
    splits train/test by original and picks C, γ, ε by grouped
    cross-validation. The model file becomes a ``pem_model`` resource that
    ``pem`` runs on any study can use. Bad data (too few originals, …) fails
    the training with its message.
    """
    import tempfile
    from pathlib import Path

    from metrics.core.pem import pem_features, pem_train

    from .selectors import pem_training_targets

    model = PemModel.objects.select_related("study", "created_by").get(pk=pem_model_id)
    if model.is_finished:
        return model
    _pem_update(pem_model_id, status=JobStatus.RUNNING, phase="features", progress_done=0,
                started_at=model.started_at or timezone.now(), error="")
    try:
        targets = pem_training_targets(study=model.study)
        if targets.empty:
            raise ValueError("the study has no overall judgments")
        texts = dict(
            (str(pk), (orig, cand))
            for pk, orig, cand in Candidate.objects.filter(pk__in=[int(i) for i in targets["item"]]).values_list(
                "pk", "original__text", "text")
        )
        targets = targets[targets["item"].isin(texts)].reset_index(drop=True)
        paths = _resource_paths(model.feature_resources)
        features, signatures = pem_features(
            [texts[i][0] for i in targets["item"]], [texts[i][1] for i in targets["item"]],
            phrase_table=paths.get("phrase_table"), lm=paths.get("lm"),
        )
        _pem_update(pem_model_id, phase="training", progress_done=1)
        trained = pem_train(
            features, targets["target"].to_numpy(dtype=float), targets["original"].to_numpy(dtype=str),
            test_fraction=float(model.options.get("test_share", 0.2)), seed=int(model.options.get("seed", 0)),
            feature_signatures=signatures,
        )
    except (MetricError, ValueError) as exc:
        pem_model_fail(pem_model_id=pem_model_id, error=str(exc))
        return PemModel.objects.get(pk=pem_model_id)
    except Exception as exc:
        logger.exception("PEM model %s: training failed", pem_model_id)
        pem_model_fail(pem_model_id=pem_model_id, error=f"{type(exc).__name__}: {exc}")
        return PemModel.objects.get(pk=pem_model_id)

    _pem_update(pem_model_id, phase="saving", progress_done=2)
    r = trained.test_pearson
    with tempfile.TemporaryDirectory() as tmp:
        path = trained.save(Path(tmp) / f"pem-model-{pem_model_id}.npz")
        with transaction.atomic():
            locked = PemModel.objects.select_for_update().get(pk=pem_model_id)
            if locked.is_finished:
                return locked
            with open(path, "rb") as fh:
                resource = metric_resource_create(
                    name=f"PEM model: {model.name}", kind=ResourceKind.PEM_MODEL, file=File(fh, name=path.name),
                    owner=model.created_by, study=model.study,
                    description=f"Trained on study {model.study.name!r}; {trained.signature}",
                )
            _pem_update(
                pem_model_id, status=JobStatus.SUCCEEDED, phase="done", progress_done=3, finished_at=timezone.now(),
                resource=resource, signature=trained.signature,
                test_pearson=_finite(r.statistic) if r is not None else None,
                hyperparameters={k: _jsonable(v) for k, v in trained.best_params.items()},
                n_train=trained.n_train, n_test=trained.n_test,
                summary={
                    "cv_mse": _finite(trained.cv_mse),
                    "test_pvalue": _finite(r.pvalue) if r is not None and r.pvalue is not None else None,
                    "test_n": r.n if r is not None else 0,
                    "n_items": int(len(targets)),
                    "n_controls": int(targets["is_control"].sum()),
                    "n_originals": int(targets["original"].nunique()),
                    "feature_signatures": list(signatures),
                },
            )
    return PemModel.objects.get(pk=pem_model_id)


def pem_model_run_create(*, pem_model: PemModel, study: Study, created_by: User | None, enqueue: bool = True) -> MetricRun:
    """A ``pem`` run on ``study`` with a trained model and the resources it was trained with."""
    if pem_model.status != JobStatus.SUCCEEDED or pem_model.resource_id is None:
        raise ValidationError("this PEM model has not finished training")
    resources = {"model": pem_model.resource_id, **pem_model.feature_resources}
    return metric_run_create(study=study, metric="pem", resources=resources, created_by=created_by, enqueue=enqueue)


# --------------------------------------------------------------------------- PEM out of fold

def pem_out_of_fold_run_create(
    *,
    study: Study,
    criterion: str,
    folds: int = 5,
    param_grid: Mapping[str, Any] | None = None,
    created_by: User | None = None,
) -> MetricRun:
    """A finished ``pem`` run on ``study`` whose scores are out-of-fold predictions.

    For a meta-evaluation on the study's own judgments (ParaBank's leaderboard): PEM
    is trained on the mean human ``criterion`` score of each judged genuine candidate
    and every candidate is predicted by a model that never saw its original
    (:func:`metrics.core.pem_cv.pem_out_of_fold`, ``folds`` groups of originals). The
    three features are the study's latest succeeded runs of ``pivot-f1``,
    ``lm-fluency`` and ``target-f1`` with their default resources (run them first).
    The run's signature says ``pem-oof`` and names the folds, criterion, grid and the
    feature runs' signatures; its statistics are the predictions (PEM's own). Runs in
    this process; raises :class:`ValidationError` when a feature run or the
    judgments are missing.
    """
    from annotation.enums import SystemKind
    from annotation.judging.selectors import judgments_frame, study_criteria
    from metrics.core.pem import FEATURES
    from metrics.core.pem_cv import META_EVAL_GRID, pem_out_of_fold

    from .selectors import metric_scores_frame, study_metric_runs

    runs = {}
    for run in study_metric_runs(study=study):
        if run.metric in FEATURES and not run.resources and run.metric not in runs:
            runs[run.metric] = run
    missing = [f for f in FEATURES if f not in runs]
    if missing:
        raise ValidationError(f"PEM out of fold needs finished runs of {', '.join(missing)} on this study first")
    scale = next((c["scale"] for c in study_criteria(study=study) if c["slug"] == criterion), None)
    if scale is None:
        raise ValidationError({"criterion": f"the study has no criterion {criterion!r}"})
    frame = judgments_frame(study=study)
    frame = frame.loc[(frame["criterion"] == criterion) & ~frame["is_control"].astype(bool)]
    if frame.empty:
        raise ValidationError(f"study {study.name!r} has no judgments on {criterion!r}; PEM trains on them")
    human = frame.groupby("item")["score"].mean()

    columns = [metric_scores_frame(run=runs[f]).set_index("item") for f in FEATURES]
    items = columns[0].index
    x = np.column_stack([c["score"].reindex(items).to_numpy(dtype=float) for c in columns])
    y = human.reindex(items).to_numpy(dtype=float)
    grid = dict(param_grid or META_EVAL_GRID)
    try:
        oof = pem_out_of_fold(x, y, columns[0]["original"].to_numpy(), folds=folds, param_grid=grid,
                              target_range=(float(scale.get("min", 1)), float(scale.get("max", 5))))
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    signature = (f"metric:pem-oof|folds:{folds}|criterion:{criterion}|grid:{json.dumps(grid, sort_keys=True)}"
                 f"|data:{oof.digest}|" + "|".join(f"feature:{runs[f].signature}" for f in FEATURES))
    controls = set(SystemKind.control_kinds())
    now = timezone.now()
    with transaction.atomic():
        run = MetricRun(
            study=study, metric="pem", params={}, resources={}, higher_is_better=True, n=len(items), chunk_size=max(
                len(items), 1), created_by=created_by, status=JobStatus.SUCCEEDED, phase="done", signature=signature,
            progress_total=1, progress_done=1, started_at=now, finished_at=now,
        )
        run.full_clean()
        run.save()
        MetricScore.objects.bulk_create([
            MetricScore(run=run, candidate_id=int(item), score=MetricScore.clean_score(s),
                        stats=[float(s), 1.0] if math.isfinite(s) else [0.0, 0.0], created_at=now, updated_at=now)
            for item, s in zip(items, oof.scores)], batch_size=1000)
        kinds = dict(Candidate.objects.filter(original__study=study).values_list("pk", "system__kind"))
        genuine = np.asarray([kinds.get(int(i)) not in controls for i in items])
        finite = np.isfinite(oof.scores)
        per_system = []
        systems = columns[0]["system"].to_numpy()
        for name in sorted(set(systems.tolist())):
            mask = (systems == name) & finite
            per_system.append({"system": name, "is_control": bool(not genuine[systems == name][0]),
                               "n": int((systems == name).sum()),
                               "mean": _finite(oof.scores[mask].mean()) if mask.any() else None, "corpus": None})
        use = finite & genuine
        _run_update(run.pk, corpus_score=_finite(oof.scores[use].mean()) if use.any() else None,
                    corpus_n=int(use.sum()), system_scores=per_system)
    return MetricRun.objects.get(pk=run.pk)
