# Over 400 lines: this session's feature work (protocols, screening, field studies, speed) landed here; splitting it along its seams is issue 17's remaining step, done once so code moves only once.
"""A finished report as tables, CSV, JSON, LaTeX, standalone HTML and a ZIP of all of it.

Every format is built from one list of :class:`ReportTable` (``report_tables``), so
the page, the CSV files, the LaTeX tables and the HTML file show the same numbers.
CSV cells hold full-precision numbers; text cells that a spreadsheet would read as
a formula (``=``, ``+``, ``-``, ``@``, tab, carriage return) get a leading ``'``.
LaTeX tables use booktabs (``\\usepackage{booktabs}``) and escape every special
character of the data. The HTML file embeds its styles and its figures (as
``data:`` URIs) and loads nothing from anywhere.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import math
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.text import slugify

from metrics.core.stats.results import CorrelationResult
from metrics.exports import neutralise_cell

from .models import Report, ReportPlot

EXPORT_SCHEMA = "paraeval.report/1"

# --- the tables -----------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """One column. ``kind``: text, int, r (a coefficient), p (a p-value), num, ci (a
    (low, high) pair: two CSV columns ``<key>_low``/``<key>_high``), bool.
    ``latex`` is the LaTeX header (math allowed); None leaves the column out of LaTeX."""

    key: str
    label: str
    kind: str = "text"
    latex: str | None = None


@dataclass(frozen=True)
class ReportTable:
    slug: str
    title: str
    caption: str
    columns: tuple[Column, ...]
    rows: list[dict[str, Any]] = field(default_factory=list)

    # CSV ---------------------------------------------------------------------------
    def csv_header(self) -> list[str]:
        out = []
        for c in self.columns:
            out.extend([f"{c.key}_low", f"{c.key}_high"] if c.kind == "ci" else [c.key])
        return out

    def csv_rows(self) -> Iterable[list[Any]]:
        for row in self.rows:
            cells: list[Any] = []
            for c in self.columns:
                value = row.get(c.key)
                if c.kind == "ci":
                    low, high = value if value else (None, None)
                    cells.extend([_csv_number(low), _csv_number(high)])
                elif c.kind in ("r", "p", "num"):
                    cells.append(_csv_number(value))
                elif c.kind == "int":
                    cells.append("" if value is None else int(value))
                elif c.kind == "bool":
                    cells.append("" if value is None else ("true" if value else "false"))
                else:
                    cells.append(neutralise_cell("" if value is None else str(value)))
            yield cells

    # page and HTML ----------------------------------------------------------------
    def display_rows(self) -> list[dict[str, Any]]:
        """Rows as ``{"cells": [{"text", "num"}], "class": str}`` for templates."""
        out = []
        for row in self.rows:
            cells = [{"text": format_cell(row.get(c.key), c.kind), "num": c.kind not in ("text", "bool")}
                     for c in self.columns]
            out.append({"cells": cells, "class": row.get("_class", "")})
        return out


def _csv_number(value: Any) -> Any:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return repr(float(value)) if isinstance(value, float) else value


def format_cell(value: Any, kind: str) -> str:
    """Human-readable text of one cell (3 decimals; p < .001 as ``<0.001``; ``—`` for missing)."""
    if kind == "ci":
        if not value or value[0] is None or value[1] is None:
            return "—"
        return f"[{value[0]:.3f}, {value[1]:.3f}]"
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if kind == "int":
        return f"{int(value)}"
    if kind == "p":
        return "<0.001" if value < 0.001 else f"{value:.3f}"
    if kind in ("r", "num"):
        return f"{value:.3f}"
    if kind == "bool":
        return "yes" if value else "no"
    return str(value)


def _stat(d: Mapping | None, key: str = "statistic") -> Any:
    return None if not d else d.get(key)


def _fisher_ci(d: Mapping | None, level: float) -> tuple[float | None, float | None] | None:
    """The correlation's Fisher-z interval (``CorrelationResult.confidence_interval``)."""
    if not d or d.get("statistic") is None:
        return None
    res = CorrelationResult(statistic=d["statistic"], pvalue=d.get("pvalue"), n=int(d.get("n") or 0),
                            method=d.get("method", "pearson"), ci_low=d.get("ci_low"), ci_high=d.get("ci_high"))
    low, high = res.confidence_interval(level)
    return (None if math.isnan(low) else low, None if math.isnan(high) else high)


def _pct(level: float) -> str:
    return f"{level * 100:g} %"


