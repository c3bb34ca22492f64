"""Sign-in links printed by commands name the address the server really runs on (issue 28, item 4)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from config.run import record_url

#: Runs with DATABASE_URL removed and sends no work to a broker: the same test on every backend.
pytestmark = pytest.mark.embedded_default

ROOT = Path(__file__).resolve().parent.parent.parent


def _env(var: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "PARAEVAL_BASE_URL"}}
    env.update({"PARAEVAL_VAR_DIR": str(var), "DJANGO_SETTINGS_MODULE": "config.settings", **extra})
    return env


@pytest.fixture(scope="module")
def migrated(tmp_path_factory) -> Path:
    """A var/ with a migrated database and one researcher (made once: migrations take seconds)."""
    var = tmp_path_factory.mktemp("signin-var")
    for args in (["migrate", "-v0"], ["create_researcher", "lead@lab.org"]):
        subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=_env(var), check=True, capture_output=True)
    return var


def _signin_link(migrated: Path, var: Path, **extra: str) -> str:
    shutil.copy(migrated / "paraeval.sqlite3", var / "paraeval.sqlite3")
    proc = subprocess.run(
        [sys.executable, "manage.py", "signin_link", "lead@lab.org"],
        cwd=ROOT,
        env=_env(var, **extra),
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()


def test_signin_link_uses_the_host_and_port_make_run_serves_on(migrated, tmp_path):
    record_url(tmp_path, "http://0.0.0.0:8123/")
    assert _signin_link(migrated, tmp_path).startswith("http://0.0.0.0:8123/signin/")


def test_paraeval_base_url_wins_over_the_running_server(migrated, tmp_path):
    record_url(tmp_path, "http://127.0.0.1:8123/")
    link = _signin_link(migrated, tmp_path, PARAEVAL_BASE_URL="https://eval.lab.org")
    assert link.startswith("https://eval.lab.org/signin/")


def test_without_a_server_links_use_make_runs_default_address(migrated, tmp_path):
    assert _signin_link(migrated, tmp_path).startswith("http://127.0.0.1:8000/signin/")
