"""``manage.py correlate``: correlation of metric columns with a human column.

    python manage.py correlate --input FILE --human COL --metric COL [--metric COL ...] [--json]

FILE is CSV (``.csv``) or TSV (``.tsv``/``.tab``) with a header, the columns
``system`` and ``item`` and numeric score columns.  For each ``--metric`` prints
Pearson, Spearman and Kendall τ-b with the ``--human`` column at ``segment`` level
(every row with both scores) and ``system`` level (per-system means over those
rows), and for each pair of metrics the one-tailed Williams test (Williams 1959;
Graham & Baldwin 2014) that the metric with the higher segment-level Pearson r
correlates better (over rows where all three scores are present).

``--json`` prints ``{"human", "n_rows", "metrics": {name: {"segment": {"pearson":
{"statistic", "pvalue", "n"}, "spearman": …, "kendall_b": …}, "system": {…}}},
"williams": [{"metrics": [a, b], "better": a, "n", "statistic", "williams_pvalue"}]}``.
Bad input gives a one-line error and a non-zero exit status.  No database is needed.
"""

from __future__ import annotations

import json
import math
from itertools import combinations
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from metrics.core.stats.correlation import segment_and_system
from metrics.core.stats.results import format_pvalue, jsonable
from metrics.core.stats.significance import williams_test_scores

from .agreement import numeric_column, read_table, require_columns

METHODS = ("pearson", "spearman", "kendall_b")


def _fmt(x) -> str:
    return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.4f}"


class Command(BaseCommand):
    help = "Correlate metric columns with a human column at segment and system level, with Williams tests."

    def add_arguments(self, parser):
        parser.add_argument("--input", required=True, help="CSV/TSV with columns system, item and numeric scores")
        parser.add_argument("--human", required=True, help="the human score column")
        parser.add_argument("--metric", required=True, action="append", help="a metric column (repeatable)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **opts):
        path, human = opts["input"], opts["human"]
        metrics = list(dict.fromkeys(opts["metric"]))
        if human in metrics:
            raise CommandError(f"--human column {human!r} is also given as --metric")
        frame = read_table(path)
        require_columns(frame, ["system", "item", human, *metrics], path)
        h = numeric_column(frame, human, path)
        scores = {m: numeric_column(frame, m, path) for m in metrics}
        systems = frame["system"].astype(str).to_numpy()

        # metric -> level -> method -> {"statistic": float, "pvalue": float | None, "n": int}
        per_metric: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
        for m in metrics:
            levels = segment_and_system(h, scores[m], systems, methods=METHODS)
            per_metric[m] = {
                level: {k: {"statistic": r.statistic, "pvalue": r.pvalue, "n": r.n} for k, r in res.items()}
                for level, res in levels.items()
            }
        williams = []
        for a, b in combinations(metrics, 2):
            ra = per_metric[a]["segment"]["pearson"]["statistic"]
            rb = per_metric[b]["segment"]["pearson"]["statistic"]
            better, worse = (a, b) if not (np.isfinite(rb) and (not np.isfinite(ra) or rb > ra)) else (b, a)
            entry = {"metrics": [a, b], "better": better, "n": None, "statistic": None, "williams_pvalue": None}
            try:
                res = williams_test_scores(h, scores[better], scores[worse])
                entry.update(n=res.n, statistic=res.statistic, williams_pvalue=res.pvalue)
            except ValueError as exc:
                entry["error"] = str(exc)
            williams.append(entry)
        out = jsonable({"human": human, "n_rows": int(len(frame)), "metrics": per_metric, "williams": williams})

        if opts["json"]:
            self.stdout.write(json.dumps(out, indent=2, allow_nan=False))
            return
        self.stdout.write(f"{human} vs metrics, {len(frame)} rows")
        for m, levels in out["metrics"].items():
            for level, res in levels.items():
                n = res["pearson"]["n"]
                cells = "  ".join(
                    f"{k} {_fmt(v['statistic'])} (p {format_pvalue(v['pvalue'])})" for k, v in res.items()
                )
                self.stdout.write(f"  {m:<20s} {level:<8s} n={n:<6d} {cells}")
        for w in out["williams"]:
            a, b = w["metrics"]
            worse = b if w["better"] == a else a
            note = w.get("error") or f"t {_fmt(w['statistic'])}  p {format_pvalue(w['williams_pvalue'])}"
            self.stdout.write(f"  Williams: {w['better']} better than {worse}? {note}")
