"""Parse study files (CSV, TSV, JSONL; long or wide layout) without touching the DB.

Layouts
-------
*long*: one row per candidate, columns ``original_id, original, system, candidate``.
*wide*: one row per original, columns ``original_id, original`` and one column per
system holding that system's candidate.
Both take the optional columns ``reference``, ``group`` and ``document``. A file
with ``system`` and ``candidate`` columns is long; any other file is wide.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass, field

from .fields import check_system_name, iter_rows
from .reading import (
    MAX_FIELD_CHARS,
    MAX_ISSUES,
    MAX_NAME_CHARS,
    ImportIssue,
    StudyImportError,
    decode_utf8,
    detect_format,
)

REQUIRED = ("original_id", "original")
LONG_ONLY = ("system", "candidate")
OPTIONAL = ("reference", "group", "document")
KNOWN = REQUIRED + LONG_ONLY + OPTIONAL


@dataclass
class OriginalData:
    external_id: str
    text: str
    reference: str
    group: str
    document: str
    line: int
    position: int


@dataclass
class CandidateData:
    original_id: str
    system: str
    text: str
    line: int


@dataclass
class ParsedStudyData:
    filename: str
    format: str
    layout: str
    row_count: int
    originals: dict[str, OriginalData] = field(default_factory=dict)
    candidates: list[CandidateData] = field(default_factory=list)
    systems: list[str] = field(default_factory=list)


def parse_study_file(
    data: bytes,
    *,
    filename: str,
    fmt: str | None = None,
    max_bytes: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> ParsedStudyData:
    """Parse and validate a whole file; raise :class:`StudyImportError` listing every problem.

    ``progress`` is called with the number of rows read so far (every 1,000 rows).
    Nothing here touches the database.
    """
    if max_bytes is not None and len(data) > max_bytes:
        raise StudyImportError(
            filename,
            [ImportIssue(f"the file is {len(data):,} bytes; the limit is {max_bytes:,} (PARAEVAL_IMPORT_MAX_BYTES)")],
        )
    fmt = detect_format(filename, fmt)
    text = decode_utf8(data, filename)
    if not text.strip():
        raise StudyImportError(filename, [ImportIssue("the file is empty")])
    csv.field_size_limit(max(MAX_FIELD_CHARS * 4, 1_000_000))

    issues: list[ImportIssue] = []
    rows = iter_rows(text, fmt, filename, issues)
    columns = next(rows)
    header_line = 1  # in JSONL there is no header: column problems point at line 1
    colset = set(columns)
    missing = [c for c in REQUIRED if c not in colset]
    long_layout = "system" in colset or "candidate" in colset
    if long_layout:
        missing += [c for c in LONG_ONLY if c not in colset]
        unknown = [c for c in columns if c and c not in KNOWN]
        for c in unknown:
            issues.append(
                ImportIssue(
                    f"unknown column in the long layout (expected {', '.join(KNOWN)})", line=header_line, column=c
                )
            )
        systems_in_header: list[str] = []
    else:
        systems_in_header = [c for c in columns if c and c not in KNOWN]
        if not systems_in_header and columns:
            issues.append(
                ImportIssue(
                    "no system columns: use the long layout (original_id, original, system, candidate) "
                    "or the wide layout (original_id, original, <system>, <system>, …)",
                    line=header_line,
                )
            )
    for c in missing:
        issues.append(ImportIssue("required column is missing", line=header_line, column=c))
    if issues:
        raise StudyImportError(filename, issues)
    for name in systems_in_header:
        check_system_name(name, header_line, issues)

    parsed = ParsedStudyData(filename=filename, format=fmt, layout="long" if long_layout else "wide", row_count=0)
    seen_pairs: dict[tuple[str, str], int] = {}
    systems_seen: dict[str, None] = dict.fromkeys(systems_in_header)
    for n, (line, row) in enumerate(rows, start=1):
        parsed.row_count = n
        if progress and n % 1000 == 0:
            progress(n)
        if len(issues) >= MAX_ISSUES:
            break
        oid = row.get("original_id", "").strip()
        otext = row.get("original", "").strip()
        if not oid:
            issues.append(ImportIssue("empty original_id", line=line, column="original_id"))
            continue
        if len(oid) > MAX_NAME_CHARS:
            issues.append(ImportIssue(f"longer than {MAX_NAME_CHARS} characters", line=line, column="original_id"))
            continue
        if not otext:
            issues.append(ImportIssue("empty text", line=line, column="original"))
        _check_length(row, line, issues)
        extra = {k: row.get(k, "").strip() for k in OPTIONAL}
        if fmt == "jsonl" and long_layout:
            for key in row:
                if key not in KNOWN:
                    issues.append(
                        ImportIssue(
                            f"unknown field in the long layout (expected {', '.join(KNOWN)})", line=line, column=key
                        )
                    )
        prev = parsed.originals.get(oid)
        if prev is None:
            parsed.originals[oid] = OriginalData(
                oid, otext, extra["reference"], extra["group"], extra["document"], line, len(parsed.originals)
            )
        else:
            for col, new, old in (
                ("original", otext, prev.text),
                ("reference", extra["reference"], prev.reference),
                ("group", extra["group"], prev.group),
                ("document", extra["document"], prev.document),
            ):
                if new != old:
                    issues.append(
                        ImportIssue(
                            f"original_id '{oid}' has a different {col} here than on line {prev.line}",
                            line=line,
                            column=col,
                        )
                    )
            if not long_layout:
                issues.append(
                    ImportIssue(
                        f"original_id '{oid}' already appeared on line {prev.line}", line=line, column="original_id"
                    )
                )
                continue
        if long_layout:
            pairs = [(row.get("system", "").strip(), row.get("candidate", "").strip(), "candidate")]
            if not pairs[0][0]:
                issues.append(ImportIssue("empty system name", line=line, column="system"))
                continue
            if pairs[0][0] not in systems_seen:
                if check_system_name(pairs[0][0], line, issues):
                    systems_seen[pairs[0][0]] = None
        else:
            if fmt == "jsonl":
                for key in row:
                    if key not in KNOWN and key not in systems_seen:
                        if check_system_name(key, line, issues):
                            systems_seen[key] = None
            pairs = [(s, row.get(s, "").strip(), s) for s in systems_seen]
        for system, ctext, col in pairs:
            if not ctext:
                issues.append(ImportIssue(f"empty text for system '{system}'", line=line, column=col))
                continue
            key = (oid, system)
            if key in seen_pairs:
                issues.append(
                    ImportIssue(
                        f"duplicate candidate: original '{oid}' and system '{system}' already appeared on line {seen_pairs[key]}",
                        line=line,
                        column=col,
                    )
                )
                continue
            seen_pairs[key] = line
            parsed.candidates.append(CandidateData(oid, system, ctext, line))
    if parsed.row_count == 0 and not issues:
        issues.append(ImportIssue("no data rows after the header"))
    if issues:
        raise StudyImportError(filename, issues)
    parsed.systems = list(systems_seen)
    return parsed


def _check_length(row: dict[str, str], line: int, issues: list[ImportIssue]) -> None:
    for col, value in row.items():
        if len(value) > MAX_FIELD_CHARS:
            issues.append(
                ImportIssue(
                    f"{len(value):,} characters; a text may have at most {MAX_FIELD_CHARS:,}", line=line, column=col
                )
            )
