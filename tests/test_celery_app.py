"""Every process Django starts publishes to the configured broker: ``@shared_task`` binds to
paraeval's Celery app, not to Celery's default one (which publishes to amqp://localhost)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = """
import django
django.setup()
from django.conf import settings
from annotation.tasks import import_job_run_task
from metrics.dashboard.tasks import dashboard_refresh_task
for task in (import_job_run_task, dashboard_refresh_task):
    app = task.app
    print(app.main, app.conf.broker_url == settings.CELERY_BROKER_URL)
"""


def test_a_fresh_process_binds_the_tasks_to_paraevals_app_and_its_broker(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_ALLOW_ASYNC_UNSAFE"}}
    env.update(DJANGO_SETTINGS_MODULE="config.settings", PARAEVAL_VAR_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["paraeval True", "paraeval True"], out.stdout + out.stderr
