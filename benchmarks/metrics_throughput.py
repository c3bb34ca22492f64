"""Throughput of every registered metric, and paraeval's engine against plain sacrebleu.

    .venv/bin/python benchmarks/metrics_throughput.py [--n 100000] [--budget 60]
        [--metric SLUG ...] [--n-for SLUG=N ...] [--loop-n N] [--bootstrap-n 10000]
        [--resamples 1000]

Data: real paraphrase pairs, KJV verses as originals and WEB verses as
candidates, from ../shared/data/bible/verses.jsonl.xz, or — when ../shared is
absent — from the shipped fixtures/resources/bible_en.tsv.xz (same verses; the
script says which). The Bible has 31,077 verses: a larger ``--n`` cycles
through them again (the script says so; metrics do not cache across segments
except originals, so repeats cost the same). Metrics that need a reference get
the WEB verse as reference too (throughput is what is measured here).

Reports, for each registered metric with its default parameters: pairs/second
of ``segment_stats`` + ``sentence_scores`` + ``aggregate``. A metric whose
resources are unavailable is skipped with the reason. A slow metric is timed
on a pilot of 300 pairs first; if ``--n`` pairs would take longer than
``--budget`` seconds it runs on as many pairs as fit the budget (``--n-for``
overrides per metric).

Then: sentence BLEU through paraeval's engine against a plain Python loop over
``sacrebleu.sentence_bleu`` (same numbers, checked), and paraeval's paired
bootstrap (``--resamples`` resamples) against sacrebleu's ``paired_bs``
(``PairedTest(test_type="bs")``) on ``--bootstrap-n`` segments, end to end from
text, checking that both give the same p-value for sacrebleu's default seed.
Figures go to benchmarks/RESULTS.md by hand ("Metrics throughput (issue 5)").

``--peers`` (what ``make benchmarks`` runs): sentence bleu, chrf and ter through
paraeval's engine (a fresh metric each run: ``segment_stats`` + ``sentence_scores``)
beside a plain loop over sacrebleu's ``sentence_bleu`` / ``sentence_chrf`` /
``sentence_ter`` on the same ``--n`` pairs, in one process, interleaved
(paraeval, sacrebleu, paraeval, … for ``--rounds`` rounds, the order flipped every
other round); every run's scores are checked ``==`` sacrebleu's (the script fails
otherwise). Printed per metric: median CPU seconds of each side and the ratio
sacrebleu / paraeval, median with min–max over the rounds.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SHARED = REPO.parent / "shared" / "data" / "bible" / "verses.jsonl.xz"
FIXTURE = REPO / "fixtures" / "resources" / "bible_en.tsv.xz"


def load_pairs() -> tuple[list[str], list[str], str]:
    """KJV and WEB verses, and a note saying where they came from."""
    kjv, web = [], []
    if SHARED.exists():
        with lzma.open(SHARED, "rt", encoding="utf-8") as fh:
            for line in fh:
                v = json.loads(line)
                k, w = " ".join(v["kjv"].split()), " ".join(v["web"].split())
                if k and w:
                    kjv.append(k)
                    web.append(w)
        return kjv, web, f"{SHARED} (shared data)"
    with lzma.open(FIXTURE, "rt", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            _, k, w = line.rstrip("\n").split("\t")
            kjv.append(k)
            web.append(w)
    return kjv, web, f"{FIXTURE} (shipped fixture: ../shared is absent)"


def take(seq: list[str], n: int) -> list[str]:
    """The first ``n`` items, cycling; the k-th repeat gets a suffix `` (k)`` so that
    every string stays distinct (metrics cache per distinct string within a batch)."""
    out = list(seq[:n])
    k = 0
    while len(out) < n:
        k += 1
        out += [f"{s} ({k})" for s in seq[: n - len(out)]]
    return out


def time_metric(metric, originals, candidates, *, cpu: bool = False) -> float:
    """Seconds of ``segment_stats`` + ``sentence_scores`` + ``aggregate``: wall, or CPU (process time)."""
    clock = time.process_time if cpu else time.perf_counter
    t0 = clock()
    stats = metric.segment_stats(originals, candidates, candidates if metric.needs_references else None)
    metric.sentence_scores(stats)
    metric.aggregate(stats)
    return clock() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="pairs per metric (default 100000)")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds per metric before sampling (default 60)")
    ap.add_argument("--metric", action="append", default=[], help="only these slugs (repeatable)")
    ap.add_argument("--n-for", action="append", default=[], metavar="SLUG=N", help="pairs for one metric")
    ap.add_argument("--loop-n", type=int, default=None, help="pairs for the sentence-BLEU comparison (default --n)")
    ap.add_argument("--bootstrap-n", type=int, default=10_000, help="segments for the paired bootstrap comparison")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--skip-metrics", action="store_true", help="only the two sacrebleu comparisons")
    ap.add_argument("--skip-sacrebleu", action="store_true", help="only the metric table")
    ap.add_argument("--peers", action="store_true", help="only bleu/chrf/ter beside sacrebleu's sentence loops")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of --peers (default 3)")
    args = ap.parse_args(argv)
    os.environ.setdefault("PARAEVAL_CACHE_DIR", str(REPO / "var" / "cache"))

    import numpy as np
    import sacrebleu
    from sacrebleu.metrics.bleu import BLEU
    from sacrebleu.significance import PairedTest

    from metrics.core.base.bootstrap import paired_bootstrap
    from metrics.core.registry import available_metrics, create_metric

    kjv, web, source = load_pairs()
    print(f"data: {len(kjv)} KJV/WEB verse pairs from {source}")
    if args.n > len(kjv):
        print(f"note: --n {args.n} > {len(kjv)} verses: the verses are cycled, repeats marked ' (k)'")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"sacrebleu {sacrebleu.__version__}"
    )
    per_metric = {k: int(v) for k, v in (x.split("=", 1) for x in args.n_for)}
    if args.peers:
        return peers(take(kjv, args.n), take(web, args.n), args.rounds)

    if not args.skip_metrics:
        print("\n## Metric throughput (defaults; segment_stats + sentence_scores + aggregate)")
        print(f"load average {open('/proc/loadavg').read().split()[:3]}; pairs/s by CPU (process) time, wall beside")
        print(f"{'metric':<17}{'pairs':>9}{'CPU s':>10}{'pairs/s':>12}{'wall s':>10}{'pairs/s':>10}  note")
    for cls in [] if args.skip_metrics else available_metrics():
        if args.metric and cls.slug not in args.metric:
            continue
        reason = getattr(cls, "unavailable_reason", lambda: None)()
        if reason:  # an optional extra that is not installed (the semantic metrics)
            print(f"{cls.slug:<17}{'-':>9}{'-':>10}{'-':>12}  skipped: {reason}")
            continue
        metric = cls()
        missing = metric.missing_resources()
        if missing:
            print(f"{cls.slug:<17}{'-':>9}{'-':>10}{'-':>12}  skipped: resource(s) {', '.join(missing)} unavailable")
            continue
        n = per_metric.get(cls.slug, args.n)
        note = ""
        if cls.slug not in per_metric:
            # Pilot run (also pays one-off costs: resource loading, model training).
            pilot = min(300, n)
            time_metric(metric, take(kjv, pilot), take(web, pilot))
            rate_t = time_metric(metric, take(kjv[5000:], pilot), take(web[5000:], pilot)) / pilot
            if rate_t * n > args.budget:
                n = max(pilot, int(args.budget / rate_t))
                note = f"sampled: {args.n} pairs would take ~{rate_t * args.n:.0f} s"
        else:
            note = "--n-for"
        c0, w0 = time.process_time(), time.perf_counter()
        time_metric(metric, take(kjv, n), take(web, n))
        secs, wall = time.process_time() - c0, time.perf_counter() - w0
        print(f"{cls.slug:<17}{n:>9}{secs:>10.2f}{n / secs:>12,.0f}{wall:>10.2f}{n / wall:>10,.0f}  {note}")

    if args.skip_sacrebleu:
        return 0
    loop_n = args.loop_n or args.n
    o, c = take(kjv, loop_n), take(web, loop_n)
    print(f"\n## Sentence BLEU, {loop_n} pairs: paraeval engine vs a loop over sacrebleu.sentence_bleu")
    bleu = create_metric("bleu")
    t0 = time.perf_counter()
    ours = bleu.sentence_scores(bleu.segment_stats(o, c))
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    theirs = [sacrebleu.sentence_bleu(ci, [oi]).score for oi, ci in zip(o, c)]
    t_loop = time.perf_counter() - t0
    same = bool(np.array_equal(ours, np.array(theirs)))
    print(
        f"paraeval: {t_ours:.2f} s ({loop_n / t_ours:,.0f} pairs/s); sacrebleu loop: {t_loop:.2f} s "
        f"({loop_n / t_loop:,.0f} pairs/s); ratio {t_loop / t_ours:.1f}x; identical scores: {same}"
    )

    nb = args.bootstrap_n
    base, o = take(web, nb), take(kjv, nb)
    # A second system that differs from the first both ways, so that p is not
    # at its floor: every 40th candidate replaced by the next verse (worse),
    # every 40th (offset 20) by the original itself (better).
    weak = [base[i + 1] if i % 40 == 0 and i + 1 < nb else o[i] if i % 40 == 20 else s for i, s in enumerate(base)]
    print(f"\n## Paired bootstrap, {nb} segments, {args.resamples} resamples, seed 12345 (BLEU, end to end)")
    t0 = time.perf_counter()
    sa, sb = bleu.segment_stats(o, base), bleu.segment_stats(o, weak)
    t_stats = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = paired_bootstrap(bleu, sa, sb, n_resamples=args.resamples, seed=12345)
    t_resample = time.perf_counter() - t0
    t0 = time.perf_counter()
    _, scores = PairedTest(
        [("base", base), ("weak", weak)], {"BLEU": BLEU()}, [o], test_type="bs", n_samples=args.resamples
    )()
    t_sacre = time.perf_counter() - t0
    p_sacre = scores["BLEU"][1].p_value
    t0 = time.perf_counter()
    sacre_bleu = BLEU()
    sacre_bleu._extract_corpus_statistics(base, [o])
    sacre_bleu._extract_corpus_statistics(weak, [o])
    t_sacre_stats = time.perf_counter() - t0
    t_ours = t_stats + t_resample
    print(
        f"paraeval: {t_ours:.2f} s (statistics {t_stats:.2f} s + resampling {t_resample:.2f} s), "
        f"p = {res.pvalue:.4f}, ΔBLEU = {res.delta:.3f}"
    )
    print(
        f"sacrebleu paired_bs: {t_sacre:.2f} s (of which its statistics ≈ {t_sacre_stats:.2f} s, "
        f"resampling ≈ {t_sacre - t_sacre_stats:.2f} s), p = {p_sacre:.4f}"
    )
    print(
        f"ratio end to end {t_sacre / t_ours:.1f}x, resampling alone "
        f"{(t_sacre - t_sacre_stats) / t_resample:.1f}x; same p-value: {res.pvalue == p_sacre}"
    )
    # The same check where p is mid-range (10,000 segments detect even this difference).
    o4, b4 = take(kjv, 400), take(web, 400)
    w4 = [b4[i + 1] if i % 40 == 0 else o4[i] if i % 40 == 20 else s for i, s in enumerate(b4)]
    r4 = paired_bootstrap(bleu, bleu.segment_stats(o4, b4), bleu.segment_stats(o4, w4), n_resamples=args.resamples)
    _, s4 = PairedTest([("a", b4), ("b", w4)], {"BLEU": BLEU()}, [o4], test_type="bs", n_samples=args.resamples)()
    print(
        f"400 segments: paraeval p = {r4.pvalue:.4f}, sacrebleu p = {s4['BLEU'][1].p_value:.4f}, "
        f"same: {r4.pvalue == s4['BLEU'][1].p_value}"
    )
    return 0


def peers(originals: list[str], candidates: list[str], rounds: int) -> int:
    """bleu, chrf and ter beside sacrebleu's sentence loops, interleaved (module docstring)."""
    import statistics

    import numpy as np
    import sacrebleu

    from metrics.core.registry import create_metric

    peer_fns = {"bleu": sacrebleu.sentence_bleu, "chrf": sacrebleu.sentence_chrf, "ter": sacrebleu.sentence_ter}
    n = len(originals)
    print(f"\n## Sentence scores beside sacrebleu {sacrebleu.__version__}, {n} pairs, {rounds} interleaved rounds")
    print(f"load average {open('/proc/loadavg').read().split()[:3]}; CPU (process) seconds, medians; wall beside")
    print(
        f"{'metric':<8}{'paraeval s':>12}{'sacrebleu s':>13}{'ratio':>8}  {'min–max':<12}{'wall ratio':>11}  identical"
    )
    failed = 0
    for slug, fn in peer_fns.items():

        def ours() -> list[float]:
            m = create_metric(slug)  # fresh: no cache from an earlier round
            return list(m.sentence_scores(m.segment_stats(originals, candidates)))

        def theirs() -> list[float]:
            return [fn(c, [o]).score for o, c in zip(originals, candidates)]

        cpu: dict[str, list[float]] = {"ours": [], "theirs": []}
        wall: dict[str, list[float]] = {"ours": [], "theirs": []}
        same = True
        for k in range(rounds):
            results = {}
            for side in ("ours", "theirs") if k % 2 == 0 else ("theirs", "ours"):
                c0, w0 = time.process_time(), time.perf_counter()
                results[side] = (ours if side == "ours" else theirs)()
                cpu[side].append(time.process_time() - c0)
                wall[side].append(time.perf_counter() - w0)
            same = same and bool(np.array_equal(np.array(results["ours"]), np.array(results["theirs"])))
        ratios = [t / o for t, o in zip(cpu["theirs"], cpu["ours"])]
        wall_ratio = statistics.median(t / o for t, o in zip(wall["theirs"], wall["ours"]))
        print(
            f"{slug:<8}{statistics.median(cpu['ours']):>12.2f}{statistics.median(cpu['theirs']):>13.2f}"
            f"{statistics.median(ratios):>7.2f}x  {min(ratios):.2f}–{max(ratios):.2f}x{wall_ratio:>10.2f}x  {same}",
            flush=True,
        )
        failed += not same
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