def report_tables(result: Mapping[str, Any]) -> list[ReportTable]:
    """The report's tables in page order (Table 3 and the leaderboard only with metrics)."""
    if result.get("protocol") == "comparison":
        from .comparison import comparison_tables  # a side-by-side study's report

        return comparison_tables(result)
    st = result.get("settings", {})
    level = float(st.get("confidence_level", 0.95))
    target = st.get("criterion", "overall")
    ci = _pct(level)
    tables = [_table1(result, level, ci, target), _table2(result, level, ci, target)]
    if result.get("table3"):
        tables.append(_table3(result, level, ci, target))
    tables += [*agreement_tables(result), _judge_qc(result), _ranking(result, ci, target)]
    if result.get("metric_leaderboard"):
        tables.append(_leaderboard(result))
    if result.get("metric_meta_evaluation"):
        tables.append(_meta_evaluation(result))
    return tables


def agreement_tables(result: Mapping[str, Any]) -> list[ReportTable]:
    """The agreement tables (per criterion; per pair of judges) of a result dict with
    ``agreement``, ``summary.criteria`` and ``settings`` — the report's, and the
    ``agreement`` command's, so that both print the same table."""
    level = float((result.get("settings") or {}).get("confidence_level", 0.95))
    return [_agreement(result, _pct(level)), _agreement_pairs(result)]


def table_text(table: ReportTable) -> str:
    """A table as aligned plain text for a terminal: title, header, rows, caption."""
    header = [c.label for c in table.columns]
    body = [[format_cell(row.get(c.key), c.kind) for c in table.columns] for row in table.rows]
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(header)]
    numeric = [c.kind not in ("text", "bool") for c in table.columns]

    def line(cells):
        return "  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric)).rstrip()

    out = [table.title, line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in body] or ["(no rows)"]
    out.append(table.caption)
    return "\n".join(out) + "\n"


def _table1(result, level, ci, target) -> ReportTable:
    t1 = result.get("table1") or {}
    rows = []
    for p in t1.get("pairs", []):
        sent, sys_ = p.get("sentence", {}), p.get("system", {})
        rows.append({
            "judge_a": p["judges"][0], "judge_b": p["judges"][1], "n_shared": p.get("n_shared"),
            "sentence_pearson": _stat(sent.get("pearson")), "sentence_pearson_p": _stat(sent.get("pearson"), "pvalue"),
            "sentence_pearson_ci": _fisher_ci(sent.get("pearson"), level),
            "sentence_spearman": _stat(sent.get("spearman")), "sentence_kendall_b": _stat(sent.get("kendall_b")),
            "n_systems": _stat(sys_.get("pearson"), "n"),
            "system_pearson": _stat(sys_.get("pearson")), "system_pearson_p": _stat(sys_.get("pearson"), "pvalue"),
            "system_spearman": _stat(sys_.get("spearman")), "system_kendall_b": _stat(sys_.get("kendall_b")),
            "summarised": p.get("summarised", True),
        })
    mean = t1.get("mean_pearson") or {}
    summ = t1.get("summary") or {}
    min_shared = t1.get("min_shared")
    if rows:
        used = (summ.get("sentence") or {}).get("n_pairs")
        label = "weighted summary" if used is None else f"weighted summary ({used} of {len(rows)} pairs)"
        rows.append({"judge_a": label, "judge_b": "", "sentence_pearson": mean.get("sentence"),
                     "system_pearson": mean.get("system"), "_class": "mean-row"})
    rule = (f" The summary row is the Fisher-z mean weighted by n − 3 (n: shared items; systems at system level) "
            f"over the pairs sharing at least {min_shared} items; the others are listed, not summarised."
            if min_shared is not None else "")
    return ReportTable(
        "table1", "Table 1 — inter-judge correlation",
        f"Correlation between every two judges on {target}, controls excluded (PEM Table 1): sentence level over "
        f"the items both rated, system level over each judge's per-system means. CI: {ci} Fisher z.{rule}",
        (Column("judge_a", "Judge A", latex="Judge A"), Column("judge_b", "Judge B", latex="Judge B"),
         Column("n_shared", "Shared items", "int", latex="$n$"),
         Column("summarised", "In summary", "bool", latex="Sum."),
         Column("sentence_pearson", "Sentence r", "r", latex="$r$"),
         Column("sentence_pearson_p", "p", "p"),
         Column("sentence_pearson_ci", f"{ci} CI", "ci", latex="CI"),
         Column("sentence_spearman", "Sentence ρ", "r", latex="$\\rho$"),
         Column("sentence_kendall_b", "Sentence τb", "r", latex="$\\tau_b$"),
         Column("n_systems", "Systems", "int"),
         Column("system_pearson", "System r", "r", latex="sys.\\ $r$"),
         Column("system_pearson_p", "System p", "p"),
         Column("system_spearman", "System ρ", "r", latex="sys.\\ $\\rho$"),
         Column("system_kendall_b", "System τb", "r", latex="sys.\\ $\\tau_b$")),
        rows)


