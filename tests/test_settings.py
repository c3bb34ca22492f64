"""Production mode refuses to start unsafely; the embedded default needs no server."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_check(tmp_path, **env_overrides):
    env = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG", "DATABASE_URL", "CELERY_BROKER_URL"}}
    env.update({"DJANGO_SETTINGS_MODULE": "config.settings", "PARAEVAL_VAR_DIR": str(tmp_path)}, **env_overrides)
    return subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True)


def test_production_refuses_to_start_without_secret_key(tmp_path):
    proc = run_check(tmp_path, PARAEVAL_ENV="production", ALLOWED_HOSTS="example.org")
    assert proc.returncode != 0 and "needs SECRET_KEY" in proc.stderr


def test_production_refuses_debug(tmp_path):
    proc = run_check(tmp_path, PARAEVAL_ENV="production", SECRET_KEY="x" * 60, DEBUG="on", ALLOWED_HOSTS="example.org")
    assert proc.returncode != 0 and "refuses DEBUG" in proc.stderr


def test_production_deploy_check_is_clean(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE"}}
    env.update(DJANGO_SETTINGS_MODULE="config.settings", PARAEVAL_VAR_DIR=str(tmp_path), PARAEVAL_ENV="production",
               SECRET_KEY="k" * 30 + "Zq9!x#Lm2@pR7$wN4%tY6^uI8&oP0*aS", ALLOWED_HOSTS="example.org")
    proc = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_embedded_default_uses_sqlite_wal_and_a_serverless_broker(tmp_path):
    code = ("from django.conf import settings as s; import django; django.setup();"
            "print(s.DATABASES['default']['ENGINE']); print(s.CELERY_BROKER_URL);"
            "from django.db import connection; c=connection.cursor(); c.execute('PRAGMA journal_mode'); print(c.fetchone()[0])")
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    env.update(DJANGO_SETTINGS_MODULE="config.settings", PARAEVAL_VAR_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "django.db.backends.sqlite3"
    assert out[1].startswith("sqla+sqlite:///") and str(tmp_path) in out[1]
    assert out[2] == "wal"
