"""`make run`'s launcher (config/run.py): a busy port or a second run on the same var/
fails at once with one line and a non-zero exit; Ctrl-C and SIGTERM stop the web server
and the worker quietly with exit 0."""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

#: Run with DATABASE_URL and CELERY_BROKER_URL removed: the same test on every backend.
pytestmark = pytest.mark.embedded_default

ROOT = Path(__file__).resolve().parent.parent
NOISE = ("Traceback", "Segmentation fault", "ForkPoolWorker", "SIGTERM", "ERROR", "CRITICAL")


def _env(var_dir: Path) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    }
    env.update(DJANGO_SETTINGS_MODULE="config.settings", PARAEVAL_VAR_DIR=str(var_dir), PYTHONUNBUFFERED="1")
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch(var_dir: Path, port: int, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "config.run", "--port", str(port), "--concurrency", "1"],
        cwd=ROOT,
        env=_env(var_dir),
        capture_output=True,
        text=True,
        timeout=30,
        **kw,
    )


def _processes_using(var_dir: Path) -> list[int]:
    """Pids of live processes whose environment names ``var_dir`` (the launcher's children)."""
    needle = f"PARAEVAL_VAR_DIR={var_dir}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in environ.split(b"\0") and state != "Z":
            pids.append(int(entry.name))
    return pids


def test_run_on_a_busy_port_fails_at_once_with_one_line_and_starts_nothing(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        started = time.monotonic()
        proc = _launch(tmp_path, port)
    assert proc.returncode == 1
    assert time.monotonic() - started < 10
    lines = proc.stderr.strip().splitlines()
    assert lines == [
        f"paraeval: port {port} on 127.0.0.1 is already in use; stop what uses it or choose "
        f"another port: make run PORT={port + 1}"
    ]
    assert proc.stdout == ""  # no Celery banner: the worker never started
    assert _processes_using(tmp_path) == []


def test_a_second_run_on_the_same_var_dir_fails_with_one_line_naming_the_first(tmp_path):
    with open(tmp_path / "run.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.write("pid 4242\n")
        held.flush()
        proc = _launch(tmp_path, _free_port())
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"paraeval: {tmp_path} (its database, broker file and beat schedule) is in use")
    assert "pid 4242" in lines[0]
    assert _processes_using(tmp_path) == []


@pytest.fixture(scope="module")
def migrated_var(tmp_path_factory):
    var_dir = tmp_path_factory.mktemp("run-var")
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=_env(var_dir), check=True)
    return var_dir


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_stops_server_and_worker_quietly_with_exit_0(migrated_var, signum):
    port = _free_port()
    launcher = subprocess.Popen(
        [sys.executable, "-m", "config.run", "--port", str(port), "--concurrency", "1"],
        cwd=ROOT,
        env=_env(migrated_var),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        lines = []
        deadline = time.monotonic() + 90
        for line in launcher.stdout:  # the ready line comes once the server accepts connections
            lines.append(line)
            if "paraeval is ready at" in line or time.monotonic() > deadline:
                break
        assert f"paraeval is ready at http://127.0.0.1:{port}/" in "".join(lines), "".join(lines)
        time.sleep(3)  # let the worker finish starting (its banner, beat) before the signal
        launcher.send_signal(signum)
        rest, _ = launcher.communicate(timeout=60)
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)
    output = "".join(lines) + rest
    assert launcher.returncode == 0, output
    assert output.rstrip().endswith("paraeval stopped."), output
    assert not [word for word in NOISE if word in output], output
    deadline = time.monotonic() + 10
    while _processes_using(migrated_var) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_using(migrated_var) == []  # worker, its pool and the web server are gone
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0  # the web server no longer listens


@pytest.mark.slow
def test_sigterm_before_the_server_is_ready_still_stops_everything_with_exit_0(migrated_var):
    """A signal in the first second (the worker starting, the web server not yet listening) is
    recorded and acted on between the launcher's steps: it stops both children and exits 0."""
    launcher = subprocess.Popen(
        [sys.executable, "-m", "config.run", "--port", str(_free_port()), "--concurrency", "1"],
        cwd=ROOT,
        env=_env(migrated_var),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        time.sleep(1.0)
        launcher.send_signal(signal.SIGTERM)
        output, _ = launcher.communicate(timeout=60)
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)
    assert launcher.returncode == 0, output
    assert output.rstrip().endswith("paraeval stopped."), output
    assert "paraeval is ready" not in output
    deadline = time.monotonic() + 10
    while _processes_using(migrated_var) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_using(migrated_var) == []