def _table2(result, level, ci, target) -> ReportTable:
    t2 = result.get("table2") or {}
    rows = []
    for r in t2.get("rows", []):
        sent, sys_ = r.get("sentence", {}), r.get("system", {})
        rows.append({
            "criterion": r["criterion"], "subset": r.get("subset"), "n_items": r.get("n_items"),
            "sentence_pearson": _stat(sent.get("pearson")), "sentence_pearson_p": _stat(sent.get("pearson"), "pvalue"),
            "sentence_pearson_ci": _fisher_ci(sent.get("pearson"), level),
            "sentence_spearman": _stat(sent.get("spearman")), "sentence_kendall_b": _stat(sent.get("kendall_b")),
            "n_systems": r.get("n_systems"),
            "system_pearson": _stat(sys_.get("pearson")), "system_pearson_p": _stat(sys_.get("pearson"), "pvalue"),
            "system_spearman": _stat(sys_.get("spearman")), "system_kendall_b": _stat(sys_.get("kendall_b")),
        })
    controls = "included at their expected scores" if t2.get("include_controls") else "excluded"
    return ReportTable(
        "table2", f"Table 2 — criteria vs {target}",
        f"Each criterion's human reference (mean of the judges) against {target}'s, at sentence and system level, "
        f"on all items and on the subset where the mean scores reach the thresholds (PEM Table 2); controls "
        f"{controls}. CI: {ci} Fisher z.",
        (Column("criterion", "Criterion", latex="Criterion"), Column("subset", "Items", latex="Items"),
         Column("n_items", "n", "int", latex="$n$"),
         Column("sentence_pearson", "Sentence r", "r", latex="$r$"), Column("sentence_pearson_p", "p", "p"),
         Column("sentence_pearson_ci", f"{ci} CI", "ci", latex="CI"),
         Column("sentence_spearman", "Sentence ρ", "r", latex="$\\rho$"),
         Column("sentence_kendall_b", "Sentence τb", "r", latex="$\\tau_b$"),
         Column("n_systems", "Systems", "int"),
         Column("system_pearson", "System r", "r", latex="sys.\\ $r$"), Column("system_pearson_p", "System p", "p"),
         Column("system_spearman", "System ρ", "r", latex="sys.\\ $\\rho$"),
         Column("system_kendall_b", "System τb", "r", latex="sys.\\ $\\tau_b$")),
        rows)


def _table3(result, level, ci, target) -> ReportTable:
    t3 = result.get("table3") or {}
    rows = []
    with_controls = {(r["metric"], r["level"]): r for r in t3.get("rows_with_controls") or []}
    for r in t3.get("rows", []):
        alt = with_controls.get((r["metric"], r["level"])) if r["human"] == "mean" else None
        rows.append({
            "pearson_with_controls": _stat((alt or {}).get("pearson")),
            "metric": r["metric"], "human": r["human"], "level": r["level"], "n": r.get("n"),
            "pearson": _stat(r.get("pearson")), "pearson_p": _stat(r.get("pearson"), "pvalue"),
            "pearson_ci": _fisher_ci(r.get("pearson"), level),
            "spearman": _stat(r.get("spearman")), "kendall_b": _stat(r.get("kendall_b")),
            "kendall_c": _stat(r.get("kendall_c")), "accuracy": _stat(r.get("accuracy")),
            "accuracy_tc": _stat(r.get("accuracy_tc")),
            "_class": "" if r["human"] == "mean" else "per-judge",
        })
    controls = "included at their expected scores" if t3.get("controls_in_mean") else "excluded"
    second = (" Column “r +controls”: the same against the human reference with the controls at their expected "
              "scores (PEM §5.2's convention), for comparison with the paper." if t3.get("rows_with_controls")
              else "")
    return ReportTable(
        "table3", f"Table 3 — metrics vs human {target}",
        f"Each metric against the human reference (mean of the judges; controls {controls}) and against each "
        f"judge (controls excluded), at segment and system level (PEM Table 3). Accuracy: pairwise ranking "
        f"accuracy with ties, pairs within an original; tie-calibrated: the same after treating metric scores "
        f"closer than the best threshold ε as ties (Deutsch et al. 2023). CI: {ci} Fisher z.{second}",
        (Column("metric", "Metric", latex="Metric"), Column("human", "Human", latex="Human"),
         Column("level", "Level", latex="Level"), Column("n", "n", "int", latex="$n$"),
         Column("pearson", "r", "r", latex="$r$"), Column("pearson_p", "p", "p"),
         Column("pearson_ci", f"{ci} CI", "ci", latex="CI"),
         Column("spearman", "ρ", "r", latex="$\\rho$"), Column("kendall_b", "τb", "r", latex="$\\tau_b$"),
         Column("kendall_c", "τc", "r", latex="$\\tau_c$"), Column("accuracy", "Accuracy", "r", latex="Acc."),
         Column("accuracy_tc", "Accuracy (tie-cal.)", "r", latex="Acc.$^*$"),
         Column("pearson_with_controls", "r +controls", "r", latex="$r_{+c}$")),
        rows)


