"""``manage.py build_phrase_table``: a PEM pivot phrase table from a word-aligned corpus.

    python manage.py build_phrase_table --corpus CORPUS --alignments ALIGN --out TABLE
        [--raw] [--max-len-english 4] [--max-len-pivot 4] [--no-stem] [--min-count 1]
    python manage.py build_phrase_table --moses PHRASE_TABLE --out TABLE [--english-side source|target]

CORPUS is UTF-8 TSV, one sentence pair a line: ``english<TAB>pivot``, tokens
separated by spaces (``--raw``: plain text, tokenised by paraeval's tokenizer).
ALIGN is a Pharaoh file (``i-j`` sure, ``ipj`` possible, 0-based English-pivot
links; both kinds are used), line for line with CORPUS. TABLE is the phrase-table
resource of ``pivot-f1`` (TSV english/pivot/count; ``.gz``/``.xz`` compress).
``--moses`` converts a Moses phrase table instead (joint counts from its counts
field). Bad input gives a one-line error and a non-zero exit status. Thin
wrapper over ``metrics.core.phrase_table``.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from metrics.core.alignment.model import FormatError
from metrics.core.alignment.text_formats import read_pharaoh
from metrics.core.phrase_table import build_phrase_table, read_moses_phrase_table, write_phrase_table
from metrics.core.tabular import split_lines
from metrics.core.text import tokenize


def _read_text(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot read {what} file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise CommandError(f"{what} file {path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_corpus(text: str, path: str, *, raw: bool) -> list[tuple[list[str], list[str]]]:
    """Sentence pairs of a CORPUS file; ``CommandError`` naming the line otherwise."""
    pairs = []
    for n, line in enumerate(split_lines(text), 1):
        fields = line.split("\t")
        if len(fields) != 2:
            raise CommandError(f"{path} line {n}: expected english<TAB>pivot, found {len(fields)} field(s)")
        sides = [tokenize(f) if raw else f.split() for f in fields]
        for side, name in zip(sides, ("english", "pivot")):
            if not side:
                raise CommandError(f"{path} line {n}: the {name} sentence is empty")
        pairs.append((sides[0], sides[1]))
    if not pairs:
        raise CommandError(f"{path}: no sentence pairs")
    return pairs


class Command(BaseCommand):
    help = "Build a PEM pivot phrase table (english/pivot/count TSV) from an aligned corpus or a Moses table."

    def add_arguments(self, parser):
        parser.add_argument("--corpus", help="TSV english<TAB>pivot, one sentence pair a line")
        parser.add_argument("--alignments", help="Pharaoh links (i-j / ipj), line for line with --corpus")
        parser.add_argument("--moses", help="convert this Moses phrase table instead of --corpus/--alignments")
        parser.add_argument(
            "--english-side",
            choices=["source", "target"],
            default="source",
            help="which side of the Moses table is English (default: source)",
        )
        parser.add_argument("--out", required=True, help="output table (.tsv, .tsv.gz or .tsv.xz)")
        parser.add_argument("--raw", action="store_true", help="corpus is plain text: tokenise it")
        parser.add_argument("--max-len-english", type=int, default=4)
        parser.add_argument("--max-len-pivot", type=int, default=4)
        parser.add_argument("--no-stem", action="store_true", help="do not Porter-stem English (PEM stems)")
        parser.add_argument("--min-count", type=int, default=1, help="drop pairs seen fewer times")

    def handle(self, *args, **opts):
        t0 = time.perf_counter()
        stem = not opts["no_stem"]
        if opts["max_len_english"] < 1 or opts["max_len_pivot"] < 1:
            raise CommandError("--max-len-english and --max-len-pivot must be at least 1")
        if opts["moses"]:
            if opts["corpus"] or opts["alignments"]:
                raise CommandError("give either --moses or --corpus with --alignments, not both")
            try:
                counts = read_moses_phrase_table(opts["moses"], english_side=opts["english_side"], stem_english=stem)
            except OSError as exc:
                raise CommandError(f"cannot read Moses table {opts['moses']}: {exc.strerror or exc}") from None
            except (ValueError, UnicodeDecodeError, EOFError) as exc:
                raise CommandError(str(exc)) from None
        else:
            if not (opts["corpus"] and opts["alignments"]):
                raise CommandError("--corpus and --alignments are required (or --moses)")
            pairs = read_corpus(_read_text(opts["corpus"], "corpus"), opts["corpus"], raw=opts["raw"])
            try:
                aligned = read_pharaoh(_read_text(opts["alignments"], "alignments"), pairs=pairs)
            except FormatError as exc:
                raise CommandError(f"{opts['alignments']} {exc}") from None
            counts = build_phrase_table(
                ((e, f, a.sure | a.possible) for (e, f), a in zip(pairs, aligned)),
                max_len_english=opts["max_len_english"],
                max_len_pivot=opts["max_len_pivot"],
                stem_english=stem,
            )
        if opts["min_count"] > 1:
            counts = Counter({k: c for k, c in counts.items() if c >= opts["min_count"]})
        if not counts:
            raise CommandError("no phrase pairs: the alignments link nothing (or --min-count removed everything)")
        try:
            out = write_phrase_table(counts, opts["out"])
        except OSError as exc:
            raise CommandError(f"cannot write {opts['out']}: {exc.strerror or exc}") from None
        n_english = len({e for e, _ in counts})
        self.stdout.write(
            f"wrote {len(counts)} phrase pairs ({n_english} English phrases) to {out} "
            f"in {time.perf_counter() - t0:.1f} s"
        )
