"""The embedded default for real: a SQLite database file, the SQLite-file broker
and a separate `celery worker` process, as `make run` starts them."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

#: Run with DATABASE_URL and CELERY_BROKER_URL removed: the same test on every backend.
pytestmark = pytest.mark.embedded_default

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import time, django
django.setup()
from django.contrib.auth.models import User
from annotation.services.queueing import study_import_file
from annotation.services.studies import study_create
owner = User.objects.create_user("stack-owner")
study = study_create(name="Stack", owner=owner)
rows = ["original_id,original,system,candidate"] + [f"{i},Sentence {i}.,human,Phrase {i}." for i in range(300)]
job = study_import_file(study=study, data=("\\n".join(rows) + "\\n").encode(), filename="s.csv", background=True)
assert job.status == "queued", job.status
deadline = time.monotonic() + 90
while time.monotonic() < deadline:
    job.refresh_from_db()
    if job.is_finished:
        break
    time.sleep(0.3)
print(job.status, job.summary.get("candidates_added"), job.error)
"""


@pytest.mark.slow
def test_background_import_through_a_worker_process_on_the_embedded_default(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    }
    env.update(DJANGO_SETTINGS_MODULE="config.settings", PARAEVAL_VAR_DIR=str(tmp_path))
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    celery = Path(sys.executable).parent / "celery"
    worker = subprocess.Popen(
        [
            str(celery),
            "-A",
            "config",
            "worker",
            "--pool=solo",
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
            [sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=150
        )
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[:2] == ["succeeded", "300"], proc.stdout + worker.stdout.read().decode()[-2000:]
    assert (tmp_path / "celery-broker.sqlite3").exists()
