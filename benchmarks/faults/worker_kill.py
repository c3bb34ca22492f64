"""Kill Celery workers with SIGKILL in the middle of a metric run and of a report build.

Scenarios, each against real ``celery worker`` processes (prefork, one pool process):

``pool``
    The pool process scoring a chunk is SIGKILLed (the OOM killer's usual victim).
    The worker's main process sees the child die; ``acks_late`` with
    ``reject_on_worker_lost`` puts the chunk's message back, a new pool process
    takes it, and the run must finish by itself.
``worker``
    The whole worker (main process and pool) is SIGKILLed mid-chunk — the machine
    died — and a new worker is started. The in-flight message is not acknowledged;
    whether the broker hands it out again, and when, is the broker's business
    (Redis: after its visibility timeout; kombu's SQLAlchemy transport: never).
    The script waits ``--stall-seconds`` for the run to finish by itself and says
    what happened; if it did not, it does what a researcher does on the run's
    page — Cancel, then Retry (chunks already done are kept) — and the run must
    then finish.
``report``
    The pool process building a report is SIGKILLed mid-build; the build message is
    delivered again and the report must succeed once.
``report-worker``
    The whole worker is SIGKILLed mid-build and a new one started; the report must
    finish within ``--stall-seconds`` (it does on Redis with a short
    ``--visibility-timeout``; on the SQLite-file broker it stays "running" — see
    benchmarks/RESULTS.md).

Every metric run must end with exactly one score per candidate, each equal to
PINC computed directly (``metrics.core.pinc.pinc_score``); the report with one set of
figures. The metric is ``pinc-slow`` (PINC plus a pause per chunk, see
``slow_metric.py``), so that there is a chunk in flight to kill.

Usage::

    .venv/bin/python benchmarks/faults/worker_kill.py                      # embedded SQLite + SQLite broker
    .venv/bin/python benchmarks/faults/worker_kill.py --backend postgres   # PostgreSQL + Redis on loopback
    .venv/bin/python benchmarks/faults/worker_kill.py --backend postgres --visibility-timeout 10

Prints one line per scenario and exits 1 if any final state is wrong. Bounded by
``--timeout`` seconds per wait; everything it creates is removed at the end.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.faults.common import Installation, wait_until  # noqa: E402


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    p.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432", help="PostgreSQL server (no db name)")
    p.add_argument("--broker", default="redis://127.0.0.1:6379/0", help="Redis broker (postgres backend)")
    p.add_argument(
        "--visibility-timeout",
        type=float,
        default=None,
        help="Redis visibility timeout in seconds (default: kombu's, one hour)",
    )
    p.add_argument(
        "--polling-interval",
        type=float,
        default=0.1,
        help="seconds between a worker's polls of the SQLite-file broker (kombu's default: 1)",
    )
    p.add_argument("--scenarios", default="pool,worker,report,report-worker")
    p.add_argument("--originals", type=int, default=20)
    p.add_argument("--chunk-size", type=int, default=4)
    p.add_argument("--chunk-seconds", type=float, default=0.5, help="pause of pinc-slow per chunk")
    p.add_argument(
        "--stall-seconds",
        type=float,
        default=20.0,
        help="how long to wait for a run to finish by itself after its worker died",
    )
    p.add_argument("--timeout", type=float, default=180.0)
    args = p.parse_args(argv)
    if not 1 <= args.originals <= 5000 or args.timeout > 900:
        p.error("--originals must be 1..5000 and --timeout at most 900")
    return args


def make_study():
    from django.contrib.auth.models import User

    from annotation.models import Candidate, Original, System
    from annotation.services.studies import researcher_grant, study_create

    owner = User.objects.create_user("faults-researcher")
    researcher_grant(user=owner)
    study = study_create(name="Worker faults", owner=owner)
    words = "in the beginning was the word and the word was with god and the word was god".split()
    originals = Original.objects.bulk_create(
        [
            Original(
                study=study,
                external_id=f"o{i}",
                position=i,
                text=" ".join(words[(i + k) % len(words)] for k in range(6 + i % 7)) + ".",
            )
            for i in range(ARGS.originals)
        ]
    )
    systems = System.objects.bulk_create([System(study=study, name="human"), System(study=study, name="machine")])
    Candidate.objects.bulk_create(
        [
            Candidate(original=o, system=s, text=o.text.replace("word", "saying" if s.name == "human" else "verb"))
            for o in originals
            for s in systems
        ]
    )
    return study, owner


def chunk_in_flight(run_id: int):
    """A chunk some worker has started (its delivery counted) but not finished, mid-run."""
    from metrics.models import MetricRun, MetricRunChunk

    run = MetricRun.objects.get(pk=run_id)
    if run.is_finished or run.progress_done < 1:
        return None
    return MetricRunChunk.objects.filter(run_id=run_id, done=False, attempts__gte=1).first()


def check_run(run_id: int) -> tuple[bool, str]:
    from annotation.models import Candidate
    from metrics.core.pinc import pinc_score
    from metrics.core.text import tokenize
    from metrics.models import MetricRun, MetricRunChunk, MetricScore

    run = MetricRun.objects.get(pk=run_id)
    scores = dict(MetricScore.objects.filter(run=run).values_list("candidate_id", "score"))
    n_rows = MetricScore.objects.filter(run=run).count()
    cands = Candidate.objects.filter(pk__in=scores).select_related("original")
    wrong = [
        c.pk
        for c in cands
        if abs(scores[c.pk] - pinc_score(tokenize(c.original.text, lowercase=True), tokenize(c.text, lowercase=True)))
        > 1e-12
    ]
    deliveries = sum(MetricRunChunk.objects.filter(run=run).values_list("attempts", flat=True))
    ok = (
        run.status == "succeeded"
        and n_rows == len(scores) == run.n
        and not wrong
        and run.progress_done == run.progress_total
    )
    return ok, (
        f"run {run.status}, {n_rows} scores for {run.n} candidates ({len(wrong)} wrong), "
        f"{run.progress_done}/{run.progress_total} chunks, {deliveries} chunk deliveries"
    )


def new_run(study, owner) -> int:
    from metrics.services.runs import metric_run_create

    return metric_run_create(study=study, metric="pinc-slow", created_by=owner, chunk_size=ARGS.chunk_size).pk


def finished(run_id: int):
    from metrics.models import MetricRun

    run = MetricRun.objects.get(pk=run_id)
    return run if run.is_finished else None


def scenario_pool(inst: Installation, study, owner) -> tuple[bool, str]:
    worker = inst.start_worker("pool")
    run_id = new_run(study, owner)
    chunk = wait_until(lambda: chunk_in_flight(run_id), timeout=ARGS.timeout)
    if chunk is None:
        return False, "no chunk was ever in flight\n" + inst.log_tail()
    victims = inst.pool_children(worker)
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    if not wait_until(lambda: finished(run_id), timeout=ARGS.timeout, interval=0.2):
        return False, "the run did not finish\n" + inst.log_tail()
    ok, detail = check_run(run_id)
    inst.kill_worker(worker)
    return ok, f"pool process {victims} SIGKILLed in chunk {chunk.index}: {detail}"


def scenario_worker(inst: Installation, study, owner) -> tuple[bool, str]:
    from metrics.models import MetricRun
    from metrics.services.runs import metric_run_cancel, metric_run_retry

    worker = inst.start_worker("doomed")
    run_id = new_run(study, owner)
    chunk = wait_until(lambda: chunk_in_flight(run_id), timeout=ARGS.timeout)
    if chunk is None:
        return False, "no chunk was ever in flight\n" + inst.log_tail()
    inst.kill_worker(worker, sig=signal.SIGKILL)
    killed_at = time.monotonic()
    replacement = inst.start_worker("replacement")
    by_itself = wait_until(lambda: finished(run_id), timeout=ARGS.stall_seconds, interval=0.2)
    if by_itself:
        how = f"finished by itself {time.monotonic() - killed_at:.0f} s after the kill"
    else:
        run = MetricRun.objects.get(pk=run_id)
        how = (
            f"STALLED {ARGS.stall_seconds:.0f} s at {run.progress_done}/{run.progress_total} chunks "
            f"(the dead worker's message was not delivered again); Cancel + Retry"
        )
        metric_run_cancel(run=run)
        metric_run_retry(run=MetricRun.objects.get(pk=run_id))
        if not wait_until(lambda: finished(run_id), timeout=ARGS.timeout, interval=0.2):
            return False, how + ": the run did not finish\n" + inst.log_tail()
    ok, detail = check_run(run_id)
    inst.kill_worker(replacement)
    return ok, f"whole worker SIGKILLed in chunk {chunk.index}, new worker started: {how}: {detail}"


def scenario_report(inst: Installation, study, owner) -> tuple[bool, str]:
    from annotation.judging.protocols.absolute.simulation import simulated_judges_fill
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from metrics.reports.models import Report, ReportPlot
    from metrics.reports.services.queueing import report_create

    design_update(study=study, changes={"seed": 1})
    study_judging_open(study=study)
    study.refresh_from_db()
    simulated_judges_fill(study=study, n_judges=4, seed=2)
    worker = inst.start_worker("report")
    # Many bootstrap resamples make the build last long enough to be caught in the middle.
    report = report_create(study=study, created_by=owner, settings={"n_boot": 20_000})
    running = wait_until(
        lambda: Report.objects.filter(pk=report.pk, status="running").exists(), timeout=ARGS.timeout, interval=0.02
    )
    if not running:
        return False, "the report never started\n" + inst.log_tail()
    time.sleep(0.3)
    phase = Report.objects.get(pk=report.pk).phase
    victims = inst.pool_children(worker)
    caught = Report.objects.get(pk=report.pk).status == "running"
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    done = wait_until(
        lambda: Report.objects.filter(pk=report.pk, status__in=["succeeded", "failed"]).first(),
        timeout=ARGS.timeout,
        interval=0.2,
    )
    inst.kill_worker(worker)
    if done is None:
        return False, "the report did not finish\n" + inst.log_tail()
    plots = ReportPlot.objects.filter(report=done)
    ok = caught and done.status == "succeeded" and plots.count() == plots.values("slug").distinct().count() > 0
    return ok, (
        f"pool process {victims} SIGKILLed {'while' if caught else 'AFTER (too late:'} building "
        f"({phase!r}{'' if caught else ')'}): report {done.status}, {plots.count()} figures"
        + (f" — {done.error}" if done.error else "")
    )


def scenario_report_worker(inst: Installation, study, owner) -> tuple[bool, str]:
    from metrics.reports.models import Report
    from metrics.reports.services.queueing import report_create

    if not Report.objects.filter(study=study, status="succeeded").exists():
        return False, "run the 'report' scenario first (it opens judging and fills the study)"
    worker = inst.start_worker("report-doomed")
    settings = {"n_boot": 20_000, "seed": 7}
    report = report_create(study=study, created_by=owner, settings=settings)
    if not wait_until(
        lambda: Report.objects.filter(pk=report.pk, status="running").exists(), timeout=ARGS.timeout, interval=0.02
    ):
        return False, "the report never started\n" + inst.log_tail()
    time.sleep(0.3)
    inst.kill_worker(worker, sig=signal.SIGKILL)
    replacement = inst.start_worker("report-replacement")
    done = wait_until(
        lambda: Report.objects.filter(pk=report.pk, status__in=["succeeded", "failed"]).first(),
        timeout=ARGS.stall_seconds,
        interval=0.2,
    )
    if done is not None:
        inst.kill_worker(replacement)
        return done.status == "succeeded", f"whole worker SIGKILLed mid-build: report {done.status} by itself"
    again = report_create(study=study, created_by=owner, settings=settings)
    inst.kill_worker(replacement)
    return False, (
        f"whole worker SIGKILLed mid-build: report #{report.pk} STALLED in 'running' for "
        f"{ARGS.stall_seconds:.0f} s (its message was not delivered again); asking again with the same "
        f"settings returns report #{again.pk} ({again.status}), so it cannot be rebuilt"
    )


SCENARIOS = {
    "pool": scenario_pool,
    "worker": scenario_worker,
    "report": scenario_report,
    "report-worker": scenario_report_worker,
}
ARGS: argparse.Namespace


def main(argv=None) -> int:
    global ARGS
    ARGS = parse_args(argv)
    inst = Installation(
        ARGS.backend,
        pg=ARGS.pg,
        broker=ARGS.broker,
        visibility_timeout=ARGS.visibility_timeout,
        polling_interval=ARGS.polling_interval,
    )
    os.environ["PARAEVAL_FAULTS_CHUNK_SECONDS"] = str(ARGS.chunk_seconds)
    inst.env["PARAEVAL_FAULTS_CHUNK_SECONDS"] = str(ARGS.chunk_seconds)
    failures = 0
    try:
        inst.setup()
        study, owner = make_study()
        broker = "SQLite-file broker" if ARGS.backend == "sqlite" else f"Redis {ARGS.broker}"
        print(
            f"backend: {ARGS.backend} ({broker}); {ARGS.originals * 2} candidates in chunks of {ARGS.chunk_size}, "
            f"{ARGS.chunk_seconds} s per chunk"
        )
        for name in [s.strip() for s in ARGS.scenarios.split(",") if s.strip()]:
            from django.apps import apps

            if name == "report" and not apps.is_installed("metrics.reports"):
                print("report: skipped (the reports app is not installed)")
                continue
            ok, detail = SCENARIOS[name](inst, study, owner)
            failures += not ok
            print(f"{name}: {'OK' if ok else 'FAILED'} — {detail}", flush=True)
    finally:
        inst.teardown()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
