"""``manage.py agreement``: inter-judge agreement of any ratings file.

    python manage.py agreement --input FILE [--n-boot N] [--seed S] [--json]

FILE is CSV (``.csv``) or TSV (``.tsv``/``.tab``) with a header and the columns
``judge``, ``item``, ``score`` and optionally ``criterion``; without a
``criterion`` column all scores belong to one criterion named ``score``.  For each
criterion prints Krippendorff's α (nominal, ordinal, interval), Fleiss' κ when every
item has the same number of ratings (else the reason it is missing), Cohen's κ for
every pair of judges (unweighted, linear, quadratic) and their Pearson r.  With
``--n-boot N`` α also gets a 95 % percentile-bootstrap interval over items.

``--json`` prints one object keyed by criterion name, each with ``n_items``,
``n_judges``, ``krippendorff_alpha`` ``{"nominal", "ordinal", "interval"}``,
``fleiss_kappa`` (number or null) and ``fleiss_kappa_reason``, and the lists
``cohen_kappa`` (``{"judges": [a, b], "n", "unweighted", "linear", "quadratic"}``)
and ``pearson`` (``{"judges": [a, b], "n", "statistic", "pvalue"}``).  Bad input
gives a one-line error and a non-zero exit status.  No database is needed.  Thin
wrapper over ``metrics.core.stats.agreement``.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from django.core.management.base import BaseCommand, CommandError

from metrics.core import tabular
from metrics.core.stats.agreement.criterion import criterion_agreement
from metrics.core.stats.data import RatingMatrix
from metrics.core.stats.interjudge import interjudge_summary
from metrics.core.stats.results import jsonable
from metrics.core.stats.warnings import report_warnings

DEFAULT_CRITERION = "score"


def read_table(path: str) -> pd.DataFrame:
    """Read a CSV, TSV or JSON Lines file (by extension) through the shared reader
    (:mod:`metrics.core.tabular`: CSV quoted, TSV raw, JSONL split on "\\n" only).

    Values are strings (JSON numbers become their text); the frame's ``attrs["lines"]``
    holds each row's line in the file, for error messages.  ``CommandError`` naming
    file, line and column on any failure.
    """
    try:
        table = tabular.read_table_file(path)
    except tabular.TabularError as exc:
        msg = str(exc)
        if "cannot tell the format" in msg:
            msg = f"{path}: unknown file type {Path(path).suffix or '(none)'!r}; use .csv, .tsv or .jsonl"
        elif msg.endswith(": no such file"):
            msg = f"cannot read {path}: no such file"
        raise CommandError(msg.replace("\n", "; ")) from None
    records = []
    for line, row in table.rows:
        clean = {}
        for key, value in row.items():
            if isinstance(value, (dict, list, bool)):
                raise CommandError(f"{path}, line {line}, column '{key}': must be a string or a number")
            clean[key] = None if value is None or value == "" else str(value)
        records.append(clean)
    frame = pd.DataFrame.from_records(records, columns=table.columns)
    frame = frame.astype(object).where(frame.notna(), None)
    frame.attrs["lines"] = [line for line, _ in table.rows]
    frame.attrs["path"] = path
    return frame


def require_columns(frame: pd.DataFrame, columns, path: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise CommandError(f"{path}: missing column(s) {', '.join(missing)} (found: {', '.join(frame.columns)})")


def numeric_column(frame: pd.DataFrame, column: str, path: str) -> np.ndarray:
    """The column as floats (empty cells → NaN); ``CommandError`` naming a bad cell's
    line and column."""
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = values.isna() & frame[column].notna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        lines = frame.attrs.get("lines") or []
        line = lines[row] if row < len(lines) else row + 2
        raise CommandError(f"{path}, line {line}, column '{column}': not numeric ({frame[column].iloc[row]!r})")
    return values.to_numpy(dtype=float)


def _summary_lines(name: str, entry: dict, min_shared: int) -> list[str]:
    s = entry["pearson_summary"]
    head = f"{name}: Pearson r between judges, weighted summary ({s['weights']}, pairs sharing >= {min_shared} items): "
    lines = [
        head
        + (
            f"{_fmt(s['statistic'])} over {s['n_pairs']} of {s['n_pairs_listed']} pairs"
            if s["n_pairs"]
            else f"n/a ({s['note']})"
        )
    ]
    below = entry["pairs_below_min_shared"]
    if below:
        lines.append(f"  pairs below min_shared, listed and not summarised ({len(below)}):")
        lines += [f"    {p['judges'][0]} – {p['judges'][1]}: {p['reason']}" for p in below]
    return lines


def _fmt(x) -> str:
    return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.4f}"


class Command(BaseCommand):
    help = "Inter-judge agreement of a judge,item,score[,criterion] CSV/TSV: Krippendorff, Fleiss, Cohen, Pearson."

    def add_arguments(self, parser):
        parser.add_argument("--input", required=True, help="CSV/TSV with columns judge,item,score[,criterion]")
        parser.add_argument(
            "--n-boot", type=int, default=0, help="bootstrap resamples for α's 95%% CI (default 0: none)"
        )
        parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument(
            "--min-shared",
            type=int,
            default=30,
            help="items two judges must share for their pair to enter the weighted summary, and "
            "every judge for an ICC (default 30, as the report)",
        )
        parser.add_argument(
            "--scale",
            help="the rating scale, e.g. 1-5 (or 1,2,3,4,5): weighted κ weighs distances "
            "on it, not on the values observed (default: the values observed)",
        )

    @staticmethod
    def _scale(text: str | None) -> list[float] | None:
        if not text:
            return None
        try:
            if "," in text:
                values = sorted({float(v) for v in text.split(",")})
            else:
                low, sep, high = text.partition("-")
                if not sep or int(low) >= int(high):
                    raise ValueError
                values = [float(v) for v in range(int(low), int(high) + 1)]
        except ValueError:
            raise CommandError(f"--scale {text}: write LOW-HIGH (e.g. 1-5) or the values, e.g. 0,1,2") from None
        if len(values) < 2:
            raise CommandError(f"--scale {text}: a scale needs at least two values")
        return values

    def handle(self, *args, **opts):
        path = opts["input"]
        if opts["n_boot"] < 0:
            raise CommandError("--n-boot must be at least 0")
        if opts["min_shared"] < 4:
            raise CommandError("--min-shared must be at least 4")
        scale = self._scale(opts["scale"])
        frame = read_table(path)
        require_columns(frame, ("judge", "item", "score"), path)
        scores = numeric_column(frame, "score", path)
        criterion = frame["criterion"].astype(str) if "criterion" in frame.columns else DEFAULT_CRITERION
        tidy = pd.DataFrame(
            {
                "judge": frame["judge"].astype(str),
                "item": frame["item"].astype(str),
                "criterion": criterion,
                "score": scores,
            }
        ).dropna(subset=["score"])
        dup = tidy.duplicated(["judge", "item", "criterion"])
        if dup.any():
            row = tidy.loc[dup].iloc[0]
            raise CommandError(f"{path}: judge {row['judge']!r} scored item {row['item']!r} twice")
        if tidy.empty:
            raise CommandError(f"{path}: no scores")
        if scale is not None:
            off = tidy.loc[~tidy["score"].isin(scale)]
            if len(off):
                row = off.iloc[0]
                raise CommandError(
                    f"{path}: judge {row['judge']!r} gave item {row['item']!r} the score "
                    f"{row['score']:g}, which is not on --scale {opts['scale']}"
                )

        out = {}
        blocks = {}
        for name, rows in tidy.groupby("criterion", sort=True):
            wide = rows.pivot(index="judge", columns="item", values="score").sort_index().sort_index(axis=1)
            matrix = RatingMatrix(wide.to_numpy(dtype=float), tuple(wide.index), tuple(wide.columns))
            res = criterion_agreement(
                matrix,
                str(name),
                n_boot=opts["n_boot"],
                seed=opts["seed"],
                min_shared=opts["min_shared"],
                scale=scale,
                scale_type="points" if scale is not None else None,
            )
            blocks[str(name)] = res.to_dict()
            # The report's Table 1 summary (one code path): Fisher-z mean weighted by n - 3 over the
            # pairs sharing >= min_shared items; the others are listed apart with the reason. A ratings
            # file has no systems: only the sentence (item) level is read.
            summary, flags = interjudge_summary(
                [replace(p, results={"sentence": p.results, "system": p.results}) for p in res.pearson],
                min_shared=opts["min_shared"],
            )
            pearson_summary = dict(summary["sentence"])
            entry = {
                "n_items": res.n_items,
                "n_judges": res.n_judges,
                "krippendorff_alpha": {lvl: r.statistic for lvl, r in res.krippendorff_alpha.items()},
                "fleiss_kappa": None if res.fleiss_kappa is None else res.fleiss_kappa.statistic,
                "fleiss_kappa_reason": res.fleiss_kappa_reason,
                "icc": None if res.icc is None else {f: r.to_dict() for f, r in res.icc.items()},
                "icc_reason": res.icc_reason,
                "cohen_kappa": [
                    {
                        "judges": [p.judge_a, p.judge_b],
                        "n": p.n_shared,
                        **{w: r.statistic for w, r in p.results.items()},
                    }
                    for p in res.cohen_kappa
                ],
                "scale": scale,
                "pearson_summary": pearson_summary,
                "pearson": [
                    {
                        "judges": [p.judge_a, p.judge_b],
                        "n": p.n_shared,
                        "statistic": p.results["pearson"].statistic,
                        "pvalue": p.results["pearson"].pvalue,
                        **flag,
                    }
                    for p, flag in zip(res.pearson, flags)
                ],
                "pairs_below_min_shared": [
                    {"judges": [p.judge_a, p.judge_b], "n": p.n_shared, "reason": flag["reason"]}
                    for p, flag in zip(res.pearson, flags)
                    if not flag["summarised"]
                ],
            }
            if opts["n_boot"]:
                entry["krippendorff_alpha_ci"] = {
                    lvl: [r.ci_low, r.ci_high] for lvl, r in res.krippendorff_alpha.items()
                }
            out[str(name)] = jsonable(entry)
        # The report's agreement section, built by the same functions as the report's
        # page and exports (one code path): the same table, the same findings.
        result = jsonable(
            {
                "summary": {"criteria": list(blocks)},
                "settings": {"n_boot": opts["n_boot"], "confidence_level": 0.95, "min_shared": opts["min_shared"]},
                "agreement": blocks,
            }
        )
        found = report_warnings(result)
        for name in out:
            out[name]["warnings"] = [w for w in found if w["subject"] == name]

        if opts["json"]:
            self.stdout.write(json.dumps(out, indent=2, allow_nan=False))
            return
        from metrics.reports.exports.agreement import agreement_tables
        from metrics.reports.exports.latex import warning_lines
        from metrics.reports.exports.model import table_text

        for table in agreement_tables(result):
            self.stdout.write(table_text(table))
        for name, entry in out.items():
            self.stdout.write(self._summary_text(name, entry, opts["min_shared"]))
        for line in warning_lines({"warnings": found}):
            self.stdout.write(line)

    @staticmethod
    def _summary_text(name: str, entry: dict, min_shared: int) -> str:
        return "\n".join(_summary_lines(name, entry, min_shared))
