"""``make run``'s launcher: one web server and one Celery worker, supervised.

    python -m config.run [--host 127.0.0.1] [--port 8000] [--concurrency 2]

Why a launcher and not two ``&`` jobs in the Makefile: with a shell ``trap 'kill 0'``
a busy port printed Django's "That port is already in use." once, buried under the
Celery banner, while the worker kept running and ``make`` never returned; Ctrl-C sent
SIGINT to every process of the group at once (the pool's ForkPoolWorkers included),
which ended in SIGTERM tracebacks and make's "Segmentation fault".

What it does, in order:

1. takes an exclusive lock on ``var/run.lock`` so that a second ``make run`` on the
   same ``var/`` (the SQLite database, the SQLite-file broker and Celery beat's
   schedule file) fails at once instead of sharing them with the first;
2. checks that ``HOST:PORT`` can be bound, *before* starting anything; then, with
   ``--prepare`` (as ``make run`` calls it), migrates and loads the demo study;
3. starts the worker (``celery -A config worker -B``) and ``runserver --noreload`` as
   children, each in its own session so that the terminal's Ctrl-C reaches only this
   launcher, which then stops them in order: the worker gets one SIGTERM (Celery's warm
   shutdown: it finishes or returns its tasks and stops its own pool), the web server
   one SIGTERM;
4. if either child exits by itself, stops the other and exits non-zero with one line
   saying which one stopped.

Failures print exactly one line starting with ``paraeval:`` on stderr and exit 1.
Ctrl-C (SIGINT) and SIGTERM end with "paraeval stopped." and exit 0.

When it runs in the terminal's foreground (``make run`` typed at a prompt), the launcher
makes its own process group the terminal's foreground group, as a job-control shell
does, so that Ctrl-C is not also delivered to ``make``: make would otherwise re-raise
SIGINT on itself after its child returned and exit 130 whatever the child did.
"""

from __future__ import annotations

import argparse
import errno
import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: How long a child gets to stop after SIGTERM before it is killed.
STOP_TIMEOUT = 20.0


class LaunchError(Exception):
    """A reason not to start; its message is the one line the user sees."""


def var_dir() -> Path:
    """The directory ``config.settings`` uses for the database, broker and beat files."""
    return Path(os.environ.get("PARAEVAL_VAR_DIR", str(ROOT / "var")))


def take_lock(directory: Path):
    """Hold ``run.lock`` in ``directory`` for the life of this process (flock).

    The lock goes away with the process however it ends, so there is never a stale
    lock file to delete by hand.
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "run.lock"
    handle = open(path, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        owner = handle.read().strip() or "another process"
        handle.close()
        raise LaunchError(
            f"paraeval: {directory} (its database, broker file and beat schedule) is in use by "
            f"another `make run` ({owner}); stop it first, or give this one its own PARAEVAL_VAR_DIR"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}\n")
    handle.flush()
    return handle


def check_port(host: str, port: int) -> None:
    """Fail with one line if ``host:port`` cannot be bound.

    SO_REUSEADDR as runserver sets it, so a port in TIME_WAIT from the previous run
    counts as free (as it is for runserver) while a listening socket does not.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise LaunchError(
                    f"paraeval: port {port} on {host} is already in use; stop what uses it or choose "
                    f"another port: make run PORT={port + 1}"
                ) from None
            if exc.errno == errno.EACCES:
                raise LaunchError(
                    f"paraeval: no permission to listen on port {port}; choose a port above 1023: make run PORT=8000"
                ) from None
            raise LaunchError(f"paraeval: cannot listen on {host}:{port}: {exc.strerror}") from None


def record_url(directory: Path, url: str) -> Path:
    """Write where this server answers to ``var/server-url``: ``manage.py`` commands run beside it
    (signin_link, create_researcher --link, add_participants --link) print links to this host and
    port unless PARAEVAL_BASE_URL says otherwise (config/settings.py)."""
    path = directory / "server-url"
    path.write_text(url.rstrip("/") + "\n", encoding="utf-8")
    return path


