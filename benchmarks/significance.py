"""Paired significance tests: paraeval against sacrebleu's ``paired_bs`` / ``paired_ar``, and a leaderboard.

    .venv/bin/python benchmarks/significance.py [--segments 10000] [--resamples 1000]
        [--trials 10000] [--repeat 3] [--board-segments 2000] [--skip-board]
        [--root PATH]

Three measurements, each repeated ``--repeat`` times (medians of CPU time — process
time, all threads — and wall time are printed; the machine is shared):

1. **End to end from text**, BLEU, ``--segments`` KJV/WEB verse pairs, two systems
   (the WEB verses, and the same with every 40th candidate worse and every 40th,
   offset 20, better): sacrebleu ``PairedTest(..., test_type="bs")`` (statistics of
   both systems, the baseline's bootstrap CI, the paired resampling) against
   paraeval (``segment_stats`` of both systems + ``paired_bootstrap``); the same
   for ``test_type="ar"`` with ``--trials`` trials. Same p-values are checked.
2. **Resampling alone**: sacrebleu's resampling part (its time minus its
   ``_extract_corpus_statistics`` of the two systems) against paraeval's
   ``paired_bootstrap`` / ``paired_approximate_randomization`` on statistics.
3. **Leaderboard from stored statistics**: 10 systems × 11 metric configurations
   (every registered metric whose resources are present, plus BLEU/chrF variants
   to make 11), every pair of systems tested by paired bootstrap (1,000
   resamples) and by AR (10,000 trials) with ``metric_pairwise_tests``. The
   statistics are computed from text once and cached in
   ``var/cache/bench_board_<segments>.npz`` (as a metric run stores them); only
   the tests are timed. With ``--root`` pointing at an older checkout that lacks
   ``pairwise_tests``, each pair is tested with that checkout's
   ``paired_bootstrap`` (its only paired test), which is the "before".

``--root PATH`` imports paraeval from another checkout (e.g. ``git worktree add
/tmp/before main``) so before and after run side by side with one script.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _timed(fn, repeat: int):
    """(result of the last run, median CPU s, median wall s)."""
    cpu, wall, out = [], [], None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
    return out, statistics.median(cpu), statistics.median(wall)


def _variant(base, originals, step, offset):
    n = len(base)
    return [
        base[i + 1] if i % step == 0 and i + 1 < n else originals[i] if i % step == offset else s
        for i, s in enumerate(base)
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--segments", type=int, default=10_000)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--trials", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--board-segments", type=int, default=2000)
    ap.add_argument("--skip-board", action="store_true")
    ap.add_argument("--skip-ar", action="store_true", help="skip sacrebleu's AR end to end (slow)")
    ap.add_argument("--root", type=Path, default=HERE.parent, help="paraeval checkout to import")
    args = ap.parse_args(argv)
    root = args.root.resolve()
    sys.path.insert(0, str(root))
    sys.path.insert(1, str(HERE.parent))
    os.environ.setdefault("PARAEVAL_CACHE_DIR", str(HERE.parent / "var" / "cache"))

    import numpy as np
    import sacrebleu
    from sacrebleu.metrics.bleu import BLEU
    from sacrebleu.significance import PairedTest

    import metrics.core.base as base
    from benchmarks.metrics_throughput import load_pairs, take
    from metrics.core.base.bootstrap import paired_approximate_randomization, paired_bootstrap, pairwise_tests
    from metrics.core.registry import available_metrics, create_metric

    new = hasattr(base, "pairwise_tests")
    print(
        f"paraeval from {root} ({'with' if new else 'without'} pairwise_tests); machine {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, sacrebleu {sacrebleu.__version__}, "
        f"numpy {np.__version__}; load {open('/proc/loadavg').read().split()[:3]}"
    )
    kjv, web, source = load_pairs()
    n = args.segments
    o, a = take(kjv, n), take(web, n)
    b = _variant(a, o, 40, 20)
    bleu = create_metric("bleu")

    print(f"\n## BLEU, {n} segments, seed 12345 ({source})")
    tests = [("bs", args.resamples)] + ([] if args.skip_ar else [("ar", args.trials)])
    for test, m in tests:
        if test == "ar" and not new:
            print("ar: this checkout has no approximate randomization")
            continue

        def ours():
            # A fresh metric each run: nothing cached from an earlier repeat.
            fresh = create_metric("bleu")
            sa, sb = fresh.segment_stats(o, a), fresh.segment_stats(o, b)
            if test == "bs":
                return paired_bootstrap(fresh, sa, sb, n_resamples=m, seed=12345)
            return paired_approximate_randomization(fresh, sa, sb, n_trials=m, seed=12345)

        def theirs():
            _, scores = PairedTest([("a", a), ("b", b)], {"BLEU": BLEU()}, [o], test_type=test, n_samples=m)()
            return scores["BLEU"][1].p_value

        def their_stats():
            s = BLEU()
            s._extract_corpus_statistics(a, [o])
            s._extract_corpus_statistics(b, [o])

        sa, sb = bleu.segment_stats(o, a), bleu.segment_stats(o, b)

        def ours_resampling():
            if test == "bs":
                return paired_bootstrap(bleu, sa, sb, n_resamples=m, seed=12345)
            return paired_approximate_randomization(bleu, sa, sb, n_trials=m, seed=12345)

        r_ours, c_ours, w_ours = _timed(ours, args.repeat)
        p_theirs, c_theirs, w_theirs = _timed(theirs, args.repeat)
        _, c_tstats, w_tstats = _timed(their_stats, args.repeat)
        _, c_res, w_res = _timed(ours_resampling, args.repeat)
        c_their_res = c_theirs - c_tstats
        print(
            f"{test} ({m}): sacrebleu end to end CPU {c_theirs:.3f} s (wall {w_theirs:.3f}), of which statistics "
            f"{c_tstats:.3f} s, resampling {c_their_res:.3f} s; p = {p_theirs:.6f}"
        )
        print(
            f"{test} ({m}): paraeval end to end CPU {c_ours:.3f} s (wall {w_ours:.3f}), resampling alone "
            f"{c_res:.3f} s (wall {w_res:.3f}); p = {r_ours.pvalue:.6f}; same p: {r_ours.pvalue == p_theirs}"
        )
        print(
            f"{test}: ratio end to end {c_theirs / c_ours:.1f}x CPU ({w_theirs / w_ours:.1f}x wall), "
            f"resampling {c_their_res / c_res:.1f}x CPU"
        )

    if args.skip_board:
        return 0
    nb = args.board_segments
    cache = HERE.parent / "var" / "cache" / f"bench_board_{nb}.npz"
    configs = []
    for cls in available_metrics():
        if getattr(cls, "takes_study_rubric", False):
            continue  # an LLM judge: a model call per segment, not part of this board
        try:
            metric = cls()
        except ValueError:  # MetricError: cannot run here (an optional extra missing)
            continue
        if not metric.missing_resources():
            configs.append((cls.slug, {}))
    extra = [
        ("bleu", {"smooth_method": "floor"}),
        ("chrf", {"word_order": 2}),
        ("bleu", {"max_ngram_order": 2}),
        ("chrf", {"char_order": 4}),
    ]
    while len(configs) < 11 and extra:
        configs.append(extra.pop(0))
    configs = configs[:11]
    names = [f"{s}{'(' + ','.join(f'{k}={v}' for k, v in p.items()) + ')' if p else ''}" for s, p in configs]
    ob, ab = take(kjv, nb), take(web, nb)
    systems = [ab] + [_variant(ab, ob, step, step // 2) for step in (5, 7, 9, 11, 13, 17, 19, 23, 29)]
    if cache.exists() and list(np.load(cache)["names"]) == names:
        data = np.load(cache)
        stats = {nm: data[f"m{i}"] for i, nm in enumerate(names)}
        print(f"\n## Leaderboard: statistics read from {cache}")
    else:
        stats = {}
        t0 = time.perf_counter()
        for nm, (slug, params) in zip(names, configs):
            metric = create_metric(slug, params)
            refs = ab if metric.needs_references else None
            stats[nm] = np.stack([metric.segment_stats(ob, s, refs) for s in systems])
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, names=np.array(names), **{f"m{i}": stats[nm] for i, nm in enumerate(names)})
        print(f"\n## Leaderboard: statistics computed from text in {time.perf_counter() - t0:.1f} s, cached in {cache}")
    print(
        f"{len(systems)} systems × {len(names)} metrics ({', '.join(names)}), {nb} segments, "
        f"{len(systems) * (len(systems) - 1) // 2} pairs each"
    )
    metrics = {nm: create_metric(slug, params) for nm, (slug, params) in zip(names, configs)}

    def board(test, m):
        out = {}
        for nm, metric in metrics.items():
            mats = list(stats[nm])
            if new:
                out[nm] = pairwise_tests(metric, mats, test=test, n_resamples=m, seed=12345)
            else:
                out[nm] = [
                    paired_bootstrap(metric, mats[i], mats[j], n_resamples=m, seed=12345).pvalue
                    for i, j in itertools.combinations(range(len(mats)), 2)
                ]
        return out

    for test, m in (("bs", 1000), ("ar", 10_000)):
        if test == "ar" and not new:
            continue
        res, c, w = _timed(lambda: board(test, m), max(1, args.repeat - 1))
        print(f"leaderboard, every pair, {test} ({m}): CPU {c:.2f} s, wall {w:.2f} s")
        if new and test == "bs":
            # Spot check against the plain pairwise test.
            nm = names[0]
            p01 = paired_bootstrap(metrics[nm], stats[nm][0], stats[nm][1], n_resamples=m, seed=12345).pvalue
            print(
                f"  check: {nm} s0 vs s1 p = {res[nm].pvalues[0][1]:.4f} = paired_bootstrap {p01:.4f}: "
                f"{res[nm].pvalues[0][1] == p01}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
