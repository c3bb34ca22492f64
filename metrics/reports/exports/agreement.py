"""The agreement tables (per criterion, per pair of judges) and the judge quality-control table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from metrics.reports.exports.columns import CRITERION, PEARSON, PVALUE, ci_column

from .cells import pct, stat
from .model import Column, ReportTable


def agreement_tables(result: Mapping[str, Any]) -> list[ReportTable]:
    """The agreement tables (per criterion; per pair of judges) of a result dict with
    ``agreement``, ``summary.criteria`` and ``settings`` — the report's, and the
    ``agreement`` command's, so that both print the same table."""
    level = float((result.get("settings") or {}).get("confidence_level", 0.95))
    return [_agreement(result, pct(level)), _agreement_pairs(result)]


_ALPHA_LABEL = {
    "nominal": "Krippendorff α (nominal)",
    "ordinal": "Krippendorff α (ordinal)",
    "interval": "Krippendorff α (interval)",
    "ratio": "Krippendorff α (ratio)",
}


def _in_order(mapping: Mapping | None, order: Sequence[str]) -> list[tuple[str, Any]]:
    """Items of ``mapping`` in ``order`` first, then the rest sorted: PostgreSQL's jsonb
    does not keep key order, and the tables must read the same on every database."""
    mapping = mapping or {}
    keys = [k for k in order if k in mapping] + sorted(k for k in mapping if k not in order)
    return [(k, mapping[k]) for k in keys]


_ALPHA_LEVELS = ("nominal", "ordinal", "interval", "ratio")
_ICC_FORMS = ("ICC(1,1)", "ICC(2,1)", "ICC(3,1)", "ICC(1,k)", "ICC(2,k)", "ICC(3,k)")


def _criteria(result) -> list[str]:
    return list((result.get("summary") or {}).get("criteria") or [])


def _agreement(result, ci) -> ReportTable:
    rows = []
    for crit, a in _in_order(result.get("agreement"), _criteria(result)):
        for lvl, res in _in_order(a.get("krippendorff_alpha"), _ALPHA_LEVELS):
            rows.append(
                {
                    "criterion": crit,
                    "coefficient": _ALPHA_LABEL.get(lvl, f"Krippendorff α ({lvl})"),
                    "statistic": res.get("statistic"),
                    "ci": (res.get("ci_low"), res.get("ci_high")),
                    "pvalue": None,
                    "n_items": res.get("n_items"),
                    "n_judges": res.get("n_judges"),
                    "note": res.get("note") or "",
                }
            )
        fk = a.get("fleiss_kappa")
        if fk:
            rows.append(
                {
                    "criterion": crit,
                    "coefficient": "Fleiss κ",
                    "statistic": fk.get("statistic"),
                    "ci": (fk.get("ci_low"), fk.get("ci_high")),
                    "n_items": fk.get("n_items"),
                    "n_judges": fk.get("n_judges"),
                    "note": fk.get("note") or "",
                }
            )
        else:
            rows.append({"criterion": crit, "coefficient": "Fleiss κ", "note": a.get("fleiss_kappa_reason") or ""})
        icc = a.get("icc")
        if icc:
            for _, res in _in_order(icc, _ICC_FORMS):
                note = [res.get("note") or ""]
                total = res.get("n_items_total")
                if total is not None and total != res.get("n_items"):
                    note.append(f"complete-case: {res.get('n_items')} of {total} items")
                if res.get("judges_left_out"):
                    note.append(f"without {', '.join(res['judges_left_out'])}")
                rows.append(
                    {
                        "criterion": crit,
                        "coefficient": res.get("form"),
                        "statistic": res.get("statistic"),
                        "ci": (res.get("ci_low"), res.get("ci_high")),
                        "pvalue": res.get("pvalue"),
                        "n_items": res.get("n_items"),
                        "n_judges": res.get("n_judges"),
                        "note": "; ".join(n for n in note if n),
                    }
                )
        else:
            rows.append({"criterion": crit, "coefficient": "ICC", "note": a.get("icc_reason") or ""})
    n_boot = (result.get("settings") or {}).get("n_boot")
    return ReportTable(
        "agreement",
        "Agreement per criterion",
        f"Inter-judge agreement on genuine items (controls excluded): Krippendorff's α at four levels of "
        f"measurement (missing ratings allowed), Fleiss' κ (complete designs), intraclass correlations (Shrout & "
        f"Fleiss; p from their F test; complete-case analysis, items rated by every judge). CI: {ci} percentile "
        f"bootstrap over items, {n_boot} resamples, for α and κ; F-based (McGraw & Wong 1996) for the ICCs.",
        (
            CRITERION,
            Column("coefficient", "Coefficient", latex="Coefficient"),
            Column("statistic", "Value", "r", latex="Value"),
            ci_column(ci),
            PVALUE,
            Column("n_items", "Items", "int", latex="Items"),
            Column("n_judges", "Judges", "int", latex="Judges"),
            Column("note", "Note"),
        ),
        rows,
    )


