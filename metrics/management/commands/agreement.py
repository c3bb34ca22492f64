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
from pathlib import Path

import numpy as np
import pandas as pd
from django.core.management.base import BaseCommand, CommandError

from metrics.core.stats.agreement import criterion_agreement
from metrics.core.stats.data import RatingMatrix
from metrics.core.stats.results import jsonable

DEFAULT_CRITERION = "score"


def read_table(path: str) -> pd.DataFrame:
    """Read a CSV/TSV file chosen by extension; ``CommandError`` on any failure."""
    suffix = Path(path).suffix.lower()
    if suffix in (".tsv", ".tab"):
        sep = "\t"
    elif suffix == ".csv":
        sep = ","
    else:
        raise CommandError(f"{path}: unknown file type {suffix or '(none)'!r}; use .csv or .tsv")
    try:
        frame = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_values=[""])
    except FileNotFoundError:
        raise CommandError(f"cannot read {path}: no such file") from None
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise CommandError(f"cannot read {path}: {str(exc).splitlines()[0]}") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    if frame.empty:
        raise CommandError(f"{path}: no data rows")
    return frame


def require_columns(frame: pd.DataFrame, columns, path: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise CommandError(f"{path}: missing column(s) {', '.join(missing)} (found: {', '.join(frame.columns)})")


def numeric_column(frame: pd.DataFrame, column: str, path: str) -> np.ndarray:
    """The column as floats (empty cells → NaN); ``CommandError`` naming a bad cell."""
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = values.isna() & frame[column].notna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise CommandError(f"{path}: column {column!r} is not numeric (row {row + 2}: {frame[column].iloc[row]!r})")
    return values.to_numpy(dtype=float)


def _fmt(x) -> str:
    return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.4f}"


class Command(BaseCommand):
    help = "Inter-judge agreement of a judge,item,score[,criterion] CSV/TSV: Krippendorff, Fleiss, Cohen, Pearson."

    def add_arguments(self, parser):
        parser.add_argument("--input", required=True, help="CSV/TSV with columns judge,item,score[,criterion]")
        parser.add_argument("--n-boot", type=int, default=0, help="bootstrap resamples for α's 95%% CI (default 0: none)")
        parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **opts):
        path = opts["input"]
        if opts["n_boot"] < 0:
            raise CommandError("--n-boot must be at least 0")
        frame = read_table(path)
        require_columns(frame, ("judge", "item", "score"), path)
        scores = numeric_column(frame, "score", path)
        criterion = frame["criterion"].astype(str) if "criterion" in frame.columns else DEFAULT_CRITERION
        tidy = pd.DataFrame(
            {"judge": frame["judge"].astype(str), "item": frame["item"].astype(str), "criterion": criterion, "score": scores}
        ).dropna(subset=["score"])
        dup = tidy.duplicated(["judge", "item", "criterion"])
        if dup.any():
            row = tidy.loc[dup].iloc[0]
            raise CommandError(f"{path}: judge {row['judge']!r} scored item {row['item']!r} twice")
        if tidy.empty:
            raise CommandError(f"{path}: no scores")

        out = {}
        for name, rows in tidy.groupby("criterion", sort=True):
            wide = rows.pivot(index="judge", columns="item", values="score").sort_index().sort_index(axis=1)
            matrix = RatingMatrix(wide.to_numpy(dtype=float), tuple(wide.index), tuple(wide.columns))
            res = criterion_agreement(matrix, str(name), n_boot=opts["n_boot"], seed=opts["seed"])
            entry = {
                "n_items": res.n_items,
                "n_judges": res.n_judges,
                "krippendorff_alpha": {lvl: r.statistic for lvl, r in res.krippendorff_alpha.items()},
                "fleiss_kappa": None if res.fleiss_kappa is None else res.fleiss_kappa.statistic,
                "fleiss_kappa_reason": res.fleiss_kappa_reason,
                "cohen_kappa": [
                    {"judges": [p.judge_a, p.judge_b], "n": p.n_shared,
                     **{w: r.statistic for w, r in p.results.items()}}
                    for p in res.cohen_kappa
                ],
                "pearson": [
                    {"judges": [p.judge_a, p.judge_b], "n": p.n_shared,
                     "statistic": p.results["pearson"].statistic, "pvalue": p.results["pearson"].pvalue}
                    for p in res.pearson
                ],
            }
            if opts["n_boot"]:
                entry["krippendorff_alpha_ci"] = {
                    lvl: [r.ci_low, r.ci_high] for lvl, r in res.krippendorff_alpha.items()
                }
            out[str(name)] = jsonable(entry)

        if opts["json"]:
            self.stdout.write(json.dumps(out, indent=2, allow_nan=False))
            return
        for name, entry in out.items():
            self.stdout.write(f"criterion {name}: {entry['n_items']} items, {entry['n_judges']} judges")
            alpha = entry["krippendorff_alpha"]
            line = "  Krippendorff's alpha  " + "  ".join(f"{lvl} {_fmt(alpha[lvl])}" for lvl in alpha)
            if "krippendorff_alpha_ci" in entry:
                lo, hi = entry["krippendorff_alpha_ci"]["interval"]
                line += f"  (interval 95% CI {_fmt(lo)}–{_fmt(hi)})"
            self.stdout.write(line)
            if entry["fleiss_kappa"] is not None:
                self.stdout.write(f"  Fleiss' kappa         {_fmt(entry['fleiss_kappa'])}")
            else:
                self.stdout.write(f"  Fleiss' kappa         n/a: {entry['fleiss_kappa_reason']}")
            for p in entry["cohen_kappa"]:
                a, b = p["judges"]
                self.stdout.write(
                    f"  Cohen's kappa {a} vs {b} (n={p['n']}): unweighted {_fmt(p['unweighted'])}  "
                    f"linear {_fmt(p['linear'])}  quadratic {_fmt(p['quadratic'])}"
                )
            for p in entry["pearson"]:
                a, b = p["judges"]
                self.stdout.write(f"  Pearson {a} vs {b} (n={p['n']}): r {_fmt(p['statistic'])}  p {_fmt(p['pvalue'])}")
