"""Throughput of the semantic metrics (embed-cosine, bertscore, parascore), batch size chosen by measurement.

    .venv/bin/python benchmarks/semantic_throughput.py [--threads 2] [--device cpu]
        [--pilot 1000] [--n 0] [--batch-sizes 16,32,64,128,256] [--metric SLUG ...]
        [--precision fp32|bf16]

Needs the optional extra (``make install-semantic``). Data: ParaBank's 5,548 real
(original, candidate) pairs from ../shared/data/parabank/ (originals repeat, as in
a study: about 14 candidates per original). torch runs on ``--threads`` CPU
threads (2: the bar is ≥ 300 pairs/s for embed-cosine on 2 cores) or on
``--device cuda`` where there is a GPU.

For each metric: the model is loaded and warmed up once (a worker process keeps
it: metrics.core.semantic caches models per process), then every batch size is
timed on the first ``--pilot`` pairs with a fresh metric instance (an empty
embedding cache, as at the start of a metric run); the fastest batch size is
then timed on all pairs (``--n`` limits them; 0 = all). Prints one table and a
JSON line.

Two figures per run: *wall* pairs/s as measured, and *CPU* pairs/s = pairs ÷
(CPU seconds ÷ threads), what the same work gives on ``--threads`` cores of its
own. They agree on an idle machine; on a shared, overloaded one the wall figure
only says how busy the neighbours were, so the batch size is chosen by the CPU
figure.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from parabank_data import load_parabank  # noqa: E402


def _time(metric, originals, candidates) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) to score the pairs."""
    t, c = time.perf_counter(), time.process_time()
    stats = metric.segment_stats(originals, candidates, [None] * len(candidates))
    metric.sentence_scores(stats)
    return time.perf_counter() - t, time.process_time() - c


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda", "auto"))
    ap.add_argument("--pilot", type=int, default=500)
    ap.add_argument("--n", type=int, default=0)
    ap.add_argument("--batch-sizes", default="16,32,64,128,256")
    ap.add_argument("--metric", action="append", choices=("embed-cosine", "bertscore", "parascore"))
    ap.add_argument(
        "--precision",
        default="fp32",
        choices=("fp32", "bf16"),
        help="embed-cosine's precision parameter (bf16: autocast, for CPUs with AVX-512 BF16/AMX)",
    )
    args = ap.parse_args(argv)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch

    from metrics.core.registry import create_metric
    from metrics.core.semantic.models import missing_requirements

    if missing_requirements():
        print(f"needs {', '.join(missing_requirements())}: make install-semantic", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    items = load_parabank()
    if args.n:
        items = items[: args.n]
    originals = [i.original for i in items]
    candidates = [i.candidate for i in items]
    sizes = [int(s) for s in args.batch_sizes.split(",")]
    extra = {"parascore": {"reference_free": True}, "embed-cosine": {"precision": args.precision}}
    print(
        f"# {len(items)} ParaBank pairs, {len(set(originals))} distinct originals; torch {torch.__version__}, "
        f"{args.threads} threads, device {args.device}; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs visible; load average {os.getloadavg()[0]:.1f}"
    )
    results = {}
    for slug in args.metric or ["embed-cosine", "bertscore", "parascore"]:
        params = {"device": args.device, **extra.get(slug, {})}
        warm = create_metric(slug, params)
        _time(warm, originals[:32], candidates[:32])  # load + warm up the model
        pilot = {}
        for bs in sizes:
            m = create_metric(slug, {**params, "batch_size": bs})
            n = min(args.pilot, len(items))
            wall, cpu = _time(m, originals[:n], candidates[:n])
            pilot[bs] = n / (cpu / args.threads)
            print(
                f"{slug:13s} batch {bs:4d}: {n / wall:8.1f} pairs/s wall, {pilot[bs]:8.1f} pairs/s CPU (pilot of {n})",
                flush=True,
            )
        best = max(pilot, key=pilot.get)
        m = create_metric(slug, {**params, "batch_size": best})
        wall, cpu = _time(m, originals, candidates)
        n = len(items)
        results[slug] = {
            "batch_size": best,
            "pairs": n,
            "wall_seconds": round(wall, 2),
            "cpu_seconds": round(cpu, 2),
            "pairs_per_s_wall": round(n / wall, 1),
            "pairs_per_s_cpu": round(n / (cpu / args.threads), 1),
            "pilot_cpu": {str(k): round(v, 1) for k, v in pilot.items()},
        }
        print(
            f"{slug:13s} best batch {best}: {n} pairs in {wall:.1f} s wall = {n / wall:.1f} pairs/s; "
            f"{cpu:.1f} CPU-s = {n / (cpu / args.threads):.1f} pairs/s on {args.threads} own cores",
            flush=True,
        )
    if "bertscore" in results and "parascore" in results:
        for unit in ("cpu", "wall"):
            ratio = results["parascore"][f"pairs_per_s_{unit}"] / results["bertscore"][f"pairs_per_s_{unit}"]
            results[f"parascore_over_bertscore_{unit}"] = round(ratio, 2)
        print(
            f"parascore / bertscore pairs/s: {results['parascore_over_bertscore_cpu']:.2f} (CPU), "
            f"{results['parascore_over_bertscore_wall']:.2f} (wall); bar >= 0.70 (issue 27)",
            flush=True,
        )
    print(
        json.dumps(
            {
                "threads": args.threads,
                "device": args.device,
                "precision": args.precision,
                "loadavg": os.getloadavg(),
                "torch": torch.__version__,
                "results": results,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
