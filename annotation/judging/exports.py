"""CSV output that spreadsheets cannot turn into formulas.

Paraphrase texts are written by other people, so every text cell that starts like a
formula is prefixed with ``'`` (:func:`metrics.core.spreadsheet.formula_safe`, the rule
of every CSV export). Numbers are written as numbers (scores and seconds are never
negative; a z-score may be, and is passed as a float, never as text).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator

from metrics.core.spreadsheet import formula_safe


def csv_lines(rows: Iterable[list]) -> Iterator[str]:
    """Encode rows as CSV lines (RFC 4180 quoting, ``\\r\\n``), neutralising formulas."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    for row in rows:
        writer.writerow([formula_safe(v) for v in row])
        yield buf.getvalue()
        buf.seek(0)
        buf.truncate()
