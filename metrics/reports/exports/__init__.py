"""A finished report as tables, CSV, JSON, LaTeX, standalone HTML and a ZIP of all of it.

Every format is built from one list of :class:`ReportTable` (``report_tables``), so
the page, the CSV files, the LaTeX tables and the HTML file show the same numbers.
CSV cells hold full-precision numbers; text cells that a spreadsheet would read as
a formula (``=``, ``+``, ``-``, ``@``, tab, carriage return) get a leading ``'``.
LaTeX tables use booktabs (``\\usepackage{booktabs}``) and escape every special
character of the data. The HTML file embeds its styles and its figures (as
``data:`` URIs) and loads nothing from anywhere.

Layout
------
The tables: :mod:`.model` (:class:`Column`, :class:`ReportTable`, cell formatting, plain
text), one module a family of tables (:mod:`.pem_tables`: PEM Tables 1–3;
:mod:`.agreement`: agreement and judge QC; :mod:`.rankings`: systems, metric leaderboard
and meta-evaluation) and :mod:`.tables` (all of them in page order, by slug). The
formats: :mod:`.csv_json`, :mod:`.latex`, :mod:`.standalone_html`, and :mod:`.bundle`
(the ZIP and the ``report`` command's directory). Helpers they share are in
:mod:`._shared`. Every public name is re-exported here, so
``from metrics.reports import exports`` and ``exports.table_csv(...)`` keep working.
"""

from __future__ import annotations

from .agreement import agreement_tables
from .bundle import export_stem, report_write_all, report_zip
from .csv_json import EXPORT_SCHEMA, report_json, report_json_text, table_csv
from .latex import LATEX_LANDSCAPE_COLUMNS, LATEX_PACKAGES, latex_escape, report_latex, table_latex, warning_lines
from .model import Column, ReportTable, format_cell, table_text
from .standalone_html import report_html, svg_data_uri
from .tables import TABLE_SLUGS, report_tables, table_by_slug

__all__ = [
    "EXPORT_SCHEMA",
    "LATEX_LANDSCAPE_COLUMNS",
    "LATEX_PACKAGES",
    "TABLE_SLUGS",
    "Column",
    "ReportTable",
    "agreement_tables",
    "export_stem",
    "format_cell",
    "latex_escape",
    "report_html",
    "report_json",
    "report_json_text",
    "report_latex",
    "report_tables",
    "report_write_all",
    "report_zip",
    "svg_data_uri",
    "table_by_slug",
    "table_csv",
    "table_latex",
    "table_text",
    "warning_lines",
]
