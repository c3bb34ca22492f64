"""LaTeX: one table as a booktabs ``tabularx`` that fits the page, and the whole report.

Every special character of the data is escaped; the report's findings become comments.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from ..models import Report
from .cells import iso
from .model import Column, ReportTable
from .tables import report_tables

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_LATEX_UNICODE = {
    "α": r"$\alpha$",
    "κ": r"$\kappa$",
    "ρ": r"$\rho$",
    "τ": r"$\tau$",
    "ε": r"$\varepsilon$",
    "σ": r"$\sigma$",
    "μ": r"$\mu$",
    "ω": r"$\omega$",
    "γ": r"$\gamma$",
    "—": "---",
    "–": "--",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "±": r"$\pm$",
    "×": r"$\times$",
    "−": "$-$",
}


def warning_lines(result: Mapping[str, Any]) -> list[str]:
    """The report's findings as plain lines (LaTeX comments, ZIP README, CLIs), one per
    finding, on one line each (a LaTeX comment ends at a line break)."""
    found = result.get("warnings") or []
    if not found:
        return ["Findings: none."]
    lines = [f"Findings ({len(found)}):"]
    for w in found:
        lines.append(" ".join(f"{w['severity'].upper()} [{w['code']}] {w['message']}".split()))
    return lines


def latex_escape(text: str) -> str:
    """Text safe inside a LaTeX table cell or caption (every special character escaped)."""
    out = []
    for ch in str(text):
        out.append(_LATEX_SPECIAL.get(ch) or _LATEX_UNICODE.get(ch) or ch)
    return "".join(out)


def _latex_number(value: Any, kind: str) -> str:
    if kind == "ci":
        if not value or value[0] is None or value[1] is None:
            return "---"
        return f"[{_latex_number(value[0], 'r')}, {_latex_number(value[1], 'r')}]"
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "---"
    if kind == "int":
        return str(int(value))
    if kind == "p" and value < 0.001:
        return "$<$0.001"
    text = f"{value:.3f}"
    return f"$-${text[1:]}" if text.startswith("-") else text


# Text columns whose width follows the page: tabularx ``X`` columns, ragged right, so a
# long judge, metric or system name or a note wraps inside its cell instead of pushing
# the table off the page.  Short text columns (level, marker) stay ``l``.
_LATEX_SHORT_TEXT = {"level", "marker"}
# Tables with more LaTeX columns than this go on a landscape page (pdflscape), in
# \footnotesize with narrower column gaps: Table 1 has 14 columns, Table 3 twelve.
LATEX_LANDSCAPE_COLUMNS = 9
LATEX_PACKAGES = ("booktabs", "tabularx", "pdflscape")


def table_latex(table: ReportTable, *, label_prefix: str = "paraeval") -> str:
    """One table as a booktabs ``tabularx`` at the text width, so it fits an A4 or US
    letter page: text columns wrap (``X``), wide tables (more than
    ``LATEX_LANDSCAPE_COLUMNS`` columns) get a landscape page and a smaller font.
    Needs ``\\usepackage{booktabs,tabularx,pdflscape}``; the tests compile every
    table on both paper sizes and fail on any overfull box in pdflatex's log."""
    cols = [c for c in table.columns if c.latex is not None]
    wide = len(cols) > LATEX_LANDSCAPE_COLUMNS

    def spec_of(c: Column) -> str:
        if c.kind == "text" and c.key not in _LATEX_SHORT_TEXT:
            return ">{\\raggedright\\arraybackslash}X"
        if c.kind in ("text", "bool"):
            return "l"
        return "c" if c.kind == "ci" else "r"

    spec = "".join(spec_of(c) for c in cols)
    if "X" not in spec:  # tabularx needs one stretchable column: let the first one take the slack
        spec = ">{\\raggedright\\arraybackslash}X" + "".join(spec_of(c) for c in cols[1:])
    lines = [
        f"% {table.title} (paraeval). Needs \\usepackage{{booktabs,tabularx,pdflscape}}.",
    ]
    if wide:
        lines.append("\\begin{landscape}")
    lines += [
        "\\begin{table}[htbp]",
        "\\centering",
        "\\footnotesize" if wide else "\\small",
        "\\setlength{\\tabcolsep}{3pt}" if wide else "\\setlength{\\tabcolsep}{4pt}",
        f"\\caption{{{latex_escape(table.caption)}}}",
        f"\\label{{tab:{label_prefix}-{table.slug.replace('_', '-')}}}",
        f"\\begin{{tabularx}}{{\\linewidth}}{{{spec}}}",
        "\\toprule",
        " & ".join(c.latex for c in cols if c.latex is not None) + " \\\\",  # every one of cols
        "\\midrule",
    ]
    if not table.rows:
        lines.append(f"\\multicolumn{{{len(cols)}}}{{l}}{{(no rows)}} \\\\")
    for row in table.rows:
        if row.get("_class") == "mean-row":
            lines.append("\\midrule")
        cells = []
        for c in cols:
            value = row.get(c.key)
            if c.kind in ("text",):
                cell = latex_escape("" if value is None else value)
            elif c.kind == "bool":
                cell = "" if value is None else ("yes" if value else "no")
            else:
                cell = _latex_number(value, c.kind)
            if row.get("_class") == "winner" and c.key in ("metric", "pearson") and cell:
                cell = f"\\textbf{{{cell}}}"
            cells.append(cell)
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabularx}", "\\end{table}"]
    if wide:
        lines.append("\\end{landscape}")
    lines.append("")
    return "\n".join(lines)


def report_latex(report: Report) -> str:
    """Every table of the report as a booktabs ``table`` environment, ready to paste."""
    tables = report_tables(report.result or {})
    # A comment line ends at a line break: keep the (researcher-typed) name on one line.
    name = " ".join(report.study.name.split())
    head = (
        f'% paraeval report #{report.pk} of study "{name}", built '
        f"{iso(report.finished_at)}.\n% Judgments fingerprint {report.fingerprint}; settings "
        f"{json.dumps(report.settings, sort_keys=True)}.\n% Requires \\usepackage{{booktabs,tabularx,pdflscape}}.\n"
    )
    head += "".join(f"% {line}\n" for line in warning_lines(report.result or {})) + "\n"
    return head + "\n".join(table_latex(t, label_prefix=f"paraeval-r{report.pk}") for t in tables)
