"""One reader for tabular input: CSV with quoting, TSV raw, JSON Lines split on ``\\n``.

Every command and importer that reads a table of records goes through here, so the
same file reads the same way behind every door and every problem is reported the
same way: file, line (1-based; the header is line 1), column.

Why each rule:

* **CSV** follows RFC 4180 (quotes, doubled quotes, newlines inside quotes), read
  ``strict`` so that a stray quote is an error, not a silently merged row.
* **TSV** is read *raw* (``csv.QUOTE_NONE``): TSV has no quoting convention, and texts
  start with ``"`` often enough (quotations) that reading TSV with CSV quoting let one
  field swallow the following rows without a word (issue 12: α came out null for two
  judges who agree).  A tab or newline therefore cannot occur inside a TSV field.
* **JSON Lines** is split on ``"\\n"`` only: JSON strings may hold U+2028, U+2029,
  U+0085 and friends raw, which ``str.splitlines()`` splits on — a file could not be
  read back after being written.  A trailing ``"\\r"`` (CRLF files) is dropped.

Plain Python (``csv``, ``json``): the standard library does each format correctly; what
was missing was using the same settings everywhere.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from .text import has_lone_surrogate

__all__ = [
    "FORMATS",
    "Table",
    "TabularError",
    "TabularIssue",
    "csv_records",
    "format_from_name",
    "jsonl_objects",
    "read_table",
    "read_table_file",
    "read_text_file",
    "split_lines",
]

FORMATS: tuple[str, ...] = ("csv", "tsv", "jsonl")
EXTENSIONS: dict[str, str] = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}

# Texts can be long (whole verses, paragraphs): lift csv's 128 KiB field limit once.
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


@dataclass(frozen=True)
class TabularIssue:
    """One problem in a file: what, and where (line and column when known)."""

    message: str
    line: int | None = None
    column: str | None = None

    def render(self, filename: str) -> str:
        where = [filename]
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.column is not None:
            where.append(f"column '{self.column}'")
        return f"{', '.join(where)}: {self.message}"


class TabularError(ValueError):
    """The file cannot be read as a table; ``issues`` lists every place that is wrong."""

    def __init__(self, filename: str, issues: Sequence[TabularIssue]):
        self.filename = filename
        self.issues = list(issues)
        super().__init__(self.describe())

    def describe(self, limit: int = 20) -> str:
        lines = [i.render(self.filename) for i in self.issues[:limit]]
        if len(self.issues) > limit:
            lines.append(f"… and {len(self.issues) - limit} more problems")
        return "\n".join(lines)


@dataclass
class Table:
    """A table read from a file: its columns in order and its rows with their lines.

    CSV/TSV values are strings; JSON Lines values are as JSON decoded them (a caller
    that wants text checks the type and reports the line and column).
    """

    filename: str
    format: str
    columns: list[str]
    rows: list[tuple[int, dict[str, Any]]] = field(default_factory=list)

    def records(self) -> list[dict[str, Any]]:
        return [row for _, row in self.rows]


def format_from_name(filename: str, explicit: str | None = None) -> str:
    """``explicit`` if given, else the format named by the file's extension."""
    if explicit:
        fmt = explicit.lower().lstrip(".")
        if fmt not in FORMATS:
            raise TabularError(
                filename, [TabularIssue(f"unknown format '{explicit}'; use one of {', '.join(FORMATS)}")]
            )
        return fmt
    suffix = PurePath(filename).suffix.lower()
    if suffix not in EXTENSIONS:
        raise TabularError(
            filename,
            [
                TabularIssue(
                    f"cannot tell the format from the extension '{suffix or '(none)'}'; name the file .csv, .tsv or "
                    ".jsonl, or give the format"
                )
            ],
        )
    return EXTENSIONS[suffix]


def split_lines(text: str) -> list[str]:
    """Lines of ``text`` split on ``"\\n"`` only, a trailing ``"\\r"`` dropped, no final
    empty line for a text that ends with a newline (see the module docstring)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_text_file(path: str | Path, filename: str | None = None) -> str:
    """A file's text, strictly UTF-8 (a BOM is allowed), with no NUL character.

    Errors name the line of the first bad byte.  ``TabularError`` otherwise.
    """
    name = filename or str(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise TabularError(name, [TabularIssue("no such file")]) from None
    except OSError as exc:
        raise TabularError(name, [TabularIssue(f"cannot read: {exc.strerror or exc}")]) from None
    return decode_text(data, name)


def decode_text(data: bytes, filename: str) -> str:
    """Decode ``data`` strictly as UTF-8 (BOM allowed); reject NUL characters."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise TabularError(
            filename,
            [
                TabularIssue(
                    f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at character {col}); save the file as UTF-8",
                    line=line,
                )
            ],
        ) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise TabularError(filename, [TabularIssue("contains a NUL character; is this a binary file?", line=line)])
    return text


