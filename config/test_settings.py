"""Settings for the test suite: the real settings, with fast hashing and an
isolated var/ directory. ``DATABASE_URL`` and ``CELERY_BROKER_URL`` from the
environment still apply, so CI runs the same suite on PostgreSQL and Redis."""

import os
import tempfile
from pathlib import Path

os.environ.setdefault("PARAEVAL_VAR_DIR", tempfile.mkdtemp(prefix="paraeval-test-"))
# Playwright's sync API runs an event loop in the test thread; the ORM calls made
# by fixtures in that same thread are safe because nothing else runs there.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def _broker_for_xdist_worker(url: str, worker: str) -> str:
    """Under pytest-xdist every worker process gets a Redis database of its own
    (base, base-1, ...): the real Celery workers that one test process starts must
    never take the tasks of another's test database. Other brokers are left alone
    (the embedded default and the in-memory broker are per process already; the
    RabbitMQ pass runs without xdist)."""
    import re

    match = re.fullmatch(r"(rediss?://[^/]*)(?:/(\d*))?", url)
    index = int(worker.removeprefix("gw") or 0) if worker.startswith("gw") else 0
    if not match or not index:
        return url
    base = int(match.group(2) or 0)
    return f"{match.group(1)}/{(base - index) % 16}"


if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get("CELERY_BROKER_URL"):
    # Set in the environment, not only in settings: Celery and the worker
    # subprocesses that tests start read CELERY_BROKER_URL from there first.
    os.environ["CELERY_BROKER_URL"] = _broker_for_xdist_worker(
        os.environ["CELERY_BROKER_URL"], os.environ["PYTEST_XDIST_WORKER"]
    )

from .settings import *  # noqa: E402,F401,F403
from .settings import VAR_DIR  # noqa: E402

if "CELERY_BROKER_URL" not in os.environ:
    # An in-process broker for the embedded-default run; tests that need a real
    # worker start one in a thread (celery.contrib.testing.worker).
    CELERY_BROKER_URL = "memory://"
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # A test database in a file, not in memory: in-memory SQLite with a shared cache
    # answers concurrent connections (a worker thread, the live server) with "database
    # table is locked" at once instead of waiting. A file behaves like production:
    # WAL, IMMEDIATE transactions and the busy timeout from config/settings.py.
    DATABASES["default"]["TEST"] = {"NAME": str(Path(VAR_DIR) / "test-db.sqlite3")}  # noqa: F405
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
MEDIA_ROOT = Path(VAR_DIR) / "media"
PARAEVAL_CACHE_DIR = Path(os.environ.get("PARAEVAL_CACHE_DIR", Path(VAR_DIR) / "cache"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Tests poll a dashboard right after a change and expect a refresh; the rest between refreshes
# has its own test (tests/metrics/dashboard/test_dashboard.py).
PARAEVAL_DASHBOARD_REFRESH_SECONDS = 0
PARAEVAL_DASHBOARD_DUTY = 1.0  # no rest after a refresh however long it took (its own test)
