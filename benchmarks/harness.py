"""Starting and stopping what the load and fault benchmarks run against: one place.

Every script in ``benchmarks/`` and ``benchmarks/faults/`` that serves paraeval
starts gunicorn with :func:`start_gunicorn` and stops it with :func:`stop_process`
(the whole process group: master and workers), measures the server's CPU with
:func:`process_tree_cpu`, and creates/drops its own PostgreSQL database with
:func:`fresh_database`. Only loopback servers are accepted (:func:`require_loopback`).

Ports: :func:`free_port` picks a free one from ``PARAEVAL_BENCH_PORTS`` (default
9160–9169, the range this machine's benchmarks may use), else any free port.
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def require_loopback(url: str) -> None:
    """Raise ``SystemExit`` unless ``url``'s host is this machine."""
    if urlsplit(url).hostname not in LOOPBACK:
        raise SystemExit(f"{url}: only loopback servers are accepted (benchmarks load this machine only)")


def _port_range() -> range:
    spec = os.environ.get("PARAEVAL_BENCH_PORTS", "9160-9169")
    lo, _, hi = spec.partition("-")
    return range(int(lo), int(hi or lo) + 1)


def free_port() -> int:
    """A free loopback TCP port, preferring ``PARAEVAL_BENCH_PORTS`` (default 9160–9169)."""
    for port in _port_range():
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_gunicorn(
    env: dict,
    *,
    port: int,
    workers: int = 4,
    threads: int = 4,
    timeout: float = 30,
    log_level: str = "warning",
    extra_args: tuple[str, ...] = (),
    nice: int = 0,
    idle: bool = False,
) -> subprocess.Popen:
    """gunicorn serving ``config.wsgi`` on 127.0.0.1:``port`` (gthread), in its own
    process group (``extra_args``: more gunicorn options, e.g. ``("--preload",)``; ``nice``: a lower
    CPU priority, as ``nice -n``; ``idle``: Linux's ``SCHED_IDLE`` policy, :func:`lowest_priority`); returns once ``/accounts/login/`` answers 200. Raises
    ``RuntimeError`` if it exits (e.g. the port was taken: never measure someone
    else's server) or does not come up within ``timeout`` seconds."""
    cmd = [
        str(ROOT / ".venv" / "bin" / "gunicorn"),
        "config.wsgi",
        "-b",
        f"127.0.0.1:{port}",
        "-w",
        str(workers),
        "-k",
        "gthread",
        "--threads",
        str(threads),
        "--keep-alive",
        "30",
        "--log-level",
        log_level,
        "--timeout",
        "60",
        *extra_args,
    ]
    proc = subprocess.Popen(
        [*lowest_priority(nice=nice, idle=idle), *cmd], cwd=ROOT, env={**os.environ, **env}, start_new_session=True
    )
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {proc.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/accounts/login/")
            if conn.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.3)
    stop_process(proc)
    raise RuntimeError("gunicorn did not come up")


