"""Run the metric and significance benchmarks at a small size and write their tables (``make benchmarks``).

    .venv/bin/python benchmarks/run_benchmarks.py [--out var/bench/benchmarks.md] [--size small|full]
        [--root PATH]

Runs, one after the other, each in its own process (so one's caches and memory
do not touch the next):

1. ``metrics_throughput.py`` — pairs/s of bleu, chrf, ter, pinc, target-f1,
   pivot-f1 and paraphrase-bleu (CPU time and wall time); then, with ``--peers``,
   sentence bleu, chrf and ter beside sacrebleu's own sentence loops on the same
   pairs, interleaved rounds, identical scores checked (ratio with its spread);
2. ``significance.py`` — paired bootstrap and approximate randomization against
   sacrebleu's ``paired_bs`` / ``paired_ar``, end to end from text and
   resampling alone, same p-values checked, and the 10-system leaderboard from
   stored statistics;
3. ``semantic_throughput.py`` (when the semantic extra is installed) — bertscore
   and reference-free parascore on the same ParaBank pairs, one batch size, on
   the GPU where torch sees one, with parascore's pairs/s as a fraction of
   bertscore's (the bar: at least 0.7).

``--size small`` (default, a few minutes on 2 cores): 2,000 pairs per metric,
2,000 segments, 1 repeat, 10,000 trials of AR, no leaderboard; ``--size full``:
the figures of ``docs/benchmarks.md`` (20,000 pairs, 10,000 segments, 3 repeats,
10,000 trials, the leaderboard on 1,000 segments — its statistics are computed
from text once, every registered metric including the semantic ones when
installed, which takes tens of minutes, then cached).
The tables go to ``--out`` (Markdown: each benchmark's command, its printed
table, the load average before and after, date and machine). The machine is
usually shared: compare CPU (process) times, which the scripts print beside wall
times. ``--root`` passes an older checkout to ``significance.py`` (before/after).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

SIZES = {
    "small": {"pairs": 2000, "segments": 2000, "repeat": 1, "trials": 10_000, "board": None, "rounds": 3},
    "full": {"pairs": 20_000, "segments": 10_000, "repeat": 3, "trials": 10_000, "board": 1000, "rounds": 3},
}
METRICS = ("bleu", "chrf", "ter", "pinc", "target-f1", "pivot-f1", "paraphrase-bleu")


def load() -> str:
    return " ".join(open("/proc/loadavg").read().split()[:3])


def commands(size: str, root: Path | None) -> list[tuple[str, list[str]]]:
    s = SIZES[size]
    py = sys.executable
    throughput = [
        py,
        str(HERE / "metrics_throughput.py"),
        "--n",
        str(s["pairs"]),
        "--budget",
        "600",
        "--skip-sacrebleu",
    ]
    for slug in METRICS:
        throughput += ["--metric", slug]
    significance = [
        py,
        str(HERE / "significance.py"),
        "--segments",
        str(s["segments"]),
        "--repeat",
        str(s["repeat"]),
        "--trials",
        str(s["trials"]),
    ]
    significance += ["--skip-board"] if s["board"] is None else ["--board-segments", str(s["board"])]
    if root is not None:
        significance += ["--root", str(root)]
    peers = [py, str(HERE / "metrics_throughput.py"), "--peers", "--n", str(s["pairs"]), "--rounds", str(s["rounds"])]
    out = [
        ("Metric throughput", throughput),
        ("Sentence bleu, chrf and ter beside sacrebleu", peers),
        ("Paired significance tests", significance),
    ]
    if importlib.util.find_spec("torch") and importlib.util.find_spec("bert_score"):
        # bertscore and parascore (reference-free) side by side on the same pairs and
        # batch size: parascore's bar is >= 0.7x bertscore's pairs/s (issue 27).
        semantic = [
            py,
            str(HERE / "semantic_throughput.py"),
            "--metric",
            "bertscore",
            "--metric",
            "parascore",
            "--device",
            "auto",
            "--n",
            str(s["pairs"]),
            "--pilot",
            "300",
            "--batch-sizes",
            "64",
        ]
        out.append(("Semantic metrics: bertscore and parascore", semantic))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "var" / "bench" / "benchmarks.md")
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    ap.add_argument("--root", type=Path, default=None, help="older checkout for significance.py's before")
    args = ap.parse_args(argv)
    env = dict(os.environ, PARAEVAL_CACHE_DIR=os.environ.get("PARAEVAL_CACHE_DIR", str(REPO / "var" / "cache")))
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        "# Benchmarks",
        "",
        f"`{' '.join(['benchmarks/run_benchmarks.py', '--size', args.size])}` on {started}; machine: "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. "
        "Compare CPU (process) times when the load average is above the number of cores.",
    ]
    failed = 0
    for title, cmd in commands(args.size, args.root):
        before = load()
        print(f"== {title}: {' '.join(cmd[1:])} (load {before})", flush=True)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        print(proc.stdout, end="", flush=True)
        if proc.returncode:
            failed += 1
            print(proc.stderr, file=sys.stderr)
        shown = " ".join(Path(c).relative_to(REPO).as_posix() if c.startswith(str(REPO)) else c for c in cmd[1:])
        parts += [
            "",
            f"## {title}",
            "",
            f"Command: `.venv/bin/python {shown}` — {wall:.0f} s wall; load average before {before}, "
            f"after {load()}{'; **failed** (exit ' + str(proc.returncode) + ')' if proc.returncode else ''}.",
            "",
            "```text",
            proc.stdout.rstrip(),
            "```",
        ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(parts) + "\n", encoding="utf-8")
    print(f"tables written to {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
