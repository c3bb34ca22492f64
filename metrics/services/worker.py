"""The worker's steps of a metric run: start, score a chunk, finalize (and all three in one process), fail.

The tasks in ``metrics/tasks.py`` call these. A chunk is idempotent: its scores are
upserted and its ``done`` flag and the run's counter change in one transaction.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import Candidate
from config.jobs.enums import JobStatus
from metrics.core.base.bootstrap import bootstrap_ci
from metrics.core.base.metric import Metric
from metrics.core.base.params import MetricError
from metrics.core.llm_judge.backends import redact_secrets
from metrics.core.llm_judge.metric import ENV_API_KEY
from metrics.core.registry import UnknownMetric

from ..models import MetricRun, MetricRunChunk, MetricScore
from ._shared import FINISHED, finite_or_none, run_update
from .instances import metric_for_run

logger = logging.getLogger(__name__)


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
        run_update(run_id, **fields)
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
        metric_run_fail(
            run_id=run_id,
            error=(
                f"chunk {chunk.index + 1} of {run.progress_total}{where} was started {chunk.attempts - 1} times and "
                f"its worker process died each time (PARAEVAL_CHUNK_MAX_ATTEMPTS={max_attempts}); the run stops here. "
                "Look at the worker's log (out of memory?), then retry, perhaps with a smaller chunk size."
            ),
        )
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
        stats = np.asarray(
            metric.segment_stats(
                [r["original__text"] for r in scored],
                [r["text"] for r in scored],
                [r["original__reference"] or None for r in scored],
            ),
            dtype=np.float64,
        ).reshape(len(scored), -1)
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
            run_id=run_id,
            candidate_id=r["pk"],
            score=MetricScore.clean_score(s),
            stats=[float(x) for x in row],
            created_at=now,
            updated_at=now,
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
            objs,
            batch_size=1000,
            update_conflicts=True,
            unique_fields=["run", "candidate"],
            update_fields=["score", "stats", "updated_at"],
        )
        MetricRunChunk.objects.filter(pk=chunk_id).update(done=True, seconds=seconds, updated_at=now)
        run_update(run_id, progress_done=F("progress_done") + 1, compute_seconds=F("compute_seconds") + seconds)
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
    run_update(run_id, phase="aggregating")
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
        run_update(run_id, status=JobStatus.SUCCEEDED, phase="done", finished_at=now, **fields)
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
        per_system.append(
            {
                "system": name,
                "is_control": bool(controls[mask][0]),
                "n": int(mask.sum()),
                # Candidates without a sentence score (an LLM judge's unparseable answers, a
                # metric undefined on empty text): shown on the run's page, never hidden.
                "undefined": int(mask.sum() - finite.size),
                "mean": finite_or_none(finite.mean()) if finite.size else None,
                "corpus": finite_or_none(metric.aggregate(stats[mask])),
            }
        )
    return {
        "corpus_score": finite_or_none(ci.statistic),
        "ci_low": finite_or_none(ci.ci_low),
        "ci_high": finite_or_none(ci.ci_high),
        "corpus_n": int(corpus_rows.sum()),
        "system_scores": per_system,
    }


def metric_run_execute(*, run_id: int) -> MetricRun:
    """Run every step of a run in this process (demo, CLI, tests): start, chunks, finalize."""
    for chunk_id in metric_run_start(run_id=run_id):
        metric_run_chunk_execute(run_id=run_id, chunk_id=chunk_id)
    _finalize_if_complete(run_id)
    return MetricRun.objects.get(pk=run_id)


def metric_run_fail(*, run_id: int, error: str) -> None:
    """Record ``error`` and end the run as failed (a finished run is left alone).

    The error is shown on the run page and in the runs list, so it is stored without the LLM
    endpoint's key or anything that looks like a credential (:func:`redact_secrets`): whatever a
    metric or a library put in its message, a researcher never sees the worker's key.
    """
    error = redact_secrets(error, [os.environ.get(ENV_API_KEY, "")])
    MetricRun.objects.filter(pk=run_id, status__in=[JobStatus.QUEUED, JobStatus.RUNNING]).update(
        status=JobStatus.FAILED,
        phase="failed",
        error=error[:10_000],
        finished_at=timezone.now(),
        updated_at=timezone.now(),
    )
