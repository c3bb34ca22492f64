"""A worker process killed in the middle of a chunk: the chunk is delivered again and the run completes.

On the embedded default, as ``make run`` runs it (SQLite file, SQLite-file
broker, a separate ``celery worker`` process with a prefork pool): the pool
process is SIGKILLed while it scores a chunk; ``acks_late`` and
``reject_on_worker_lost`` put the chunk's message back on the queue (billiard
notices the lost job after ``worker_lost_wait``, 10 s, so this test takes a while).
"""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = """
import os, signal, time, django
django.setup()
from django.contrib.auth.models import User
from annotation.enums import SystemKind
from annotation.models import Candidate, Original, Study, System
from metrics.services.runs import metric_run_create
from metrics.models import MetricRun, MetricRunChunk, MetricScore

owner = User.objects.create_user("killer")
study = Study.objects.create(name="Killed", owner=owner)
system = System.objects.create(study=study, name="human", kind=SystemKind.IMPORTED)
words = "the quick brown fox jumps over a lazy dog while seven old men watch from the hill".split()
Original.objects.bulk_create([
    Original(study=study, external_id=str(i), position=i, text=" ".join(words[(i + k) % len(words)] for k in range(14)))
    for i in range(300)])
Candidate.objects.bulk_create([
    Candidate(original=o, system=system, text=" ".join(reversed(o.text.split())))
    for o in Original.objects.filter(study=study)])
run = metric_run_create(study=study, metric="ter", chunk_size=100)

def pool_children():
    pid = int(os.environ["WORKER_PID"])
    path = f"/proc/{pid}/task/{pid}/children"
    return [int(x) for x in open(path).read().split()] if os.path.exists(path) else []

deadline = time.monotonic() + 120
victim_chunk = None
while time.monotonic() < deadline and victim_chunk is None:
    # A chunk counts its delivery before it computes: attempts >= 1 and not done = being scored now.
    busy = MetricRunChunk.objects.filter(run=run, done=False, attempts__gte=1).order_by("index").first()
    if busy is not None:
        children = pool_children()
        if children:
            os.kill(children[0], signal.SIGKILL)
            victim_chunk = busy.pk
    time.sleep(0.01)
while time.monotonic() < deadline:
    run.refresh_from_db()
    if run.is_finished:
        break
    time.sleep(0.2)
print(run.status, MetricScore.objects.filter(run=run).count(), run.n,
      MetricRunChunk.objects.get(pk=victim_chunk).attempts if victim_chunk else 0, run.error)
"""


@pytest.mark.slow
@pytest.mark.skipif(
    "DATABASE_URL" in os.environ,
    reason="always runs on the embedded default; the PostgreSQL pass of CI would repeat it unchanged",
)
def test_a_chunk_whose_worker_process_is_killed_is_redelivered_and_the_run_completes(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    }
    env.update(DJANGO_SETTINGS_MODULE="config.settings", PARAEVAL_VAR_DIR=str(tmp_path), LOG_LEVEL="WARNING")
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    celery = Path(sys.executable).parent / "celery"
    worker = subprocess.Popen(
        [
            str(celery),
            "-A",
            "config",
            "worker",
            "--pool=prefork",
            "--concurrency=1",
            "--loglevel=WARNING",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        proc = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            cwd=ROOT,
            env=env | {"WORKER_PID": str(worker.pid)},
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=10)
    log = worker.stdout.read().decode()[-3000:]
    assert proc.returncode == 0, proc.stderr + log
    status, n_scores, n_candidates, victim_attempts = proc.stdout.split()[:4]
    assert status == "succeeded", proc.stdout + log
    assert n_scores == n_candidates == "300"
    assert int(victim_attempts) >= 2, proc.stdout + log  # the killed chunk was delivered again
    assert "WorkerLostError" in log
