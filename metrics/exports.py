"""CSV and JSON exports of a run's scores.

CSV text cells that a spreadsheet would read as a formula (starting with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return) get a leading ``'``
(OWASP's CSV-injection advice); numbers are written as numbers.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from metrics.core.spreadsheet import formula_safe

from .models import MetricRun
from .selectors import metric_export_rows

CSV_COLUMNS = ["item", "original_id", "system", "is_control", "original", "candidate", "score", "stats"]


def run_export_csv(*, run: MetricRun) -> str:
    """The run's scores as CSV text (header :data:`CSV_COLUMNS`; ``stats`` as a JSON list)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in metric_export_rows(run=run):
        cells = [
            row["item"],
            row["original_id"],
            row["system"],
            "true" if row["is_control"] else "false",
            row["original"],
            row["candidate"],
            "" if row["score"] is None else repr(float(row["score"])),
            json.dumps(row["stats"]),
        ]
        writer.writerow([formula_safe(c) if i in (1, 2, 4, 5) else c for i, c in enumerate(cells)])
    return out.getvalue()


def run_export_json(*, run: MetricRun) -> dict[str, Any]:
    """The run with its scores: ``{"run": {...}, "scores": [...]}`` (JSON-able)."""
    return {
        "run": {
            "id": run.pk,
            "study": run.study_id,
            "metric": run.metric,
            "params": run.params,
            "against": run.against,
            "signature": run.signature,
            "status": run.status,
            "corpus_score": run.corpus_score,
            "ci_low": run.ci_low,
            "ci_high": run.ci_high,
            "confidence": run.confidence,
            "n": run.n,
            "corpus_n": run.corpus_n,
            "systems": run.system_scores,
        },
        "scores": metric_export_rows(run=run),
    }