def _agreement_pairs(result) -> ReportTable:
    rows = []
    for crit, a in _in_order(result.get("agreement"), _criteria(result)):
        pearson = {tuple(p["judges"]): p for p in a.get("pearson") or []}
        for k in a.get("cohen_kappa") or []:
            pair = tuple(k["judges"])
            pr = (pearson.get(pair) or {}).get("pearson") or {}
            rows.append(
                {
                    "criterion": crit,
                    "judge_a": pair[0],
                    "judge_b": pair[1],
                    "n_shared": k.get("n_shared"),
                    "unweighted": stat(k.get("unweighted")),
                    "linear": stat(k.get("linear")),
                    "quadratic": stat(k.get("quadratic")),
                    "pearson": pr.get("statistic"),
                    "pearson_p": pr.get("pvalue"),
                }
            )
    return ReportTable(
        "agreement_pairs",
        "Agreement per pair of judges",
        "Cohen's κ (unweighted, linear and quadratic weights) and Pearson's r for every two judges on the genuine "
        "items both rated.",
        (
            CRITERION,
            Column("judge_a", "Judge A", latex="Judge A"),
            Column("judge_b", "Judge B", latex="Judge B"),
            Column("n_shared", "Shared items", "int", latex="$n$"),
            Column("unweighted", "κ", "r", latex="$\\kappa$"),
            Column("linear", "κ linear", "r", latex="$\\kappa_{lin}$"),
            Column("quadratic", "κ quadratic", "r", latex="$\\kappa_{quad}$"),
            PEARSON,
            Column("pearson_p", "p", "p"),
        ),
        rows,
    )


def judge_qc_table(result) -> ReportTable:
    qc = result.get("judge_qc") or []
    crits = (result.get("summary") or {}).get("criteria") or []
    rows = []
    for q in qc:
        mad = q.get("control_mad") or {}
        straight = q.get("straightlining") or {}
        failed = [t["name"] for t in q.get("tests") or [] if t.get("passed") is False]
        row = {
            "judge": q["judge"],
            "excluded": q.get("excluded"),
            "passed": q.get("passed"),
            "n_items": q.get("n_items"),
            "n_controls": q.get("n_controls"),
            "median_seconds": q.get("median_seconds"),
            "straightlining": max(straight.values()) if straight else None,
            "tests_failed": ", ".join(failed),
            "flags": "; ".join(q.get("flags") or []),
            "_class": "row-excluded" if q.get("excluded") else ("row-flagged" if not q.get("passed") else ""),
        }
        for c in crits:
            row[f"mad_{c}"] = mad.get(c)
        rows.append(row)
    alpha = (result.get("settings") or {}).get("qc_alpha")
    columns = (
        (
            Column("judge", "Judge", latex="Judge"),
            Column("excluded", "Excluded", "bool", latex="Excl."),
            Column("passed", "Passed QC", "bool", latex="Passed"),
            Column("n_items", "Items", "int", latex="Items"),
            Column("n_controls", "Controls", "int", latex="Controls"),
        )
        + tuple(Column(f"mad_{c}", f"MAD {c}", "num", latex=f"MAD {c[:4]}.") for c in crits)
        + (
            Column("median_seconds", "Median seconds", "num", latex="Med.\\ s"),
            Column("straightlining", "Max straight-lining", "num", latex="Straight."),
            Column("tests_failed", "Failed control tests"),
            Column("flags", "Flags"),
        )
    )
    return ReportTable(
        "judge_qc",
        "Judge quality control",
        f"Per judge (excluded judges included, but left out of every other table): mean absolute deviation (MAD) "
        f"of control scores from their expected scores, one-sided Mann–Whitney tests that known-bad controls are "
        f"rated below genuine candidates (α = {alpha}), median seconds per item, and the largest share of one "
        f"value on a criterion (straight-lining).",
        columns,
        rows,
    )