def wait_until_listening(
    host: str, port: int, proc: subprocess.Popen, timeout: float = 60.0, stop: _StopRequest | None = None
) -> bool:
    """True once something accepts connections on ``host:port`` (False if ``proc`` died or ``stop`` is set)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None or stop:
            return False
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.2)
    return False


class _StopRequest:
    """Set by the signal handler; the supervision loop reads it between its steps.

    The handler only records the signal. It used to raise an exception instead, which
    could land anywhere, for instance inside ``Popen.poll()`` between taking and
    releasing the Popen's wait lock: the lock stayed taken and the later ``wait()``
    of the orderly stop blocked for ever (seen once in CI as a launcher that never
    exited after SIGTERM).
    """

    def __init__(self) -> None:
        self.signum: int | None = None

    def __call__(self, signum, frame) -> None:  # noqa: ARG002 (signal handler signature)
        self.signum = signum

    def __bool__(self) -> bool:
        return self.signum is not None


def _take_terminal():
    """Make this process's group the terminal's foreground group; return how to undo it.

    Only when stdin is a terminal and we are in its foreground group (typed at a
    prompt, possibly under make); otherwise do nothing. See the module docstring.
    """
    try:
        fd = sys.stdin.fileno()
        if not os.isatty(fd) or os.tcgetpgrp(fd) != os.getpgrp():
            return lambda: None
        original = os.getpgrp()
        os.setpgid(0, 0)
        old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # tcsetpgrp from a background group
        os.tcsetpgrp(fd, os.getpgrp())
        signal.signal(signal.SIGTTOU, old)
    except (OSError, ValueError, AttributeError):
        return lambda: None

    def give_back():
        try:
            signal.signal(signal.SIGTTOU, signal.SIG_IGN)
            os.tcsetpgrp(fd, original)
        except OSError:
            pass

    return give_back


def _stop(proc: subprocess.Popen | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # its own session: this reaches its pool too
        proc.wait()
    except ProcessLookupError:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m config.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    parser.add_argument("--concurrency", type=int, default=int(os.environ.get("WORKER_CONCURRENCY", "2")))
    parser.add_argument(
        "--prepare",
        action="store_true",
        help="after the checks, migrate and load the demo study (what `make run` does)",
    )
    args = parser.parse_args(argv)

    try:
        lock = take_lock(var_dir())  # noqa: F841 (held until exit)
        check_port(args.host, args.port)
    except LaunchError as exc:
        print(exc, file=sys.stderr)
        return 1

    if args.prepare:
        # After the checks, so that a busy port fails in a second, not after the migrations.
        try:
            for step in (["migrate", "--noinput", "-v0"], ["load_demo"]):
                if subprocess.run([sys.executable, "manage.py", *step], cwd=ROOT).returncode != 0:
                    print(f"paraeval: `manage.py {' '.join(step)}` failed (see above)", file=sys.stderr)
                    return 1
        except KeyboardInterrupt:
            print("paraeval stopped.", flush=True)
            return 0

    give_back_terminal = _take_terminal()
    worker = web = None
    stop = _StopRequest()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)
    bin_dir = Path(sys.executable).parent
    url = f"http://{args.host}:{args.port}/"
    record_url(var_dir(), url)
    try:
        worker = subprocess.Popen(
            [
                str(bin_dir / "celery"),
                "-A",
                "config",
                "worker",
                "-B",
                "--loglevel=INFO",
                f"--concurrency={args.concurrency}",
            ],
            cwd=ROOT,
            start_new_session=True,
        )
        if not stop:
            web = subprocess.Popen(
                [sys.executable, "manage.py", "runserver", "--noreload", f"{args.host}:{args.port}"],
                cwd=ROOT,
                start_new_session=True,
            )
            if wait_until_listening(args.host, args.port, web, stop=stop):
                print(f"\nparaeval is ready at {url}  (Ctrl-C stops the server and the worker)\n", flush=True)
        while not stop:
            if web is not None and web.poll() is not None:
                print(
                    f"paraeval: the web server stopped (exit code {web.returncode}); stopping the worker",
                    file=sys.stderr,
                    flush=True,
                )
                _stop(worker)
                return 1
            if worker.poll() is not None:
                print(
                    f"paraeval: the Celery worker stopped (exit code {worker.returncode}); stopping the web server",
                    file=sys.stderr,
                    flush=True,
                )
                _stop(web)
                return 1
            time.sleep(0.2)
        # Further signals while stopping change nothing: the stop below is orderly either way.
        _stop(web)
        _stop(worker)
        print("paraeval stopped.", flush=True)
        return 0
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        for proc in (web, worker):
            _stop(proc)
        give_back_terminal()


if __name__ == "__main__":
    sys.exit(main())