def csv_records(text: str, fmt: str, filename: str) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line where the record starts, fields)`` of a CSV or TSV text.

    Blank records are skipped.  A malformed CSV record raises ``TabularError`` with
    its line.
    """
    if fmt == "csv":
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=",", strict=True)
    elif fmt == "tsv":
        reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE, strict=True)
    else:
        raise ValueError(f"csv_records reads csv or tsv, not {fmt!r}")
    prev_end = 0
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise TabularError(filename, [TabularIssue(f"malformed {fmt.upper()}: {exc}", line=prev_end + 1)]) from None
        start = prev_end + 1
        prev_end = reader.line_num
        if not row or all(not cell.strip() for cell in row):
            continue
        yield start, row


#: A \\u escape of a high surrogate not followed by a low one, or a low one not after a high one.
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def jsonl_objects(text: str, issues: list[TabularIssue]) -> Iterator[tuple[int, dict]]:
    """Yield ``(line, object)`` for each non-blank line holding a JSON object; every
    other line becomes an issue naming it (bad JSON, too deep, not an object)."""
    for lineno, raw in enumerate(split_lines(text), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            issues.append(TabularIssue(f"not valid JSON: {exc.msg} at character {exc.colno}", line=lineno))
            continue
        except RecursionError:
            issues.append(TabularIssue("JSON nested too deeply", line=lineno))
            continue
        except ValueError:
            # json.loads raises a plain ValueError (not JSONDecodeError) for an integer of
            # more than sys.get_int_max_str_digits() digits: a bad line, not a crash.
            issues.append(TabularIssue("not valid JSON: a number with too many digits", line=lineno))
            continue
        if not isinstance(obj, dict):
            issues.append(TabularIssue("each line must be a JSON object", line=lineno))
            continue
        if "\\u" in raw and has_lone_surrogate(obj):
            at = _LONE_SURROGATE.search(raw)
            where = f" at character {at.start() + 1}" if at else ""
            issues.append(
                TabularIssue(
                    f"a \\u escape of half a surrogate pair{where}, which is no character: write the character "
                    "itself, or both halves of its pair",
                    line=lineno,
                )
            )
            continue
        yield lineno, obj


def read_table(text: str, fmt: str, filename: str, *, required: Sequence[str] = ()) -> Table:
    """Parse ``text`` as a table in ``fmt`` (csv, tsv, jsonl); ``TabularError`` listing
    every problem (empty or repeated header cells, rows with the wrong number of
    fields, bad JSON lines, missing ``required`` columns, no data rows).

    Header names are stripped of surrounding spaces.  For JSON Lines the columns are
    the keys in order of first appearance, and a required key missing from a line is
    reported with that line.
    """
    issues: list[TabularIssue] = []
    table = Table(filename, fmt, [])
    if fmt == "jsonl":
        for lineno, obj in jsonl_objects(text, issues):
            obj_row = {str(k).strip(): v for k, v in obj.items()}
            for key in obj_row:
                if key not in table.columns:
                    table.columns.append(key)
            for key in required:
                if key not in obj_row:
                    issues.append(TabularIssue("missing", line=lineno, column=key))
            table.rows.append((lineno, obj_row))
    elif fmt in ("csv", "tsv"):
        records = csv_records(text, fmt, filename)
        try:
            header_line, header = next(records)
        except StopIteration:
            raise TabularError(filename, [TabularIssue("empty file: no header")]) from None
        header = [h.strip() for h in header]
        for idx, name in enumerate(header):
            if not name:
                issues.append(
                    TabularIssue(f"header cell {idx + 1} is empty; every column needs a name", line=header_line)
                )
        seen: set[str] = set()
        for name in header:
            if name and name in seen:
                issues.append(TabularIssue("appears twice in the header", line=header_line, column=name))
            seen.add(name)
        table.columns = header
        missing = [c for c in required if c not in header]
        if missing:
            issues.append(
                TabularIssue(f"missing column(s) {', '.join(missing)} (found: {', '.join(header)})", line=header_line)
            )
        for line, row in records:
            if len(row) != len(header):
                hint = ""
                if fmt == "tsv" and len(row) < len(header):
                    hint = " (TSV is read without quoting: a tab or line break cannot be inside a field)"
                issues.append(TabularIssue(f"has {len(row)} fields but the header has {len(header)}{hint}", line=line))
                continue
            table.rows.append((line, dict(zip(header, row))))
    else:
        raise TabularError(filename, [TabularIssue(f"unknown format '{fmt}'; use one of {', '.join(FORMATS)}")])
    if not issues and not table.rows:
        issues.append(TabularIssue("no data rows"))
    if issues:
        raise TabularError(filename, issues)
    return table


def read_table_file(path: str | Path, *, fmt: str | None = None, required: Sequence[str] = ()) -> Table:
    """:func:`read_table` on a file, its format from ``fmt`` or its extension."""
    name = str(path)
    return read_table(read_text_file(path, name), format_from_name(name, fmt), name, required=required)
