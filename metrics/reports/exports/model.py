"""The table model every export is built from: :class:`Column`, :class:`ReportTable`,
cell formatting, and a table as aligned plain text (for the command line)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from metrics.core.spreadsheet import formula_safe
from metrics.core.stats.results import P_FLOOR


@dataclass(frozen=True)
class Column:
    """One column. ``kind``: text, int, r (a coefficient), p (a p-value), num, ci (a
    (low, high) pair: two CSV columns ``<key>_low``/``<key>_high``), bool.
    ``latex`` is the LaTeX header (math allowed); None leaves the column out of LaTeX."""

    key: str
    label: str
    kind: str = "text"
    latex: str | None = None


@dataclass(frozen=True)
class ReportTable:
    slug: str
    title: str
    caption: str
    columns: tuple[Column, ...]
    rows: list[dict[str, Any]] = field(default_factory=list)

    # CSV ---------------------------------------------------------------------------
    def csv_header(self) -> list[str]:
        out = []
        for c in self.columns:
            out.extend([f"{c.key}_low", f"{c.key}_high"] if c.kind == "ci" else [c.key])
        return out

    def csv_rows(self) -> Iterable[list[Any]]:
        for row in self.rows:
            cells: list[Any] = []
            for c in self.columns:
                value = row.get(c.key)
                if c.kind == "ci":
                    low, high = value if value else (None, None)
                    cells.extend([_csv_number(low), _csv_number(high)])
                elif c.kind == "p" and _underflowed(value):
                    # scipy's 0.0 means "below what a double holds", not zero: say so.
                    cells.append(f"<{P_FLOOR:.0e}")
                elif c.kind in ("r", "p", "num"):
                    cells.append(_csv_number(value))
                elif c.kind == "int":
                    cells.append("" if value is None else int(value))
                elif c.kind == "bool":
                    cells.append("" if value is None else ("true" if value else "false"))
                else:
                    cells.append(formula_safe("" if value is None else str(value)))
            yield cells

    # page and HTML ----------------------------------------------------------------
    def display_rows(self) -> list[dict[str, Any]]:
        """Rows as ``{"cells": [{"text", "num"}], "class": str}`` for templates."""
        out = []
        for row in self.rows:
            cells = [
                {"text": format_cell(row.get(c.key), c.kind), "num": c.kind not in ("text", "bool")}
                for c in self.columns
            ]
            out.append({"cells": cells, "class": row.get("_class", "")})
        return out


def _underflowed(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and 0 <= value < P_FLOOR


def _csv_number(value: Any) -> Any:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return repr(float(value)) if isinstance(value, float) else value


def format_cell(value: Any, kind: str) -> str:
    """Human-readable text of one cell (3 decimals; p < .001 as ``<0.001``; ``—`` for missing)."""
    if kind == "ci":
        if not value or value[0] is None or value[1] is None:
            return "—"
        return f"[{value[0]:.3f}, {value[1]:.3f}]"
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if kind == "int":
        return f"{int(value)}"
    if kind == "p":
        return "<0.001" if value < 0.001 else f"{value:.3f}"
    if kind in ("r", "num"):
        return f"{value:.3f}"
    if kind == "bool":
        return "yes" if value else "no"
    return str(value)


def table_text(table: ReportTable) -> str:
    """A table as aligned plain text for a terminal: title, header, rows, caption."""
    header = [c.label for c in table.columns]
    body = [[format_cell(row.get(c.key), c.kind) for c in table.columns] for row in table.rows]
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(header)]
    numeric = [c.kind not in ("text", "bool") for c in table.columns]

    def line(cells):
        return "  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric)).rstrip()

    out = [table.title, line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in body] or ["(no rows)"]
    out.append(table.caption)
    return "\n".join(out) + "\n"