_ALPHA_LABEL = {"nominal": "Krippendorff α (nominal)", "ordinal": "Krippendorff α (ordinal)",
                "interval": "Krippendorff α (interval)", "ratio": "Krippendorff α (ratio)"}


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
            rows.append({"criterion": crit, "coefficient": _ALPHA_LABEL.get(lvl, f"Krippendorff α ({lvl})"),
                         "statistic": res.get("statistic"), "ci": (res.get("ci_low"), res.get("ci_high")),
                         "pvalue": None, "n_items": res.get("n_items"), "n_judges": res.get("n_judges"),
                         "note": res.get("note") or ""})
        fk = a.get("fleiss_kappa")
        if fk:
            rows.append({"criterion": crit, "coefficient": "Fleiss κ", "statistic": fk.get("statistic"),
                         "ci": (fk.get("ci_low"), fk.get("ci_high")), "n_items": fk.get("n_items"),
                         "n_judges": fk.get("n_judges"), "note": fk.get("note") or ""})
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
                rows.append({"criterion": crit, "coefficient": res.get("form"), "statistic": res.get("statistic"),
                             "ci": (res.get("ci_low"), res.get("ci_high")), "pvalue": res.get("pvalue"),
                             "n_items": res.get("n_items"), "n_judges": res.get("n_judges"),
                             "note": "; ".join(n for n in note if n)})
        else:
            rows.append({"criterion": crit, "coefficient": "ICC", "note": a.get("icc_reason") or ""})
    n_boot = (result.get("settings") or {}).get("n_boot")
    return ReportTable(
        "agreement", "Agreement per criterion",
        f"Inter-judge agreement on genuine items (controls excluded): Krippendorff's α at four levels of "
        f"measurement (missing ratings allowed), Fleiss' κ (complete designs), intraclass correlations (Shrout & "
        f"Fleiss; p from their F test; complete-case analysis, items rated by every judge). CI: {ci} percentile "
        f"bootstrap over items, {n_boot} resamples, for α and κ; F-based (McGraw & Wong 1996) for the ICCs.",
        (Column("criterion", "Criterion", latex="Criterion"), Column("coefficient", "Coefficient", latex="Coefficient"),
         Column("statistic", "Value", "r", latex="Value"), Column("ci", f"{ci} CI", "ci", latex="CI"),
         Column("pvalue", "p", "p"), Column("n_items", "Items", "int", latex="Items"),
         Column("n_judges", "Judges", "int", latex="Judges"), Column("note", "Note")),
        rows)


def _agreement_pairs(result) -> ReportTable:
    rows = []
    for crit, a in _in_order(result.get("agreement"), _criteria(result)):
        pearson = {tuple(p["judges"]): p for p in a.get("pearson") or []}
        for k in a.get("cohen_kappa") or []:
            pair = tuple(k["judges"])
            pr = (pearson.get(pair) or {}).get("pearson") or {}
            rows.append({"criterion": crit, "judge_a": pair[0], "judge_b": pair[1], "n_shared": k.get("n_shared"),
                         "unweighted": _stat(k.get("unweighted")), "linear": _stat(k.get("linear")),
                         "quadratic": _stat(k.get("quadratic")), "pearson": pr.get("statistic"),
                         "pearson_p": pr.get("pvalue")})
    return ReportTable(
        "agreement_pairs", "Agreement per pair of judges",
        "Cohen's κ (unweighted, linear and quadratic weights) and Pearson's r for every two judges on the genuine "
        "items both rated.",
        (Column("criterion", "Criterion", latex="Criterion"), Column("judge_a", "Judge A", latex="Judge A"),
         Column("judge_b", "Judge B", latex="Judge B"), Column("n_shared", "Shared items", "int", latex="$n$"),
         Column("unweighted", "κ", "r", latex="$\\kappa$"), Column("linear", "κ linear", "r", latex="$\\kappa_{lin}$"),
         Column("quadratic", "κ quadratic", "r", latex="$\\kappa_{quad}$"), Column("pearson", "r", "r", latex="$r$"),
         Column("pearson_p", "p", "p")),
        rows)


