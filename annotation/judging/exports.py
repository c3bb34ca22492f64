"""CSV output that spreadsheets cannot turn into formulas.

A cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return)
is run as a formula by Excel, LibreOffice and Google Sheets ("CSV injection",
OWASP). Paraphrase texts are written by other people, so every text cell that
starts with one of those is prefixed with ``'``, which spreadsheets show as text.
Numbers are written as numbers (scores and seconds are never negative; a z-score may
be, and is passed as a float, never as text).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: object) -> object:
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def csv_lines(rows: Iterable[list]) -> Iterator[str]:
    """Encode rows as CSV lines (RFC 4180 quoting, ``\\r\\n``), neutralising formulas."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    for row in rows:
        writer.writerow([csv_safe(v) for v in row])
        yield buf.getvalue()
        buf.seek(0)
        buf.truncate()
