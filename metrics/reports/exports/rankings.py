"""Ranking tables: the systems by human score, the metric leaderboard and the metric meta-evaluation."""

from __future__ import annotations

from .model import Column, ReportTable


def ranking_table(result, ci, target) -> ReportTable:
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


def leaderboard_table(result) -> ReportTable:
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


def meta_evaluation_table(result) -> ReportTable:
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