def _judge_qc(result) -> ReportTable:
    qc = result.get("judge_qc") or []
    crits = (result.get("summary") or {}).get("criteria") or []
    rows = []
    for q in qc:
        mad = q.get("control_mad") or {}
        straight = q.get("straightlining") or {}
        failed = [t["name"] for t in q.get("tests") or [] if t.get("passed") is False]
        row = {"judge": q["judge"], "excluded": q.get("excluded"), "passed": q.get("passed"),
               "n_items": q.get("n_items"), "n_controls": q.get("n_controls"),
               "median_seconds": q.get("median_seconds"),
               "straightlining": max(straight.values()) if straight else None,
               "tests_failed": ", ".join(failed), "flags": "; ".join(q.get("flags") or []),
               "_class": "row-excluded" if q.get("excluded") else ("row-flagged" if not q.get("passed") else "")}
        for c in crits:
            row[f"mad_{c}"] = mad.get(c)
        rows.append(row)
    alpha = (result.get("settings") or {}).get("qc_alpha")
    columns = (
        (Column("judge", "Judge", latex="Judge"), Column("excluded", "Excluded", "bool", latex="Excl."),
         Column("passed", "Passed QC", "bool", latex="Passed"), Column("n_items", "Items", "int", latex="Items"),
         Column("n_controls", "Controls", "int", latex="Controls"))
        + tuple(Column(f"mad_{c}", f"MAD {c}", "num", latex=f"MAD {c[:4]}.") for c in crits)
        + (Column("median_seconds", "Median seconds", "num", latex="Med.\\ s"),
           Column("straightlining", "Max straight-lining", "num", latex="Straight."),
           Column("tests_failed", "Failed control tests"), Column("flags", "Flags")))
    return ReportTable(
        "judge_qc", "Judge quality control",
        f"Per judge (excluded judges included, but left out of every other table): mean absolute deviation (MAD) "
        f"of control scores from their expected scores, one-sided Mann–Whitney tests that known-bad controls are "
        f"rated below genuine candidates (α = {alpha}), median seconds per item, and the largest share of one "
        f"value on a criterion (straight-lining).",
        columns, rows)


def _ranking(result, ci, target) -> ReportTable:
    sr = result.get("system_ranking") or {}
    rows = [{"rank": s.get("rank"), "system": s.get("system"), "mean": s.get("mean"),
             "ci": (s.get("ci_low"), s.get("ci_high")), "n": s.get("n"), "cluster": s.get("cluster"),
             "pvalue_vs_next": s.get("pvalue_vs_next")} for s in sr.get("systems", [])]
    alpha = (result.get("settings") or {}).get("significance_level")
    return ReportTable(
        "system_ranking", f"System ranking on {target}",
        f"Genuine systems by mean human {target} with {ci} bootstrap CIs over originals; p: paired bootstrap "
        f"against the next system; a new cluster starts where that difference is significant (α = {alpha}).",
        (Column("rank", "Rank", "int", latex="Rank"), Column("system", "System", latex="System"),
         Column("mean", "Mean", "num", latex="Mean"), Column("ci", f"{ci} CI", "ci", latex="CI"),
         Column("n", "Originals", "int", latex="$n$"), Column("cluster", "Cluster", "int", latex="Cluster"),
         Column("pvalue_vs_next", "p vs next", "p", latex="$p$ vs next")),
        rows)


