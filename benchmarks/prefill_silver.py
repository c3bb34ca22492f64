"""Pre-filled error spans from the word aligner, scored against Strong's tags (a silver standard).

    .venv/bin/python benchmarks/prefill_silver.py [--pairs 1000] [--seed 0] [--no-wordnet]
        [--bible ../shared/data/bible/verses.jsonl.xz]

The original is a KJV verse, the candidate the WEB verse (two independent translations of
one source: natural paraphrases). A Strong's id names the Hebrew/Greek word a span
translates, so a **candidate content word** (letters or digits, not one of the aligner's
function words) is *silver-added* when none of its ids occurs in the original verse
(untagged content words count as added: translators' additions are untagged), and an
**original content word** *silver-omitted* when none of its ids occurs in the candidate.
The proposals (:func:`metrics.core.spans.prefill.propose_spans`) are read word by word:

    precision = proposed words that are silver-added (or -omitted) / proposed words,
    recall    = silver words proposed / silver words.

The tags are noisy (some function words carry the id of a neighbour), so this is a floor
for what judges will see, not a gold precision; the real figure comes from the kept spans
of a study (:func:`metrics.core.spans.prefill.proposal_outcomes`). Prints per side the
counts, precision, recall, proposals per pair and the CPU time per pair.
"""

from __future__ import annotations

import argparse
import json
import lzma
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_BIBLE = ROOT.parent / "shared" / "data" / "bible" / "verses.jsonl.xz"  # as benchmarks/alignment_scores.py

from metrics.core.aligner import FUNCTION_WORDS  # noqa: E402
from metrics.core.spans.prefill import propose_spans  # noqa: E402


def _tag_offsets(text: str, tagged) -> list[tuple[int, int, frozenset[str]]]:
    """Character ranges of the tagged segments in the plain text (found in reading order)."""
    out, cursor = [], 0
    for piece, ids in tagged:
        piece = piece.strip()
        if not piece:
            continue
        at = text.find(piece, cursor)
        if at < 0:
            continue
        out.append((at, at + len(piece), frozenset(ids)))
        cursor = at + len(piece)
    return out


def _word_tags(words, segments):
    return [frozenset().union(*(ids for s, e, ids in segments if s < we and ws < e)) for ws, we in words]


def _content(word: str) -> bool:
    return any(ch.isalnum() for ch in word) and word.lower() not in FUNCTION_WORDS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-wordnet", action="store_true")
    parser.add_argument("--bible", default=str(DEFAULT_BIBLE))
    args = parser.parse_args()
    with lzma.open(args.bible, "rt", encoding="utf-8") as fh:
        verses = [json.loads(line) for line in fh]
    sample = random.Random(args.seed).sample(verses, args.pairs)
    counts = {side: {"proposed": 0, "hit": 0, "silver": 0, "found": 0} for side in ("candidate", "original")}
    n_spans = 0
    cpu = 0.0
    for v in sample:
        original, candidate = v["kjv"], v["web"]
        start = time.process_time()
        proposal = propose_spans(original, candidate, use_wordnet=not args.no_wordnet)
        cpu += time.process_time() - start
        n_spans += len(proposal.spans)
        o_tags = _word_tags(proposal.original_words, _tag_offsets(original, v["kjv_tagged"]))
        c_tags = _word_tags(proposal.candidate_words, _tag_offsets(candidate, v["web_tagged"]))
        all_o = frozenset().union(*o_tags) if o_tags else frozenset()
        all_c = frozenset().union(*c_tags) if c_tags else frozenset()
        for side, text, words, tags, other in (
            ("candidate", candidate, proposal.candidate_words, c_tags, all_o),
            ("original", original, proposal.original_words, o_tags, all_c),
        ):
            spans = [s for s in proposal.spans if s.side == side]
            for (ws, we), ids in zip(words, tags):
                if not _content(text[ws:we]):
                    continue
                silver = not (ids & other)
                proposed = any(s.start <= ws and we <= s.end for s in spans)
                c = counts[side]
                c["proposed"] += proposed
                c["hit"] += proposed and silver
                c["silver"] += silver
                c["found"] += proposed and silver
    print(f"{args.pairs} KJV/WEB verse pairs, seed {args.seed}, WordNet {'off' if args.no_wordnet else 'on'}")
    for side, name in (("candidate", "additions (candidate words)"), ("original", "omissions (original words)")):
        c = counts[side]
        precision = c["hit"] / c["proposed"] if c["proposed"] else float("nan")
        recall = c["found"] / c["silver"] if c["silver"] else float("nan")
        print(
            f"  {name}: proposed {c['proposed']}, silver {c['silver']}, precision {precision:.3f}, recall {recall:.3f}"
        )
    print(f"  spans proposed per pair: {n_spans / args.pairs:.2f}; CPU per pair: {1000 * cpu / args.pairs:.1f} ms")


if __name__ == "__main__":
    main()
