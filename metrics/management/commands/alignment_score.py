"""``manage.py alignment_score``: score word alignments and a paraphrase table (ParaMetric).

    python manage.py alignment_score --pairs PAIRS --gold GOLD --test TEST \\
        [--paraphrases TABLE] [--min-prob P] [--max-len 5] [--json]

PAIRS is a TSV file, one sentence pair a line: the two tokenized sentences
(tokens separated by single spaces) separated by a tab. GOLD and TEST are
Pharaoh files (``i-j`` sure, ``ipj`` possible, 0-based), line for line with
PAIRS. Prints link precision, recall, F1 and AER (Och & Ney 2003) and
AlignPrec/AlignRecall (Callison-Burch et al. 2008); ``--paraphrases`` adds
LB-Precision and Rel-Recall of a ``phrase<TAB>paraphrase[<TAB>probability]``
table, with the groups formed by consecutive pairs that share their first
sentence and GOLD as the manual alignments. Bad input gives a one-line error and
a non-zero exit status. Thin wrapper over ``metrics.core.alignment_scoring``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from metrics.core.alignment.model import FormatError
from metrics.core.alignment.text_formats import read_pharaoh
from metrics.core.alignment_scoring.links import link_scores
from metrics.core.alignment_scoring.paraphrases import paraphrase_scores, read_paraphrase_table
from metrics.core.alignment_scoring.phrases import align_scores
from metrics.core.tabular import split_lines


def _read_text(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot read {what} file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise CommandError(f"{what} file {path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_pairs(text: str, path: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Sentence pairs of a PAIRS file; ``CommandError`` naming the line otherwise."""
    pairs = []
    for n, line in enumerate(split_lines(text), 1):
        fields = line.split("\t")
        if len(fields) != 2:
            raise CommandError(f"{path} line {n}: expected two tab-separated sentences, found {len(fields)} field(s)")
        sides = (tuple(fields[0].split()), tuple(fields[1].split()))
        for k, side in enumerate(sides, 1):
            if not side:
                raise CommandError(f"{path} line {n}: sentence {k} is empty")
        pairs.append(sides)
    if not pairs:
        raise CommandError(f"{path}: no sentence pairs")
    return pairs


def _groups(alignments):
    """Consecutive alignments sharing the first sentence form one group."""
    groups: list[list] = []
    for a in alignments:
        if groups and groups[-1][0].tokens1 == a.tokens1:
            groups[-1].append(a)
        else:
            groups.append([a])
    return groups


class Command(BaseCommand):
    help = "Score a test word alignment against a gold one: P/R/F1/AER, AlignPrec/AlignRecall, LB-Precision/Rel-Recall."

    def add_arguments(self, parser):
        parser.add_argument("--pairs", required=True, help="TSV: tokenized sentence 1 <TAB> tokenized sentence 2")
        parser.add_argument("--gold", required=True, help="gold (manual) alignments, Pharaoh, line for line")
        parser.add_argument("--test", required=True, help="test (system) alignments, Pharaoh, line for line")
        parser.add_argument("--paraphrases", help="paraphrase table: phrase<TAB>paraphrase[<TAB>probability]")
        parser.add_argument("--min-prob", type=float, default=0.0, help="keep table entries with probability ≥ P")
        parser.add_argument("--max-len", type=int, default=5, help="longest phrase in words (default 5)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **opts):
        if opts["max_len"] < 1:
            raise CommandError("--max-len must be at least 1")
        if not (0.0 <= opts["min_prob"] <= 1.0):
            raise CommandError("--min-prob must be between 0 and 1")
        pairs = read_pairs(_read_text(opts["pairs"], "PAIRS"), opts["pairs"])
        aligned = {}
        for name in ("gold", "test"):
            path = opts[name]
            try:
                aligned[name] = read_pharaoh(_read_text(path, name.upper()), pairs=pairs)
            except FormatError as exc:
                raise CommandError(f"{path}: {exc}") from None
        gold, test = aligned["gold"], aligned["test"]
        links = link_scores(gold, test)
        phrases = align_scores(gold, test, max_len=opts["max_len"])
        result = {
            "precision": links.precision,
            "recall": links.recall,
            "f1": links.f1,
            "aer": links.aer,
            "align_prec": phrases.align_prec,
            "align_recall": phrases.align_recall,
        }
        if opts["paraphrases"]:
            path = opts["paraphrases"]
            try:
                table = read_paraphrase_table(_read_text(path, "paraphrase table"))
            except FormatError as exc:
                raise CommandError(f"{path}: {exc}") from None
            para = paraphrase_scores(_groups(gold), table, max_len=opts["max_len"], min_prob=opts["min_prob"])
            result["lb_precision"] = para.lb_precision
            result["rel_recall"] = para.rel_recall
        if opts["json"]:
            clean = {k: None if math.isnan(v) else v for k, v in result.items()}
            self.stdout.write(json.dumps(clean))
            return
        self.stdout.write(f"{'pairs':<13} {len(pairs)}")
        for k, v in result.items():
            self.stdout.write(f"{k:<13} {'undefined' if math.isnan(v) else f'{v:.4f}'}")