def _leaderboard(result) -> ReportTable:
    lb = result.get("metric_leaderboard") or {}
    alt = result.get("metric_leaderboard_with_controls") or {}
    alpha = (result.get("settings") or {}).get("significance_level")
    rows = []
    for level in ("segment", "system"):
        alt_rows = {r["metric"]: r for r in alt.get(level) or []}
        for r in lb.get(level) or []:
            a = alt_rows.get(r.get("metric")) or {}
            if r.get("williams_pvalue") is None and r.get("rank") == 1:
                verdict, cls = "best", "winner"
            elif r.get("significantly_worse"):
                verdict, cls = "significantly worse than the best", ""
            elif r.get("significantly_worse") is False:
                verdict, cls = "not significantly worse than the best", "winner"
            else:
                verdict, cls = "not tested", ""
            rows.append({"level": level, "rank": r.get("rank"), "metric": r.get("metric"),
                         "pearson": r.get("statistic"), "n": r.get("n"), "williams_pvalue": r.get("williams_pvalue"),
                         "marker": "*" if r.get("significantly_worse") else "", "verdict": verdict, "_class": cls,
                         "rank_with_controls": a.get("rank"), "pearson_with_controls": a.get("statistic")})
    return ReportTable(
        "metric_leaderboard", "Metric leaderboard",
        f"Every metric run by Pearson correlation with the human reference on genuine items (controls excluded), "
        f"per level; the last two columns rank the same metrics with the controls at their expected scores in the "
        f"reference (PEM §5.2's convention). Williams test (one-tailed) "
        f"that the best metric correlates better than this one; * marks p < {alpha}. Metrics not significantly "
        f"worse than the best form the winning group (bold in LaTeX).",
        (Column("level", "Level", latex="Level"), Column("rank", "Rank", "int", latex="Rank"),
         Column("metric", "Metric", latex="Metric"), Column("pearson", "r", "r", latex="$r$"),
         Column("n", "n", "int", latex="$n$"), Column("williams_pvalue", "Williams p vs best", "p",
                                                       latex="Williams $p$"),
         Column("marker", "", latex=""), Column("verdict", "Verdict"),
         Column("rank_with_controls", "Rank +controls", "int", latex="Rank$_{+c}$"),
         Column("pearson_with_controls", "r +controls", "r", latex="$r_{+c}$")),
        rows)


def _meta_evaluation(result) -> ReportTable:
    meta = result.get("metric_meta_evaluation") or {}
    base = (meta.get("segment") or {}).get("baseline")
    rows = []
    for level in ("segment", "system"):
        block = meta.get(level) or {}
        for r in block.get("rows") or []:
            rows.append({"level": level, "rank": r.get("rank"), "metric": r.get("metric"), "n": block.get("n"),
                         "pearson": r.get("pearson"), "spearman": r.get("spearman"), "kendall_b": r.get("kendall_b"),
                         "accuracy": r.get("accuracy"), "p_vs_best": r.get("p_vs_best"),
                         "p_vs_baseline": r.get("p_vs_baseline")})
    vs = (f" p vs {base}: the Williams test between this metric and {base}, H1 that the better-correlated of "
          "the two correlates better." if base else "")
    return ReportTable(
        "metric_meta_evaluation", "Metric meta-evaluation",
        "Every metric run against the mean human score on genuine items, per level: Pearson r, Spearman ρ, "
        "Kendall τb and pairwise accuracy (ties count; within each original at segment level). Williams test "
        f"(one-tailed, Pearson): p vs best, H1 that the best metric correlates better.{vs} The full matrix of "
        "Williams tests is in the JSON (metric_meta_evaluation.<level>.matrix).",
        (Column("level", "Level", latex="Level"), Column("rank", "Rank", "int", latex="Rank"),
         Column("metric", "Metric", latex="Metric"), Column("n", "n", "int", latex="$n$"),
         Column("pearson", "r", "r", latex="$r$"), Column("spearman", "ρ", "r", latex="$\\rho$"),
         Column("kendall_b", "τb", "r", latex="$\\tau_b$"), Column("accuracy", "Acc.", "r", latex="Acc."),
         Column("p_vs_best", "p vs best", "p", latex="$p_{best}$"),
         Column("p_vs_baseline", f"p vs {base}" if base else "p vs baseline", "p", latex="$p_{base}$")),
        rows)


def table_by_slug(result: Mapping[str, Any], slug: str) -> ReportTable:
    for t in report_tables(result):
        if t.slug == slug:
            return t
    raise KeyError(slug)


TABLE_SLUGS = ("table1", "table2", "table3", "agreement", "agreement_pairs", "judge_qc", "system_ranking",
               "metric_leaderboard", "metric_meta_evaluation")

# --- CSV --------------------------------------------------------------------------------


def table_csv(table: ReportTable) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table.csv_header())
    writer.writerows(table.csv_rows())
    return out.getvalue()


# --- LaTeX ------------------------------------------------------------------------------

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
    "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_LATEX_UNICODE = {"α": r"$\alpha$", "κ": r"$\kappa$", "ρ": r"$\rho$", "τ": r"$\tau$", "ε": r"$\varepsilon$", "σ": r"$\sigma$", "ω": r"$\omega$", "γ": r"$\gamma$", "—": "---", "–": "--",
                  "≥": r"$\geq$", "≤": r"$\leq$", "±": r"$\pm$", "×": r"$\times$", "−": "$-$"}


