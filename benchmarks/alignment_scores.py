"""Benchmark phrase extraction and every ParaMetric score on real KJV–WEB pairs.

    .venv/bin/python benchmarks/alignment_scores.py [--n 10000] [--book John] [--glove] [--bible PATH]

Takes the first ``--n`` verses of the shared Bible data (canonical order; only
those of ``--book`` if given) whose tagged spans re-tokenize like their text, with their Strong's pivot alignment
(``metrics.core.strongs.strongs_links``) as the reference, and times:

1. loading and tokenizing the pairs, with the pivot links;
2. consistent phrase-pair extraction (``alignment_scoring.phrase_pairs``, max 5);
3. the aligner (``metrics.core.aligner.align``, defaults; ``--glove`` adds
   embedding links) on every pair;
4. link precision/recall/F1/AER of the aligner against the pivot, also
   restricted to the cells whose two tokens both carry a Strong's id (the pivot
   says nothing about untagged words, e.g. the KJV's untagged "the", so the
   unrestricted precision counts correct links as errors);
5. AlignPrec/AlignRecall of the aligner against the pivot;
6. a paraphrase table read off the aligner's alignments, and its LB-Precision
   and Rel-Recall against the reference paraphrases of the pivot alignments
   (each verse a group of one pair; min probability 0.01 as in ParaMetric §7.2).
   The table comes from the same verses, so the scores measure agreement of two
   automatic alignments, not held-out paraphrasing quality.

Prints wall and CPU time per phase (CPU time is the steadier figure on a shared
machine) and the process's peak resident memory after each
(``resource.getrusage``: a running maximum, so the growth shows which phase
needs memory). Nothing is written; copy the figures to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import platform
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from metrics.core.aligner import align  # noqa: E402
from metrics.core.alignment.model import Alignment  # noqa: E402
from metrics.core.alignment_scoring.links import link_scores
from metrics.core.alignment_scoring.paraphrases import paraphrase_scores, paraphrase_table_from_alignments
from metrics.core.alignment_scoring.phrases import align_scores, phrase_pairs
from metrics.core.strongs import DEFAULT_IGNORED_IDS, load_verses, strongs_links, tag_tokens  # noqa: E402

DEFAULT_BIBLE = ROOT.parent / "shared" / "data" / "bible" / "verses.jsonl.xz"


def peak_mib() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Phase:
    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        self.t0 = time.perf_counter()
        self.c0 = time.process_time()
        return self

    def __exit__(self, *exc):
        dt = time.perf_counter() - self.t0
        cpu = time.process_time() - self.c0
        print(f"{self.name:<44} {dt:8.2f} s wall {cpu:8.2f} s CPU   peak RSS {peak_mib():7.1f} MiB", flush=True)


def load_pairs(bible: Path, n: int, book: str | None) -> tuple[list[Alignment], list[tuple[set, set]]]:
    """Pivot alignments and, per pair, the token positions that carry a Strong's id."""
    out, tagged = [], []
    for v in load_verses(bible):
        if book and not v["ref"].startswith(book + " "):
            continue
        try:
            k, kt = tag_tokens(v["kjv_tagged"], text=v["kjv"])
            w, wt = tag_tokens(v["web_tagged"], text=v["web"])
        except ValueError:
            continue
        out.append(Alignment(tuple(k), tuple(w), frozenset(strongs_links(kt, wt))))
        tagged.append(
            (
                {i for i, t in enumerate(kt) if t - DEFAULT_IGNORED_IDS},
                {j for j, t in enumerate(wt) if t - DEFAULT_IGNORED_IDS},
            )
        )
        if len(out) == n:
            break
    return out, tagged


def restrict(alignments: list[Alignment], tagged: list[tuple[set, set]]) -> list[Alignment]:
    """Only the links whose two tokens carry a Strong's id."""
    return [
        Alignment(None, None, frozenset((i, j) for i, j in a.links if i in t1 and j in t2))
        for a, (t1, t2) in zip(alignments, tagged)
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000, help="number of verse pairs")
    ap.add_argument("--book", help="only verses of this book, e.g. John")
    ap.add_argument("--glove", action="store_true", help="give the aligner GloVe 6B 50-d vectors")
    ap.add_argument("--bible", default=str(DEFAULT_BIBLE))
    args = ap.parse_args()
    print(
        f"python {platform.python_version()} on {platform.machine()}, {args.n} pairs{' of ' + args.book if args.book else ''}"
    )

    with Phase("load + tokenize + pivot links"):
        pivot, tagged = load_pairs(Path(args.bible), args.n, args.book)
    tokens = sum(len(a.tokens1) + len(a.tokens2) for a in pivot)
    print(f"  {len(pivot)} pairs, {tokens} tokens, {sum(len(a.links) for a in pivot)} pivot links")

    with Phase("phrase extraction (pivot, max_len 5)"):
        n_pp = sum(len(phrase_pairs(a)) for a in pivot)
    print(f"  {n_pp} non-identical phrase pairs")

    emb = None
    if args.glove:
        from metrics.core.embeddings import load_glove

        with Phase("load GloVe 6B 50-d"):
            emb = load_glove()
    with Phase(f"aligner (WordNet, {'GloVe' if emb else 'no embeddings'})"):
        system = [align(a.tokens1, a.tokens2, embeddings=emb) for a in pivot]

    with Phase("link P/R/F1/AER"):
        ls = link_scores(pivot, system)
    print(f"  precision {ls.precision:.3f} recall {ls.recall:.3f} F1 {ls.f1:.3f} AER {ls.aer:.3f}")
    lr = link_scores(restrict(pivot, tagged), restrict(system, tagged))
    print(
        f"  on tagged tokens only: precision {lr.precision:.3f} recall {lr.recall:.3f} F1 {lr.f1:.3f} AER {lr.aer:.3f}"
    )

    with Phase("AlignPrec / AlignRecall"):
        als = align_scores(pivot, system)
    print(f"  AlignPrec {als.align_prec:.3f} AlignRecall {als.align_recall:.3f}  {als.counts}")

    with Phase("paraphrase table from aligner alignments"):
        table = paraphrase_table_from_alignments(system)
    print(f"  {len(table)} entries")

    with Phase("LB-Precision / Rel-Recall (min_prob 0.01)"):
        ps = paraphrase_scores([[a] for a in pivot], table, min_prob=0.01)
    print(
        f"  LB-Precision {ps.lb_precision:.3f} ({ps.n_correct}/{ps.n_posited})"
        f" Rel-Recall {ps.rel_recall:.3f} (of {ps.n_reference})"
    )
    for b in ps.by_length:
        print(
            f"    length {b.length}: LB-P {b.lb_precision:.3f} Rel-R {b.rel_recall:.3f} ({b.n_correct}/{b.n_posited}/{b.n_reference})"
        )


if __name__ == "__main__":
    main()
