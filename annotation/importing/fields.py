"""Reading the fields of a row, for every parser (study files, judgments, and the protocols' own
files: ESA spans and proposals, rankings): rows of any format as dicts, and the checks of a
system name, a judge name and a number."""

from __future__ import annotations

import math

from .reading import MAX_NAME_CHARS, RESERVED_SYSTEM_PREFIX, ImportIssue, csv_records, jsonl_objects


def iter_rows(text: str, fmt: str, filename: str, issues: list[ImportIssue]):
    """Yield (line, dict column->value); first yields the list of columns."""
    if fmt == "jsonl":
        columns: list[str] = []
        rows = []
        for lineno, obj in jsonl_objects(text, issues):
            row = {}
            for key, value in obj.items():
                if value is None:
                    value = ""
                if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                    issues.append(ImportIssue("must be a string", line=lineno, column=str(key)))
                    value = ""
                row[str(key).strip()] = str(value)
                if str(key).strip() not in columns:
                    columns.append(str(key).strip())
            rows.append((lineno, row))
        yield columns
        yield from rows
        return

    delimiter = "," if fmt == "csv" else "\t"
    records = csv_records(text, delimiter, filename)
    try:
        header_line, header = next(records)
    except StopIteration:
        yield []
        return
    header = [h.strip() for h in header]
    for idx, name in enumerate(header):
        if not name:
            issues.append(ImportIssue(f"header cell {idx + 1} is empty; every column needs a name", line=header_line))
    seen = set()
    for name in header:
        if name and name in seen:
            issues.append(ImportIssue("appears twice in the header", line=header_line, column=name))
        seen.add(name)
    yield header
    for line, row in records:
        if len(row) != len(header):
            issues.append(ImportIssue(f"has {len(row)} fields but the header has {len(header)}", line=line))
            continue
        yield line, dict(zip(header, row))


def check_system_name(name: str, line: int, issues: list[ImportIssue]) -> bool:
    if name.lower().startswith(RESERVED_SYSTEM_PREFIX):
        issues.append(
            ImportIssue(
                f"system names starting with '{RESERVED_SYSTEM_PREFIX}' are reserved for paraeval's controls",
                line=line,
                column=name,
            )
        )
        return False
    if len(name) > MAX_NAME_CHARS:
        issues.append(ImportIssue(f"system name longer than {MAX_NAME_CHARS} characters", line=line, column=name[:40]))
        return False
    return True


def finite_number(value, low: float, high: float | None) -> float | None:
    """``value`` as a float when it is a JSON number (not a bool) in [low, high] (no upper
    bound when ``high`` is None), else None: NaN and infinities, which Python's JSON reader
    accepts, are refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float
        return None
    if not math.isfinite(number) or number < low or (high is not None and number > high):
        return None
    return number


def valid_judge_name(judge, max_chars: int) -> bool:
    """A judge name is 1–``max_chars`` letters, digits or ``@ . + - _`` (as in judgments files)."""
    return isinstance(judge, str) and 0 < len(judge) <= max_chars and all(ch.isalnum() or ch in "@.+-_" for ch in judge)


def short_repr(value, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters, for messages that quote a bad value
    (a hostile file must not turn each message into megabytes)."""
    text = (
        repr(value)
        if not isinstance(value, (list, dict)) or len(value) < 20
        else f"<{type(value).__name__} of {len(value)}>"
    )
    return text if len(text) <= limit else text[: limit - 1] + "…"
