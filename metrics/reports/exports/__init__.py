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
text), what cells are made of (:mod:`.cells`), the agreement and judge-QC tables of
numeric judgments (:mod:`.agreement`, which the ``agreement`` command prints too) and
:mod:`.tables` (a report's tables in page order, as the protocol that built it draws them:
each protocol's ``report.py`` has its own; the absolute protocol's PEM Tables 1–3 and ranking
tables are ``annotation.judging.protocols.absolute.pem_tables`` and ``.ranking_tables``). The
formats: :mod:`.csv_json`, :mod:`.latex`, :mod:`.standalone_html`, and :mod:`.bundle`
(the ZIP and the ``report`` command's directory). Import each name from the module that defines it; this package holds no names of its own.
"""
