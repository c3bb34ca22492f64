"""Phrase-table load time, lookup speed and memory on a synthetic multi-million-entry table.

    .venv/bin/python benchmarks/phrase_table_lookup.py [--entries 3000000] [--keep FILE]

Builds a synthetic table with Zipf-distributed English phrases of 1–4 words over a
50,000-word vocabulary and 1–8 pivot translations each, writes it as a gzip TSV
resource (metrics.core.phrase_table format), then reports the file size, the load
time of ``PhraseTable.load``, the resident-memory growth of the loaded table, and
lookups per second for ``translations``/``prob_e`` over known and unknown phrases.
The numbers go to benchmarks/RESULTS.md by hand (section "Phrase table (issue 5)").
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metrics.core.phrase_table import PhraseTable, write_phrase_table  # noqa: E402


def rss_mb() -> float:
    # Current resident set size from /proc (Linux); ru_maxrss would only give the peak.
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def synthetic_counts(n_entries: int, seed: int) -> dict[tuple[str, str], int]:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(50_000)]
    pvocab = [f"p{i}" for i in range(50_000)]
    counts: dict[tuple[str, str], int] = {}
    while len(counts) < n_entries:
        k = rng.randint(1, 4)
        e = " ".join(
            vocab[min(int(rng.paretovariate(1.1)) - 1, 49_999)] if j == 0 else rng.choice(vocab) for j in range(k)
        )
        for _ in range(rng.randint(1, 8)):
            f = " ".join(rng.choice(pvocab) for _ in range(rng.randint(1, 4)))
            counts[(e, f)] = counts.get((e, f), 0) + int(rng.paretovariate(1.5))
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=3_000_000)
    ap.add_argument("--lookups", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, help="write the table here instead of a temporary file")
    ap.add_argument("--load-only", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.load_only:
        measure(args.load_only, args.lookups, args.seed)
        return

    t0 = time.perf_counter()
    counts = synthetic_counts(args.entries, args.seed)
    path = args.keep or Path(tempfile.mkdtemp()) / "phrase_table_synthetic.tsv.gz"
    write_phrase_table(counts, path)
    del counts
    print(
        f"generated+written {args.entries:,} entries in {time.perf_counter() - t0:.1f} s; "
        f"file {path.stat().st_size / 2**20:.1f} MiB (gzip)"
    )
    # Measure in a fresh process so that the generator's freed memory does not
    # hide the table's own footprint.
    subprocess.run(
        [sys.executable, __file__, "--load-only", str(path), "--lookups", str(args.lookups), "--seed", str(args.seed)],
        check=True,
    )


def measure(path: Path, n_lookups: int, seed: int) -> None:
    before = rss_mb()
    t0 = time.perf_counter()
    table = PhraseTable.load(path)
    load_s = time.perf_counter() - t0
    mem = rss_mb() - before
    print(f"load: {load_s:.2f} s for {len(table):,} entries / {table.n_english:,} English phrases; RSS +{mem:.0f} MiB")

    rng = random.Random(seed + 1)
    known = [rng.choice(table.english) for _ in range(n_lookups)]
    unknown = [f"zz{i} qq" for i in range(n_lookups)]
    for label, queries in (("translations (known)", known), ("translations (unknown)", unknown)):
        t0 = time.perf_counter()
        n_tr = 0
        for q in queries:
            n_tr += len(table.translations(q))
        dt = time.perf_counter() - t0
        print(f"{label}: {len(queries) / dt:,.0f} lookups/s ({n_tr / max(len(queries), 1):.1f} translations each)")
    t0 = time.perf_counter()
    for q in known:
        table.prob_e(q)
    print(f"prob_e (known): {len(known) / (time.perf_counter() - t0):,.0f} lookups/s")
    print(f"peak RSS of the process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
