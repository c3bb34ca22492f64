"""CSV (one table) and JSON (the whole report, with what it was built from)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence

from django.utils import timezone

from ..models import Report
from .cells import iso
from .model import ReportTable

EXPORT_SCHEMA = "paraeval.report/1"


def table_csv(table: ReportTable) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table.csv_header())
    writer.writerows(table.csv_rows())
    return out.getvalue()


def report_json(report: Report, *, plots: Sequence[Mapping] | None = None, stale: Mapping | None = None) -> dict:
    """The whole report: what it was built from (settings, fingerprint, excluded judges,
    metric runs with signatures, library versions) and every number (``result``)."""
    from .. import selectors

    if plots is None:
        plots = selectors.report_plot_list(report=report)
    return {
        "schema": EXPORT_SCHEMA,
        "study": {"id": report.study_id, "name": report.study.name},
        "report": {
            "id": report.pk,
            "status": report.status,
            "created_at": iso(report.created_at),
            "started_at": iso(report.started_at),
            "finished_at": iso(report.finished_at),
            "created_by": report.created_by.username if report.created_by_id and report.created_by else None,
            "settings": report.settings,
            "judgments_fingerprint": report.fingerprint,
            "excluded_judges": report.excluded_judges,
            "metric_runs": report.metric_runs,
            "build": report.build_info,
            "stale": dict(stale) if stale is not None else None,
            "exported_at": timezone.now().isoformat(),
        },
        "plots": [
            {"slug": p["slug"], "title": p["title"], "caption": p["caption"], "file": f"plots/{p['slug']}.svg"}
            for p in plots
        ],
        "result": report.result,
    }


def report_json_text(report: Report, **kwargs) -> str:
    return json.dumps(report_json(report, **kwargs), ensure_ascii=False, indent=1, allow_nan=False)
