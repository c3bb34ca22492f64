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
:mod:`._shared`. Import each name from the module that defines it; this package holds no names of its own.
"""
