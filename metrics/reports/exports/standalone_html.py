"""The standalone HTML file: styles inline, figures as ``data:`` URIs, nothing loaded from anywhere."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence

from django.template.loader import render_to_string

from ..models import Report, ReportPlot
from .tables import report_tables


def svg_data_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def report_html(report: Report, *, plots: Sequence[ReportPlot] | None = None) -> str:
    """One self-contained HTML file: styles inline, figures as ``data:`` URIs, no external
    references, no script. Opens offline in any browser."""
    from .. import selectors

    if plots is None:
        plots = selectors.report_plots(report=report)
    result = report.result or {}
    return render_to_string(
        "reports/standalone.html",
        {
            "report": report,
            "study": report.study,
            "result": result,
            "summary": result.get("summary") or {},
            "tables": report_tables(result),
            "plots": [
                {"slug": p.slug, "title": p.title, "caption": p.caption, "src": svg_data_uri(p.svg)} for p in plots
            ],
            "settings_json": json.dumps(report.settings, indent=1, sort_keys=True),
            "versions": (report.build_info or {}).get("versions") or result.get("versions") or {},
        },
    )
