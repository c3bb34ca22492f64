"""python manage.py paraphrase --system NAME --input FILE --output FILE [--seed N] [--param K=V ...]

Runs one of paraeval's baseline paraphrasers over a file; needs no database.

Input: ``.txt`` (one sentence a line; blank lines stay blank) or ``.csv`` / ``.tsv`` /
``.jsonl`` with an ``original`` column (other columns are carried through).
Output: the same rows with a ``candidate`` column, in the format of the output
file's extension (``.txt``: one candidate a line). ``--list`` shows the
paraphrasers, their parameters and whether each can run here.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from metrics.core.paraphrasers._base import ParaphraserError
from metrics.core.paraphrasers.registry import available_paraphrasers, create_paraphraser

FORMATS = {".txt": "txt", ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl"}


def _format_of(path: Path, flag: str) -> str:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise CommandError(
            f"{flag} {path}: cannot tell the format from '{path.suffix or '(no extension)'}'; "
            f"use one of {', '.join(sorted(FORMATS))}"
        )
    return fmt


def read_rows(path: Path) -> tuple[str, list[str], list[dict[str, str]]]:
    """(format, column names, rows) of an input file; every row has an ``original``."""
    fmt = _format_of(path, "--input")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise CommandError(f"--input {path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise CommandError(f"--input {path}: not valid UTF-8 (byte {exc.start}); save the file as UTF-8") from None
    if fmt == "txt":
        return fmt, ["original"], [{"original": line} for line in text.splitlines()]
    rows: list[dict[str, str]] = []
    columns: list[str] = []
    if fmt == "jsonl":
        for lineno, raw in enumerate(text.splitlines(), 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise CommandError(f"{path}, line {lineno}: not valid JSON: {exc.msg}") from None
            if not isinstance(obj, dict) or not isinstance(obj.get("original"), str):
                raise CommandError(f"{path}, line {lineno}: each line must be an object with a string 'original'")
            for key in obj:
                if key not in columns:
                    columns.append(key)
            rows.append(obj)
        return fmt, columns, rows
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter="," if fmt == "csv" else "\t")
    columns = [c.strip() for c in reader.fieldnames or []]
    if "original" not in columns:
        raise CommandError(f"{path}: no 'original' column (columns: {', '.join(columns) or 'none'})")
    reader.fieldnames = columns
    for row in reader:
        if None in row or any(v is None for v in row.values()):
            raise CommandError(
                f"{path}, line {reader.line_num}: the row has a different number of fields than the header"
            )
        rows.append(row)
    return fmt, columns, rows


def write_rows(path: Path, columns: list[str], rows: list[dict[str, str]]) -> None:
    """Write rows (with their ``candidate``) in the format of ``path``'s extension."""
    fmt = _format_of(path, "--output")
    if "candidate" not in columns:
        columns = [*columns, "candidate"]
    buf = io.StringIO()
    if fmt == "txt":
        buf.write("".join(row["candidate"] + "\n" for row in rows))
    elif fmt == "jsonl":
        buf.write("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    else:
        w = csv.DictWriter(buf, fieldnames=columns, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    try:
        path.write_text(buf.getvalue(), encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"--output {path}: cannot write: {exc.strerror}") from None


def _show(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Command(BaseCommand):
    help = "Paraphrase every sentence of a file with one of paraeval's baseline paraphrasers (no database needed)."
    requires_system_checks: list = []

    def add_arguments(self, parser):
        parser.add_argument("--system", help="paraphraser: pg1, pg2, pg3, wordnet, wordnet-context, roundtrip-apertium")
        parser.add_argument("--input", type=Path, help=".txt (a sentence a line) or .csv/.tsv/.jsonl with 'original'")
        parser.add_argument("--output", type=Path, help="where to write the rows with a 'candidate' column")
        parser.add_argument("--seed", type=int, default=0, help="random seed (same seed, same output; default 0)")
        parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="a paraphraser parameter")
        parser.add_argument("--list", action="store_true", help="list the paraphrasers and their parameters")

    def handle(self, *args, **opts):
        if opts["list"]:
            for info in available_paraphrasers():
                state = "" if info.available else f"  [unavailable: {info.unavailable_reason}]"
                self.stdout.write(f"{info.slug}: {info.description}{state}")
                for param in info.params:
                    self.stdout.write(f"    {param.name}={_show(param.default)}  {param.help}")
            return
        for flag in ("system", "input", "output"):
            if not opts[flag]:
                raise CommandError(f"--{flag} is required (or pass --list)")
        params = {}
        for item in opts["param"]:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise CommandError(f"--param {item!r}: expected KEY=VALUE")
            params[key.strip()] = value.strip()
        try:
            paraphraser = create_paraphraser(opts["system"], params, seed=opts["seed"])
        except ParaphraserError as exc:
            raise CommandError(str(exc)) from None
        _format_of(opts["output"], "--output")
        _, columns, rows = read_rows(opts["input"])
        todo = [i for i, row in enumerate(rows) if row["original"].strip()]
        try:
            out = paraphraser.paraphrase_batch([rows[i]["original"] for i in todo])
        except ParaphraserError as exc:
            raise CommandError(str(exc)) from None
        for row in rows:
            row["candidate"] = ""
        for i, p in zip(todo, out):
            rows[i]["candidate"] = p.text
        write_rows(opts["output"], columns, rows)
        changed = sum(1 for p in out if p.changed)
        self.stdout.write(
            self.style.SUCCESS(
                f"Paraphrased {len(todo)} sentences with {opts['system']} ({changed} changed) into {opts['output']}."
            )
        )
        self.stdout.write(f"signature: {paraphraser.signature()}")