def warning_lines(result: Mapping[str, Any]) -> list[str]:
    """The report's findings as plain lines (LaTeX comments, ZIP README, CLIs), one per
    finding, on one line each (a LaTeX comment ends at a line break)."""
    found = result.get("warnings") or []
    if not found:
        return ["Findings: none."]
    lines = [f"Findings ({len(found)}):"]
    for w in found:
        lines.append(" ".join(f"{w['severity'].upper()} [{w['code']}] {w['message']}".split()))
    return lines


def latex_escape(text: str) -> str:
    """Text safe inside a LaTeX table cell or caption (every special character escaped)."""
    out = []
    for ch in str(text):
        out.append(_LATEX_SPECIAL.get(ch) or _LATEX_UNICODE.get(ch) or ch)
    return "".join(out)


def _latex_number(value: Any, kind: str) -> str:
    if kind == "ci":
        if not value or value[0] is None or value[1] is None:
            return "---"
        return f"[{_latex_number(value[0], 'r')}, {_latex_number(value[1], 'r')}]"
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "---"
    if kind == "int":
        return str(int(value))
    if kind == "p" and value < 0.001:
        return "$<$0.001"
    text = f"{value:.3f}"
    return f"$-${text[1:]}" if text.startswith("-") else text


# Text columns whose width follows the page: tabularx ``X`` columns, ragged right, so a
# long judge, metric or system name or a note wraps inside its cell instead of pushing
# the table off the page.  Short text columns (level, marker) stay ``l``.
_LATEX_SHORT_TEXT = {"level", "marker"}
# Tables with more LaTeX columns than this go on a landscape page (pdflscape), in
# \footnotesize with narrower column gaps: Table 1 has 14 columns, Table 3 twelve.
LATEX_LANDSCAPE_COLUMNS = 9
LATEX_PACKAGES = ("booktabs", "tabularx", "pdflscape")


def table_latex(table: ReportTable, *, label_prefix: str = "paraeval") -> str:
    """One table as a booktabs ``tabularx`` at the text width, so it fits an A4 or US
    letter page: text columns wrap (``X``), wide tables (more than
    ``LATEX_LANDSCAPE_COLUMNS`` columns) get a landscape page and a smaller font.
    Needs ``\\usepackage{booktabs,tabularx,pdflscape}``; the tests compile every
    table on both paper sizes and fail on any overfull box in pdflatex's log."""
    cols = [c for c in table.columns if c.latex is not None]
    wide = len(cols) > LATEX_LANDSCAPE_COLUMNS

    def spec_of(c: Column) -> str:
        if c.kind == "text" and c.key not in _LATEX_SHORT_TEXT:
            return ">{\\raggedright\\arraybackslash}X"
        if c.kind in ("text", "bool"):
            return "l"
        return "c" if c.kind == "ci" else "r"

    spec = "".join(spec_of(c) for c in cols)
    if "X" not in spec:  # tabularx needs one stretchable column: let the first one take the slack
        spec = ">{\\raggedright\\arraybackslash}X" + "".join(spec_of(c) for c in cols[1:])
    lines = [
        f"% {table.title} (paraeval). Needs \\usepackage{{booktabs,tabularx,pdflscape}}.",
    ]
    if wide:
        lines.append("\\begin{landscape}")
    lines += [
        "\\begin{table}[htbp]",
        "\\centering",
        "\\footnotesize" if wide else "\\small",
        "\\setlength{\\tabcolsep}{3pt}" if wide else "\\setlength{\\tabcolsep}{4pt}",
        f"\\caption{{{latex_escape(table.caption)}}}",
        f"\\label{{tab:{label_prefix}-{table.slug.replace('_', '-')}}}",
        f"\\begin{{tabularx}}{{\\linewidth}}{{{spec}}}",
        "\\toprule",
        " & ".join(c.latex for c in cols) + " \\\\",
        "\\midrule",
    ]
    if not table.rows:
        lines.append(f"\\multicolumn{{{len(cols)}}}{{l}}{{(no rows)}} \\\\")
    for row in table.rows:
        if row.get("_class") == "mean-row":
            lines.append("\\midrule")
        cells = []
        for c in cols:
            value = row.get(c.key)
            if c.kind in ("text",):
                cell = latex_escape("" if value is None else value)
            elif c.kind == "bool":
                cell = "" if value is None else ("yes" if value else "no")
            else:
                cell = _latex_number(value, c.kind)
            if row.get("_class") == "winner" and c.key in ("metric", "pearson") and cell:
                cell = f"\\textbf{{{cell}}}"
            cells.append(cell)
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabularx}", "\\end{table}"]
    if wide:
        lines.append("\\end{landscape}")
    lines.append("")
    return "\n".join(lines)


