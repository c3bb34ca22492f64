"""Exports: the study's pairs, any alignment source in any format, scoring results.

Reads only. Alignment files come from ``metrics.core.alignment.dumps`` so that an
export read back by ``system_alignments_import`` gives the same links. CSV meant
for spreadsheets has every cell that starts like a formula (``=``, ``+``, ``-``, ``@``,
a tab or a carriage return) prefixed with ``'`` so that no spreadsheet runs it
(:func:`metrics.core.spreadsheet.formula_safe`).
"""

from __future__ import annotations

import csv
import io
import json
import re

from django.contrib.auth.models import User

from annotation.models import Study
from metrics.core.alignment.io import dumps
from metrics.core.alignment.model import Alignment
from metrics.core.spreadsheet import formula_safe
from metrics.core.text import TOKENIZER_VERSION

from . import selectors
from .enums import ALIGNMENT_FORMATS, ScoringKind
from .models import AlignmentSystem, ScoringRun


class ExportError(ValueError):
    """The requested export does not exist (unknown source, format or table)."""


def neutralise_cell(value) -> str:
    """A spreadsheet-safe text cell (every value as text, None as empty): see :func:`formula_safe`."""
    if value is None:
        return ""
    return str(formula_safe(str(value)))


def safe_csv(header: list[str], rows: list[list]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([neutralise_cell(h) for h in header])
    for row in rows:
        w.writerow([neutralise_cell(c) for c in row])
    return buf.getvalue()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "export"


def alignment_sources(*, study: Study) -> list[tuple[str, str]]:
    """(source key, label) of everything that can be exported: gold, each system, each annotator."""
    out = [("gold", "Gold (annotators' submitted alignments, combined)")]
    out += [
        (f"system:{s.pk}", f"System {s.name}") for s in AlignmentSystem.objects.filter(study=study).order_by("name")
    ]
    out += [
        (f"annotator:{u.pk}", f"Annotator {u.username}")
        for u in User.objects.filter(alignment_assignments__pair__study=study).distinct().order_by("username")
    ]
    return out


#: A database id in a query string: ASCII digits only, and few enough for a 64-bit column.
#: ``str.isdigit`` is not enough: it accepts "²" and "١", which ``int()`` then refuses or
#: reads as another number.
_ID = re.compile(r"[0-9]{1,18}")


def source_alignments(study: Study, source: str) -> tuple[dict[int, Alignment], str]:
    """The alignments of ``source`` (``gold``, ``system:<id>``, ``annotator:<id>``) by pair id, and its name.

    Raises :class:`ExportError` for anything else, including ids that are not
    ASCII digits (``system:²``) or too long for the database.
    """
    if source == "gold":
        return selectors.gold_alignments(study=study), "gold"
    kind, _, ident = source.partition(":")
    if not _ID.fullmatch(ident):
        raise ExportError(f"unknown source '{source}'; use gold, system:<id> or annotator:<id>")
    if kind == "system":
        system = AlignmentSystem.objects.filter(study=study, pk=int(ident)).first()
        if system is None:
            raise ExportError(f"no system {ident} in this study")
        return selectors.system_alignments(system=system), system.name
    if kind == "annotator":
        user = User.objects.filter(pk=int(ident)).first()
        if user is None:
            raise ExportError(f"no annotator {ident}")
        subs = selectors.submitted_alignments(study=study)
        return {pid: by[user.pk] for pid, by in subs.items() if user.pk in by}, user.username
    raise ExportError(f"unknown source '{source}'; use gold, system:<id> or annotator:<id>")


def alignment_export(*, study: Study, source: str, fmt: str) -> tuple[str, str, str]:
    """(text, file name, content type) of one source's alignments of every pair, in task order.

    Pairs the source has not aligned (e.g. no annotator submitted them yet) are
    written without links, so that line k is always the study's k-th pair and a
    Pharaoh/NAACL/CSV file can be read back against the pairs export.
    """
    if fmt not in ALIGNMENT_FORMATS:
        raise ExportError(f"unknown format '{fmt}'; use one of {', '.join(ALIGNMENT_FORMATS)}")
    found, name = source_alignments(study, source)
    alignments = []
    for pair in selectors.pairs_for_study(study=study):
        a = found.get(pair.pk)
        alignments.append(a if a is not None else Alignment(tuple(pair.tokens1), tuple(pair.tokens2)))
    text = dumps(alignments, fmt)
    ext = ALIGNMENT_FORMATS[fmt][1]
    ctype = {"json": "application/json", "jsonl": "application/x-ndjson", "csv": "text/csv"}.get(fmt, "text/plain")
    return text, f"{_slug(study.name)}-{_slug(name)}.{ext}", f"{ctype}; charset=utf-8"


def pairs_export(*, study: Study, fmt: str) -> tuple[str, str, str]:
    """The pairs in task order: ``jsonl`` (ids, texts, tokens; re-importable as is) or
    ``tsv`` (the two tokenized sentences, the ``alignment_score --pairs`` input).

    The TSV holds tokens exactly, so it is not neutralised for spreadsheets.
    """
    pairs = list(selectors.pairs_for_study(study=study))
    if fmt == "jsonl":
        text = "".join(
            json.dumps(
                {
                    "pair_id": p.external_id,
                    "group_id": p.group.external_id,
                    "sentence1": p.text1,
                    "sentence2": p.text2,
                    "tokens1": p.tokens1,
                    "tokens2": p.tokens2,
                },
                ensure_ascii=False,
            )
            + "\n"
            for p in pairs
        )
        return text, f"{_slug(study.name)}-pairs.jsonl", "application/x-ndjson; charset=utf-8"
    if fmt == "tsv":
        text = "".join(" ".join(p.tokens1) + "\t" + " ".join(p.tokens2) + "\n" for p in pairs)
        return text, f"{_slug(study.name)}-pairs.tsv", "text/tab-separated-values; charset=utf-8"
    raise ExportError(f"unknown pairs format '{fmt}'; use jsonl or tsv")


#: Tables of each kind of run, for the CSV export: (key in results, title). Keyed by
#: ScoringKind, looked up by a run's kind (the stored str, which the member equals).
RUN_TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    ScoringKind.SYSTEM: (("summary", "Summary"), ("by_length", "By phrase length"), ("per_pair", "Per pair")),
    ScoringKind.PARAPHRASES: (("summary", "Summary"), ("by_length", "By phrase length")),
    ScoringKind.AGREEMENT: (("summary", "Pooled"), ("annotator_pairs", "Per pair of annotators")),
}


