"""Production mode refuses to start unsafely; the embedded default needs no server."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_check(tmp_path, **env_overrides):
    env = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG", "DATABASE_URL", "CELERY_BROKER_URL"}}
    env.update({"DJANGO_SETTINGS_MODULE": "config.settings", "PARAEVAL_VAR_DIR": str(tmp_path)}, **env_overrides)
    return subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True)


@pytest.mark.embedded_default
def test_production_refuses_to_start_without_secret_key(tmp_path):
    proc = run_check(tmp_path, PARAEVAL_ENV="production", ALLOWED_HOSTS="example.org")
    assert proc.returncode != 0 and "needs SECRET_KEY" in proc.stderr


@pytest.mark.embedded_default
def test_production_refuses_debug(tmp_path):
    proc = run_check(tmp_path, PARAEVAL_ENV="production", SECRET_KEY="x" * 60, DEBUG="on", ALLOWED_HOSTS="example.org")
    assert proc.returncode != 0 and "refuses DEBUG" in proc.stderr


PRODUCTION_KEY = "k" * 30 + "Zq9!x#Lm2@pR7$wN4%tY6^uI8&oP0*aS"


def production_env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE", "CACHE_URL"}}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        PARAEVAL_VAR_DIR=str(tmp_path),
        PARAEVAL_ENV="production",
        SECRET_KEY=PRODUCTION_KEY,
        ALLOWED_HOSTS="example.org",
        **extra,
    )
    return env


def manage(env, *args):
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)


def test_production_deploy_check_refuses_uncollected_static_files(tmp_path):
    # Before: `check --deploy` was clean and then every HTML page answered 500
    # (whitenoise's manifest storage has no staticfiles.json without collectstatic).
    proc = manage(production_env(tmp_path), "check", "--deploy")
    assert proc.returncode != 0 and "paraeval.E001" in proc.stderr and "make collectstatic" in proc.stderr


@pytest.mark.embedded_default
def test_production_deploy_check_is_clean_after_collectstatic_and_pages_render(tmp_path):
    # Changed: this test used to run `check --deploy` alone; the deployment steps
    # now include collectstatic (`make deploy-check`), which the check verifies.
    # On the embedded default whatever the backend: CI's production stage (.ci/production.sh)
    # runs the same deployment steps and opens every page on PostgreSQL and Redis.
    env = {k: v for k, v in production_env(tmp_path).items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    assert manage(env, "collectstatic", "--noinput", "-v0").returncode == 0
    proc = manage(env, "check", "--deploy", "--fail-level", "WARNING")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code = (
        "import django; django.setup(); from django.test import Client;"
        "r = Client().get('/accounts/login/', HTTP_HOST='example.org', secure=True);"
        "import re; print(r.status_code, bool(re.search(r'css/paraeval[.][0-9a-f]{12}[.]css', r.content.decode())))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["200", "True"], out.stderr[-2000:]


@pytest.mark.embedded_default
def test_embedded_default_uses_sqlite_wal_and_a_serverless_broker(tmp_path):
    code = (
        "from django.conf import settings as s; import django; django.setup();"
        "print(s.DATABASES['default']['ENGINE']); print(s.CELERY_BROKER_URL);"
        "from django.db import connection; c=connection.cursor(); c.execute('PRAGMA journal_mode'); print(c.fetchone()[0])"
    )
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    env.update(DJANGO_SETTINGS_MODULE="config.settings", PARAEVAL_VAR_DIR=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out[0] == "django.db.backends.sqlite3"
    assert out[1].startswith("sqla+sqlite:///") and str(tmp_path) in out[1]
    assert out[2] == "wal"


def _settings_value(tmp_path, expr: str, **env_overrides) -> str:
    """``expr`` evaluated in a new process with these settings (``s``). The settings module and
    what reads it (the Celery app's routes and queues) need no app loading: without
    ``django.setup()`` a process takes 0.4 s, not 3 s."""
    code = f"from django.conf import settings as s; print({expr})"
    env = {
        k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL"}
    }
    env.update({"DJANGO_SETTINGS_MODULE": "config.settings", "PARAEVAL_VAR_DIR": str(tmp_path)}, **env_overrides)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.embedded_default
def test_development_makes_its_own_random_secret_key_under_var_readable_only_by_its_owner(tmp_path):
    first = _settings_value(tmp_path / "a", "s.SECRET_KEY")
    assert first == _settings_value(tmp_path / "a", "s.SECRET_KEY")  # kept: sessions survive a restart
    assert first != _settings_value(tmp_path / "b", "s.SECRET_KEY")  # another install, another key
    assert len(first) >= 50 and "paraeval" not in first and "insecure" not in first
    key_file = tmp_path / "a" / "secret_key"
    assert key_file.read_text().strip() == first
    assert key_file.stat().st_mode & 0o777 == 0o600


@pytest.mark.embedded_default
def test_a_secret_key_from_the_environment_wins_and_writes_no_file(tmp_path):
    assert _settings_value(tmp_path, "s.SECRET_KEY", SECRET_KEY="from-the-environment-" + "x" * 40).startswith(
        "from-the-env"
    )
    assert not (tmp_path / "secret_key").exists()


@pytest.mark.embedded_default
def test_login_failures_are_counted_in_the_database_even_when_a_shared_cache_is_configured(tmp_path):
    """Issue 23 #4: with the counters in Redis, a Redis outage took every sign-in door down."""
    for env in ({}, {"CACHE_URL": "redis://127.0.0.1:6379/2"}, {"CACHE_URL": "locmemcache://x"}):
        assert _settings_value(tmp_path, "s.AXES_HANDLER", **env) == "axes.handlers.database.AxesDatabaseHandler"
    assert _settings_value(tmp_path, "s.AXES_LOCKOUT_PARAMETERS") == "['username', ['username', 'ip_address']]"
    assert _settings_value(tmp_path, "s.AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT") == "False"


@pytest.mark.embedded_default
def test_a_redis_cache_gives_up_within_a_second_when_redis_is_unreachable(tmp_path):
    options = _settings_value(tmp_path, "s.CACHES['default'].get('OPTIONS')", CACHE_URL="redis://127.0.0.1:6379/2")
    assert "'socket_connect_timeout': 1.0" in options and "'socket_timeout': 1.0" in options


@pytest.mark.embedded_default
def test_x_forwarded_for_is_ignored_unless_proxies_are_declared(tmp_path):
    assert _settings_value(tmp_path, "s.REST_FRAMEWORK['NUM_PROXIES']") == "0"
    assert _settings_value(tmp_path, "s.REST_FRAMEWORK['NUM_PROXIES']", PARAEVAL_NUM_PROXIES="1") == "1"


@pytest.mark.embedded_default
def test_the_dashboards_background_work_takes_its_own_queue_only_when_one_is_named(tmp_path):
    """docs/deployment.md's pool for dashboards: a worker started with -Q that queue at a lower priority."""
    route = "__import__('config.celery').celery.app.amqp.router.route({}, '%s').get('queue').name"
    assert _settings_value(tmp_path, route % "dashboard.refresh") == "celery"
    assert _settings_value(tmp_path, route % "dashboard.refresh", PARAEVAL_DASHBOARD_QUEUE="dashboards") == "dashboards"
    assert (
        _settings_value(tmp_path, route % "metrics.metric_run_start", PARAEVAL_DASHBOARD_QUEUE="dashboards") == "celery"
    )


@pytest.mark.embedded_default
def test_plans_take_a_queue_of_their_own_that_a_worker_without_q_consumes_too(tmp_path):
    """Issue 38: plans shared the dashboards' queue, so one researcher's plan held every study's
    refreshes. A plan goes to the plans queue whatever the dashboards' is; a worker started without
    -Q (make run, make worker) consumes it and the default queue, so the demo still plans."""
    route = "__import__('config.celery').celery.app.amqp.router.route({}, '%s').get('queue').name"
    for env in ({}, {"PARAEVAL_DASHBOARD_QUEUE": "dashboards"}):
        assert _settings_value(tmp_path, route % "dashboard.plan", **env) == "plans"
    consumed = "sorted(__import__('config.celery').celery.app.amqp.queues)"
    assert _settings_value(tmp_path, consumed) == "['celery', 'plans']"
    assert _settings_value(tmp_path, consumed, PARAEVAL_DASHBOARD_QUEUE="dashboards") == "['celery', 'plans']"
    assert _settings_value(tmp_path, route % "dashboard.plan", PARAEVAL_PLAN_QUEUE="") == "celery"
    # each queue has a routing key of its own: bound to the same key, both would take every task
    keys = "sorted((q.name, q.exchange.name, q.routing_key) for q in __import__('config.celery').celery.app.amqp.queues.values())"
    assert _settings_value(tmp_path, keys) == "[('celery', 'celery', 'celery'), ('plans', 'plans', 'plans')]"
