"""Every export at once: a ZIP (the download) or files in a directory (the ``report`` command)."""

from __future__ import annotations

import io
import zipfile

from django.utils import timezone
from django.utils.text import slugify

from ..models import Report
from .csv_json import report_json_text, table_csv
from .latex import report_latex, warning_lines
from .standalone_html import report_html
from .tables import report_tables


def export_stem(report: Report) -> str:
    return f"{slugify(report.study.name) or 'study'}-report{report.pk}"


def report_zip(report: Report) -> bytes:
    """A ZIP of everything: ``report.json``, ``report.tex``, ``report.html``,
    ``tables/<table>.csv`` and ``plots/<figure>.svg``, in a folder named after the report."""
    from .. import selectors

    plots = selectors.report_plots(report=report)
    plot_list = [{"slug": p.slug, "title": p.title, "caption": p.caption} for p in plots]
    stem = export_stem(report)
    stamp = (report.finished_at or timezone.now()).timetuple()[:6]
    files: list[tuple[str, bytes]] = [
        ("report.json", report_json_text(report, plots=plot_list).encode("utf-8")),
        ("report.tex", report_latex(report).encode("utf-8")),
        ("report.html", report_html(report, plots=plots).encode("utf-8")),
    ]
    tables = report_tables(report.result or {})
    files += [(f"tables/{t.slug}.csv", table_csv(t).encode("utf-8")) for t in tables]
    files += [(f"plots/{p.slug}.svg", p.svg.encode("utf-8")) for p in plots]
    readme = [
        f'paraeval report #{report.pk} of study "{report.study.name}"',
        "",
        "report.json  every number, with the settings, judgments fingerprint, excluded judges,",
        "             metric runs (with their signatures) and library versions",
        "report.tex   the tables for LaTeX (\\usepackage{booktabs})",
        "report.html  everything in one page, figures included (opens offline)",
        "",
    ]
    readme += warning_lines(report.result or {}) + [""]
    readme += [f"tables/{t.slug}.csv  {t.title}" for t in tables]
    readme += [f"plots/{p.slug}.svg  {p.title}" for p in plots]
    files.insert(0, ("README.txt", ("\n".join(readme) + "\n").encode("utf-8")))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files:
            info = zipfile.ZipInfo(f"{stem}/{name}", date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return buf.getvalue()


def report_write_all(report: Report, directory) -> list[str]:
    """Write every export into ``directory`` (the ``report`` command). Returns the paths."""
    from pathlib import Path

    from .. import selectors

    out = Path(directory)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    plots = selectors.report_plots(report=report)
    plot_list = [{"slug": p.slug, "title": p.title, "caption": p.caption} for p in plots]
    written = []

    def write(name: str, data: bytes) -> None:
        path = out / name
        path.write_bytes(data)
        written.append(str(path))

    write("report.json", report_json_text(report, plots=plot_list).encode("utf-8"))
    write("report.tex", report_latex(report).encode("utf-8"))
    write("report.html", report_html(report, plots=plots).encode("utf-8"))
    for t in report_tables(report.result or {}):
        write(f"tables/{t.slug}.csv", table_csv(t).encode("utf-8"))
    for p in plots:
        write(f"plots/{p.slug}.svg", p.svg.encode("utf-8"))
    write(f"{export_stem(report)}.zip", report_zip(report))
    return written