_LINK = ["link_precision", "link_recall", "link_f1", "aer"]
#: Column order of each table. Results are stored as JSON objects, and PostgreSQL's
#: jsonb does not keep key order, so the order is stated here.
COLUMNS: dict[tuple[str, str], list[str]] = {
    (ScoringKind.SYSTEM, "summary"): _LINK
    + ["align_prec", "align_recall", "align_f1", "n_pairs", "n_pairs_without_system", "n_pairs_with_gold"],
    (ScoringKind.SYSTEM, "by_length"): ["length", "pp_system", "pp_manual", "pp_common", "align_prec", "align_recall"],
    (ScoringKind.SYSTEM, "per_pair"): [
        "pair_id",
        "group_id",
        "len1",
        "len2",
        "n_test",
        "n_sure",
        "n_possible",
        "test_sure",
        "test_possible",
    ]
    + _LINK
    + ["pp_system", "pp_manual", "pp_common", "align_prec", "align_recall"],
    (ScoringKind.PARAPHRASES, "summary"): [
        "lb_precision",
        "rel_recall",
        "n_posited",
        "n_correct",
        "n_reference",
        "n_groups",
        "n_pairs",
        "n_table_entries",
    ],
    (ScoringKind.PARAPHRASES, "by_length"): [
        "length",
        "n_posited",
        "n_correct",
        "n_reference",
        "lb_precision",
        "rel_recall",
    ],
    (ScoringKind.AGREEMENT, "summary"): _LINK
    + ["kappa", "kappa_linked", "observed", "n_pairs", "n_cells", "n_pairs_distinct", "n_annotator_pairs"],
    (ScoringKind.AGREEMENT, "annotator_pairs"): ["annotator_a", "annotator_b"]
    + _LINK
    + ["kappa", "kappa_linked", "observed", "n_pairs", "n_cells"],
}


def run_table(run: ScoringRun, table: str) -> tuple[list[str], list[list]]:
    """(header, rows) of one table of a finished run; the summary is one row."""
    if table not in dict(RUN_TABLES[run.kind]):
        raise ExportError(f"a {run.kind} run has the tables {', '.join(k for k, _ in RUN_TABLES[run.kind])}")
    data = run.results.get(table)
    rows = [data] if isinstance(data, dict) else list(data or [])
    if not rows:
        return [], []
    known = COLUMNS.get((run.kind, table), [])
    header = [c for c in known if c in rows[0]] + sorted(c for c in rows[0] if c not in known)
    return header, [[r.get(h) for h in header] for r in rows]


def run_export(*, run: ScoringRun, fmt: str, table: str = "summary") -> tuple[str, str, str]:
    """A run as JSON (everything: parameters, signature, results) or one of its tables as CSV."""
    base = f"{_slug(run.study.name)}-{run.kind}-{run.pk}"
    if fmt == "json":
        doc = {
            "run": run.pk,
            "study": run.study.name,
            "kind": run.kind,
            "label": run.label,
            "parameters": run.parameters,
            "signature": run.signature,
            "tokenizer": TOKENIZER_VERSION,
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            "results": run.results,
        }
        return json.dumps(doc, ensure_ascii=False, indent=2) + "\n", f"{base}.json", "application/json; charset=utf-8"
    if fmt == "csv":
        header, rows = run_table(run, table)
        return safe_csv(header, rows), f"{base}-{table}.csv", "text/csv; charset=utf-8"
    raise ExportError(f"unknown format '{fmt}'; use csv or json")