def report_latex(report: Report) -> str:
    """Every table of the report as a booktabs ``table`` environment, ready to paste."""
    tables = report_tables(report.result or {})
    # A comment line ends at a line break: keep the (researcher-typed) name on one line.
    name = " ".join(report.study.name.split())
    head = (f"% paraeval report #{report.pk} of study \"{name}\", built "
            f"{_iso(report.finished_at)}.\n% Judgments fingerprint {report.fingerprint}; settings "
            f"{json.dumps(report.settings, sort_keys=True)}.\n% Requires \\usepackage{{booktabs,tabularx,pdflscape}}.\n")
    head += "".join(f"% {line}\n" for line in warning_lines(report.result or {})) + "\n"
    return head + "\n".join(table_latex(t, label_prefix=f"paraeval-r{report.pk}") for t in tables)


# --- JSON -------------------------------------------------------------------------------


def _iso(dt) -> str | None:
    return dt.isoformat() if dt else None


def report_json(report: Report, *, plots: Sequence[Mapping] | None = None, stale: Mapping | None = None) -> dict:
    """The whole report: what it was built from (settings, fingerprint, excluded judges,
    metric runs with signatures, library versions) and every number (``result``)."""
    from . import selectors

    if plots is None:
        plots = selectors.report_plot_list(report=report)
    return {
        "schema": EXPORT_SCHEMA,
        "study": {"id": report.study_id, "name": report.study.name},
        "report": {
            "id": report.pk,
            "status": report.status,
            "created_at": _iso(report.created_at),
            "started_at": _iso(report.started_at),
            "finished_at": _iso(report.finished_at),
            "created_by": report.created_by.username if report.created_by_id and report.created_by else None,
            "settings": report.settings,
            "judgments_fingerprint": report.fingerprint,
            "excluded_judges": report.excluded_judges,
            "metric_runs": report.metric_runs,
            "build": report.build_info,
            "stale": dict(stale) if stale is not None else None,
            "exported_at": timezone.now().isoformat(),
        },
        "plots": [{"slug": p["slug"], "title": p["title"], "caption": p["caption"], "file": f"plots/{p['slug']}.svg"}
                  for p in plots],
        "result": report.result,
    }


def report_json_text(report: Report, **kwargs) -> str:
    return json.dumps(report_json(report, **kwargs), ensure_ascii=False, indent=1, allow_nan=False)


# --- standalone HTML --------------------------------------------------------------------


def svg_data_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def report_html(report: Report, *, plots: Sequence[ReportPlot] | None = None) -> str:
    """One self-contained HTML file: styles inline, figures as ``data:`` URIs, no external
    references, no script. Opens offline in any browser."""
    from . import selectors

    if plots is None:
        plots = selectors.report_plots(report=report)
    result = report.result or {}
    return render_to_string("reports/standalone.html", {
        "report": report,
        "study": report.study,
        "result": result,
        "summary": result.get("summary") or {},
        "tables": report_tables(result),
        "plots": [{"slug": p.slug, "title": p.title, "caption": p.caption, "src": svg_data_uri(p.svg)} for p in plots],
        "settings_json": json.dumps(report.settings, indent=1, sort_keys=True),
        "versions": (report.build_info or {}).get("versions") or result.get("versions") or {},
    })


# --- ZIP --------------------------------------------------------------------------------


def export_stem(report: Report) -> str:
    return f"{slugify(report.study.name) or 'study'}-report{report.pk}"


def report_zip(report: Report) -> bytes:
    """A ZIP of everything: ``report.json``, ``report.tex``, ``report.html``,
    ``tables/<table>.csv`` and ``plots/<figure>.svg``, in a folder named after the report."""
    from . import selectors

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
    readme = [f"paraeval report #{report.pk} of study \"{report.study.name}\"", "",
              "report.json  every number, with the settings, judgments fingerprint, excluded judges,",
              "             metric runs (with their signatures) and library versions",
              "report.tex   the tables for LaTeX (\\usepackage{booktabs})",
              "report.html  everything in one page, figures included (opens offline)", ""]
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

    from . import selectors

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
