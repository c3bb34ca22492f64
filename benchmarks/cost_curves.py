"""Cost curves: report build vs judgments, metric throughput vs segments, judging latency vs judges.

    .venv/bin/python benchmarks/cost_curves.py [--judgments 10000,100000,1000000]
        [--segments 1000,3000,10000] [--metrics bleu,chrf,pinc,target-f1,pivot-f1]
        [--n-boot 200] [--pace var/bench/judging_pace.json] [--quick]

One command. Every point runs in a fresh child process, so the peak resident memory
(``ru_maxrss``) printed and plotted beside the time is that step's own:

* **report build vs judgments** — ``build_report`` (``benchmarks/report_scale.py``'s
  paraeval variant: simulated study, 10 judges, 1 random clicker, 3 metrics,
  ``--n-boot`` resamples) at each size in ``--judgments``;
* **metric throughput vs segments** — ``segment_stats`` + ``sentence_scores`` +
  ``aggregate`` on KJV/WEB verse pairs for each metric in ``--metrics`` and size in
  ``--segments`` (pairs/s of CPU time);
* **judging latency vs judges** — read from the JSON that
  ``benchmarks/judging_pace.py --json`` wrote (Locust, human pace), if present.

Writes ``docs/img/cost_curves.svg`` and ``.png`` and replaces the section between
``<!-- cost-curves:start -->`` and ``<!-- cost-curves:end -->`` of
``docs/benchmarks.md`` with the tables, the machine and the date. ``--quick``: the
smallest sizes only (a smoke run).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DOC = ROOT / "docs" / "benchmarks.md"
IMG = ROOT / "docs" / "img"
START, END = "<!-- cost-curves:start -->", "<!-- cost-curves:end -->"

METRIC_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
from benchmarks.metrics_throughput import load_pairs, take
from metrics.core.registry import create_metric
kjv, web, _ = load_pairs()
n = {n}
m = create_metric({slug!r})
m.segment_stats(kjv[-50:], web[-50:])  # resources loaded outside the timing
o, c = take(kjv, n), take(web, n)
t0, c0 = time.perf_counter(), time.process_time()
st = m.segment_stats(o, c, c if m.needs_references else None)
m.sentence_scores(st); m.aggregate(st)
cpu, wall = time.process_time() - c0, time.perf_counter() - t0
print(json.dumps({{"metric": {slug!r}, "segments": n, "cpu_seconds": cpu, "seconds": wall,
                  "pairs_per_s": n / cpu, "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""

REPORT_CHILD = r"""
import sys
sys.path.insert(0, {root!r}); sys.path.insert(0, {here!r})
import report_scale
report_scale.child("paraeval", {originals}, {n_boot})
"""


def _child(code: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PARAEVAL_CACHE_DIR": os.environ.get("PARAEVAL_CACHE_DIR", str(ROOT / "var" / "cache"))},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judgments", default="10000,100000,1000000")
    ap.add_argument("--segments", default="1000,3000,10000")
    ap.add_argument("--metrics", default="bleu,chrf,pinc,target-f1,pivot-f1")
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--pace", type=Path, default=ROOT / "var" / "bench" / "judging_pace.json")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    judgments = [int(x) for x in args.judgments.split(",")][: 1 if args.quick else None]
    segments = [int(x) for x in args.segments.split(",")][: 1 if args.quick else None]
    slugs = args.metrics.split(",")

    report_rows = []
    for n in judgments:
        # 10 judges × (5 systems + 3 controls) × 4 criteria = 320 judgments per original.
        originals = max(2, round(n / 320))
        r = _child(REPORT_CHILD.format(root=str(ROOT), here=str(HERE), originals=originals, n_boot=args.n_boot))
        report_rows.append(r)
        print(
            f"report: {r['judgments']:>9,} judgments  CPU {r['cpu_seconds']:7.2f} s  wall {r['seconds']:7.2f} s  "
            f"peak {r['peak_rss_mib']:7.0f} MiB",
            flush=True,
        )
    metric_rows = []
    for slug in slugs:
        for n in segments:
            r = _child(METRIC_CHILD.format(root=str(ROOT), slug=slug, n=n))
            metric_rows.append(r)
            print(
                f"metric {slug:<10} {n:>7,} segments  {r['pairs_per_s']:9,.0f} pairs/s (CPU)  "
                f"peak {r['peak_rss_mib']:6.0f} MiB",
                flush=True,
            )
    pace = json.loads(args.pace.read_text()) if args.pace.exists() else None

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    ax = axes[0]
    x = [r["judgments"] for r in report_rows]
    ax.plot(x, [r["cpu_seconds"] for r in report_rows], "o-", label="CPU s")
    ax.set_xscale("log"), ax.set_xlabel("judgments"), ax.set_ylabel("CPU seconds"), ax.set_title("report build")
    ax2 = ax.twinx()
    ax2.plot(x, [r["peak_rss_mib"] for r in report_rows], "s--", color="tab:red", label="peak MiB")
    ax2.set_ylabel("peak RSS (MiB)", color="tab:red")
    ax = axes[1]
    for slug in slugs:
        rows = [r for r in metric_rows if r["metric"] == slug]
        ax.plot([r["segments"] for r in rows], [r["pairs_per_s"] for r in rows], "o-", label=slug)
    ax.set_xscale("log"), ax.set_yscale("log"), ax.set_xlabel("segments"), ax.set_ylabel("pairs / CPU second")
    ax.set_title("metric throughput (memory in the table)"), ax.legend(fontsize=8)
    ax = axes[2]
    if pace:
        runs = pace["runs"]
        js = [r["judges"] for r in runs]
        for name, style in (("items/next", "o-"), ("submit", "s-")):
            for q, alpha in (("50%", 0.5), ("95%", 1.0)):
                ax.plot(js, [r[name][q] for r in runs], style, alpha=alpha, label=f"{name} p{q[:-1]}")
        ax.axhline(150, color="grey", ls=":", lw=1)
        ax.set_yscale("log"), ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "run benchmarks/judging_pace.py --json first", ha="center", transform=ax.transAxes)
    ax.set_xlabel("judges (think time median 10 s)"), ax.set_ylabel("latency (ms)"), ax.set_title("judging latency")
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    fig.suptitle(
        f"paraeval cost curves — {machine} — {when} (shared machine: CPU time is the steady figure)", fontsize=10
    )
    fig.tight_layout()
    IMG.mkdir(parents=True, exist_ok=True)
    fig.savefig(IMG / "cost_curves.svg")
    fig.savefig(IMG / "cost_curves.png", dpi=110)

    lines = [
        START,
        "",
        f"Generated by `.venv/bin/python benchmarks/cost_curves.py` on {when}; machine: {machine}; "
        f"load average at the end: {open('/proc/loadavg').read().split()[:3]}.",
        "",
        "![cost curves](img/cost_curves.svg)",
        "",
        "| judgments | report build CPU | wall | peak RSS |",
        "|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['judgments']:,} | {r['cpu_seconds']:.2f} s | {r['seconds']:.2f} s | {r['peak_rss_mib']:.0f} MiB |"
        for r in report_rows
    ]
    lines += ["", "| metric | segments | pairs/s (CPU) | peak RSS |", "|---|---:|---:|---:|"]
    lines += [
        f"| `{r['metric']}` | {r['segments']:,} | {r['pairs_per_s']:,.0f} | {r['peak_rss_mib']:.0f} MiB |"
        for r in metric_rows
    ]
    if pace:
        lines += [
            "",
            "| judges | requests | items/next p50 / p95 / p99 | submit p50 / p95 / p99 | gunicorn CPU / request |",
            "|---:|---:|---:|---:|---:|",
        ]
        for r in pace["runs"]:
            nx, sb = r["items/next"], r["submit"]
            lines.append(
                f"| {r['judges']} | {r['requests']:,} | {nx['50%']:.0f} / {nx['95%']:.0f} / {nx['99%']:.0f} ms | "
                f"{sb['50%']:.0f} / {sb['95%']:.0f} / {sb['99%']:.0f} ms | {r['cpu_ms_per_request']:.1f} ms |"
            )
    lines += ["", END]
    text = DOC.read_text() if DOC.exists() else "# Benchmarks\n\n## Cost curves\n\n" + START + "\n" + END + "\n"
    if START in text and END in text:
        a, b = text.index(START), text.index(END) + len(END)
        text = text[:a] + "\n".join(lines) + text[b:]
    else:
        text += "\n## Cost curves\n\n" + "\n".join(lines) + "\n"
    DOC.write_text(text)
    print(f"wrote {IMG / 'cost_curves.svg'}, {IMG / 'cost_curves.png'} and the cost-curves section of {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
