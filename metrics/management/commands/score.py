"""``manage.py score``: score a file of paraphrase pairs with one automatic metric.

    python manage.py score --metric SLUG [--param KEY=VALUE ...] [--resource NAME=PATH ...]
        --input FILE [--output FILE] [--format tsv|csv|jsonl] [--json]

FILE is UTF-8 TSV, CSV or JSON Lines, chosen by extension (``.tsv``/``.tab``,
``.csv``, ``.jsonl``/``.ndjson``; ``--format`` overrides), with the fields
``original`` and ``candidate`` and optionally ``reference`` (an empty reference
counts as none). TSV is read without quoting (a text may contain ``"``); CSV
follows RFC 4180. The rows are written back with a ``score`` column added (full
float precision), to ``--output`` (format by its extension, else the input's)
or to standard output; the corpus score and the signature then go to standard
error. With ``--json`` standard output is instead one object
``{"metric", "signature", "scores": [...], "corpus"}``.

Bad input — a missing column, an unknown metric, parameter or resource, an
unreadable resource, a file that is not UTF-8 — gives a one-line error and a
non-zero exit status. No database is needed. Thin wrapper over
``metrics.core.registry.create_metric``.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from metrics.core import tabular
from metrics.core.base.params import MetricError
from metrics.core.registry import UnknownMetric, create_metric

FORMATS = {".tsv": "tsv", ".tab": "tsv", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
REQUIRED = ("original", "candidate")


def file_format(path: str, override: str | None) -> str:
    """The format named by ``override`` or by the file's extension."""
    if override:
        return override
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise CommandError(
            f"{path}: unknown file type {Path(path).suffix or '(none)'!r}; use .tsv, .csv or .jsonl (or --format)"
        )
    return fmt


def read_rows(path: str, fmt: str) -> tuple[list[str], list[dict[str, str]]]:
    """The field names and rows of ``path`` through the shared reader
    (:mod:`metrics.core.tabular`); ``CommandError`` naming file, line and column."""
    try:
        table = tabular.read_table(tabular.read_text_file(path), fmt, path, required=REQUIRED)
    except tabular.TabularError as exc:
        msg = str(exc)
        if msg.endswith(": no such file"):
            msg = f"cannot read {path}: no such file"
        raise CommandError(msg.replace("\n", "; ")) from None
    if fmt == "jsonl":
        for line, obj in table.rows:
            for k in (*REQUIRED, "reference"):
                if k in obj and obj[k] is not None and not isinstance(obj[k], str):
                    raise CommandError(f"{path}, line {line}, column '{k}': must be a string")
    return table.columns, table.records()


def write_rows(out, fields: list[str], rows: list[dict], fmt: str) -> None:
    """Write ``rows`` (with their ``score``) in ``fmt``."""
    cols = [f for f in fields if f != "score"] + ["score"]
    if fmt == "jsonl":
        for r in rows:
            out.write(json.dumps({c: r.get(c) for c in cols}, ensure_ascii=False) + "\n")
        return
    if fmt == "tsv":
        # Written by hand: TSV here has no quoting, so a tab or newline cannot be stored.
        lines = ["\t".join(cols)]
        for r in rows:
            cells = ["" if r.get(c) is None else str(r.get(c)) for c in cols]
            if any(ch in cell for cell in cells for ch in "\t\n\r"):
                raise CommandError("cannot write TSV: a field contains a tab or newline; write .csv or .jsonl")
            lines.append("\t".join(cells))
        out.write("\n".join(lines) + "\n")
        return
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(cols)
    for r in rows:
        writer.writerow(["" if r.get(c) is None else r.get(c) for c in cols])


def parse_pairs(values: list[str], what: str) -> dict[str, str]:
    """``["k=v", ...]`` → ``{k: v}``; ``CommandError`` on a malformed or repeated key."""
    out: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise CommandError(f"--{what} expects KEY=VALUE, got {item!r}")
        if key in out:
            raise CommandError(f"--{what} {key} given twice")
        out[key] = value
    return out


def _json_float(x: float):
    return x if math.isfinite(x) else None


class Command(BaseCommand):
    help = "Score original/candidate[/reference] pairs from a TSV, CSV or JSONL file with one automatic metric."
    requires_system_checks: list = []

    def add_arguments(self, parser):
        parser.add_argument("--metric", required=True, help="metric slug (see manage.py metrics)")
        parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="metric parameter")
        parser.add_argument("--resource", action="append", default=[], metavar="NAME=PATH", help="resource file")
        parser.add_argument("--input", required=True, help="TSV/CSV/JSONL with original, candidate[, reference]")
        parser.add_argument("--output", help="write the rows with a score column here (default: stdout)")
        parser.add_argument("--format", choices=("tsv", "csv", "jsonl"), help="input format (default: by extension)")
        parser.add_argument("--json", action="store_true", help='print {"metric", "signature", "scores", "corpus"}')

    def handle(self, *args, **opts):
        params = parse_pairs(opts["param"], "param")
        resources = parse_pairs(opts["resource"], "resource")
        path = opts["input"]
        fmt = file_format(path, opts["format"])
        try:
            metric = create_metric(opts["metric"], params, resources)
        except UnknownMetric as exc:
            raise CommandError(str(exc)) from None
        except MetricError as exc:
            raise CommandError(str(exc)) from None
        fields, rows = read_rows(path, fmt)
        if not rows:
            raise CommandError(f"{path}: no data rows")
        originals = [r["original"] or "" for r in rows]
        candidates = [r["candidate"] or "" for r in rows]
        references = [(r.get("reference") or None) for r in rows] if "reference" in fields else None
        if metric.needs_references:
            for i, r in enumerate(rows):
                if not (r.get("reference") or "").strip():
                    where = f"row {i + 1}" if fmt == "jsonl" else f"line {i + 2}"
                    raise CommandError(f"{path}: {where} has no reference, which metric {metric.slug!r} needs")
        try:
            result = metric.score(originals, candidates, references)
        except MetricError as exc:
            # Segment numbers are 0-based rows of data; name the file line/row too.
            raise CommandError(f"{path}: {exc}") from None
        for r, s in zip(rows, result.scores):
            r["score"] = repr(s) if fmt != "jsonl" else _json_float(s)

        if opts["output"]:
            out_fmt = FORMATS.get(Path(opts["output"]).suffix.lower(), fmt)
            if out_fmt == "jsonl" and fmt != "jsonl":
                for r, s in zip(rows, result.scores):
                    r["score"] = _json_float(s)
            elif out_fmt != "jsonl" and fmt == "jsonl":
                for r, s in zip(rows, result.scores):
                    r["score"] = repr(s)
            try:
                with open(opts["output"], "w", encoding="utf-8", newline="") as fh:
                    write_rows(fh, fields, rows, out_fmt)
            except OSError as exc:
                raise CommandError(f"cannot write {opts['output']}: {exc.strerror or exc}") from None

        if opts["json"]:
            payload = {
                "metric": result.metric,
                "signature": result.signature,
                "scores": [_json_float(s) for s in result.scores],
                "corpus": _json_float(result.corpus),
            }
            self.stdout.write(json.dumps(payload, ensure_ascii=False))
            return
        if not opts["output"]:
            buf = io.StringIO()
            write_rows(buf, fields, rows, fmt)
            self.stdout.write(buf.getvalue(), ending="")
        self.stderr.write(f"{result.metric} corpus score {result.corpus!r} over {result.n} pairs")
        self.stderr.write(f"signature {result.signature}")