def stop_process(proc: subprocess.Popen | None, *, sig=signal.SIGTERM, timeout: float = 20) -> None:
    """Stop ``proc``'s process group (started with ``start_new_session``): ``sig``,
    then SIGKILL after ``timeout`` seconds. Safe on ``None`` and on a dead process."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


def process_tree_cpu(root_pid: int) -> float:
    """User + system CPU seconds of ``root_pid`` and its direct children (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(entry.name), int(fields[1])
        if pid == root_pid or ppid == root_pid:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def process_tree_pss_mib(root_pid: int) -> float:
    """Proportional set size (MiB) of ``root_pid`` and its direct children: memory the
    workers share (e.g. after gunicorn's ``--preload``) counts once, split between them."""
    total_kib = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if int(entry.name) != root_pid and ppid != root_pid:
                continue
            for line in (entry / "smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total_kib += int(line.split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return total_kib / 1024


def machine_cpu() -> dict[str, float]:
    """CPU seconds the whole machine has spent since boot (Linux /proc/stat): ``busy`` (user,
    nice, system, irq, softirq, steal) and ``nice`` (user time of processes under nice > 0).
    Differences over a run count every process, PostgreSQL's and Redis's included."""
    tick = os.sysconf("SC_CLK_TCK")
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return {"busy": float("nan"), "nice": float("nan")}
    user, nice, system, _idle, _iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return {"busy": (user + nice + system + irq + softirq + steal) / tick, "nice": nice / tick}


def load_average() -> str:
    """The 1/5/15-minute load averages, as text."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def fresh_database(pg: str, name: str) -> str:
    """Drop (with FORCE) and create database ``name`` on the loopback server ``pg``; its URL."""
    import psycopg

    require_loopback(pg)
    with psycopg.connect(f"{pg}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{pg}/{name}"


def drop_database(pg: str, name: str) -> None:
    """Drop database ``name`` (with FORCE) on the loopback server ``pg``."""
    import psycopg

    require_loopback(pg)
    with psycopg.connect(f"{pg}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def lowest_priority(*, nice: int = 0, idle: bool = False) -> list[str]:
    """The command prefix that starts a process at a lower CPU priority: ``nice -n`` and, with
    ``idle``, ``chrt --idle 0`` (Linux's ``SCHED_IDLE``: a waking process of the normal policy
    preempts it at once, where one under nice 19 may first wait out its time slice)."""
    return [*(["chrt", "--idle", "0"] if idle else []), *(["nice", "-n", str(nice)] if nice else [])]


def start_celery_worker(
    env: dict, *, name: str, log_path: Path, concurrency: int = 1, nice: int = 0, idle: bool = False
) -> subprocess.Popen:
    """A real ``celery worker`` (prefork) in its own process group, logging to ``log_path``
    (``nice``, ``idle``: a lower CPU priority, :func:`lowest_priority`)."""
    celery = ROOT / ".venv" / "bin" / "celery"
    log = open(log_path, "a")
    proc = subprocess.Popen(
        [
            *lowest_priority(nice=nice, idle=idle),
            str(celery),
            "-A",
            "config",
            "worker",
            "--pool=prefork",
            f"--concurrency={concurrency}",
            "--loglevel=WARNING",
            "-n",
            f"{name}-{os.getpid()}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ],
        cwd=ROOT,
        env={**os.environ, **env},  # as gunicorn's: the caller's settings (PARAEVAL_*) reach the worker too
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    proc.name = name
    return proc


def server_times(log: Path, start: int, endpoints: dict[tuple[str, str], str]) -> tuple[dict, int]:
    """Quantiles of the server's own time per request, from byte ``start`` of a gunicorn access
    log written with ``--access-logformat "%(m)s %(U)s %(s)s %(D)s"`` (``%(D)s``: from reading the
    request to the last byte written), for the requests named by ``endpoints`` ((method, path
    suffix) → name); returns them and the log's new end. Beside Locust's figures, which include
    the time a request waits in Locust's own process, these are the server's alone."""
    import numpy as np

    with open(log, "rb") as f:
        f.seek(start)
        text = f.read()
    times: dict[str, list[float]] = {name: [] for name in endpoints.values()}
    for line in text.decode("utf-8", "replace").splitlines():
        parts = line.split()
        if len(parts) != 4:
            continue
        method, path, _status, micros = parts
        for (m, suffix), name in endpoints.items():
            if method == m and path.endswith(suffix):
                times[name].append(int(micros) / 1000)
    out = {}
    for name, values in times.items():
        arr = np.asarray(values)
        out[name] = {
            q: (float(np.percentile(arr, float(q[:-1]))) if arr.size else float("nan")) for q in ("50%", "95%", "99%")
        }
        out[name]["count"] = int(arr.size)
    return out, start + len(text)


def ratio_interval(
    without: list[float], with_: list[float], *, seed: int = 12345, n: int = 10_000
) -> tuple[float, float, float]:
    """Ratio of mean p95 with / without, and a 95 % percentile bootstrap interval over the
    rounds (a round is one run of each arm, resampled as a pair, so that drift between rounds
    stays paired)."""
    import numpy as np

    a = np.asarray(without, dtype=float)
    b = np.asarray(with_, dtype=float)
    point = float(b.mean() / a.mean())
    if len(a) < 2:
        return point, float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(a), size=(n, len(a)))
    ratios = b[idx].mean(axis=1) / a[idx].mean(axis=1)
    lo, hi = np.percentile(ratios, [2.5, 97.5])
    return point, float(lo), float(hi)
