"""``migrate`` creates the embedded broker's default queue, from one process, before any worker starts.

kombu's SQLAlchemy transport inserts a queue's row on first use and guards that
only between threads: a worker and another process starting together on a new
SQLite broker file both inserted it, and one failed (``UNIQUE constraint failed:
kombu_queue.name``), which lost a CI run of a worker-kill test.
"""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.embedded_default
def test_migrate_on_a_new_var_directory_creates_the_default_queue_of_the_sqlite_broker(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    env.update(DJANGO_SETTINGS_MODULE="config.settings", PARAEVAL_VAR_DIR=str(tmp_path))
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    with sqlite3.connect(tmp_path / "celery-broker.sqlite3") as db:
        assert db.execute("SELECT name FROM kombu_queue").fetchall() == [("celery",)]
    # A second migrate (every `make run` migrates) finds it and adds nothing.
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    with sqlite3.connect(tmp_path / "celery-broker.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM kombu_queue").fetchone() == (1,)


@pytest.mark.django_db
def test_other_brokers_are_left_alone(monkeypatch):
    from config import apps
    from config.celery import app

    declared = []
    monkeypatch.setattr(
        app.amqp.queues[app.conf.task_default_queue].__class__,
        "declare",
        lambda self, *a, **k: declared.append(self.name),
    )
    apps.declare_embedded_broker_queue()  # the test settings' broker is memory://
    assert declared == []
