"""Ranking tables: the systems by human score, the metric leaderboard and the metric meta-evaluation."""

from __future__ import annotations

from metrics.core.stats.human_ceiling import CEILING_MARGIN
from metrics.reports.exports.columns import (
    CRITERION,
    KENDALL_B,
    LEVEL,
    METRIC,
    PEARSON,
    PEARSON_WITH_CONTROLS,
    RANK,
    SPEARMAN,
    SYSTEM,
    N,
    ci_column,
)
from metrics.reports.exports.model import Column, ReportTable


def _z_block(result, criterion) -> dict | None:
    """The report's z-scores of one criterion (``system_scores``), None when it has none."""
    for block in (result.get("system_scores") or {}).get("criteria") or []:
        if block.get("criterion") == criterion:
            return block
    return None


def _undefined_note(block) -> str:
    """Which judges have no z on the criterion, and why (a sentence; empty when none)."""
    names = block.get("undefined_judges") or []
    if not names:
        return ""
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    return (
        f" z is undefined for {len(names)} judge{'s' if len(names) != 1 else ''} on {block['criterion']} "
        f"({shown}: fewer than two genuine scores, or all equal); their scores count in the raw mean only."
    )


def ranking_table(result, ci, target) -> ReportTable:
    sr = result.get("system_ranking") or {}
    z = _z_block(result, target)
    z_of = {r.get("system"): r.get("z") for r in (z or {}).get("systems") or []}
    rows = [
        {
            "rank": s.get("rank"),
            "system": s.get("system"),
            "mean": s.get("mean"),
            "mean_z": z_of.get(s.get("system")),
            "ci": (s.get("ci_low"), s.get("ci_high")),
            "n": s.get("n"),
            "cluster": s.get("cluster"),
            "pvalue_vs_next": s.get("pvalue_vs_next"),
        }
        for s in sr.get("systems", [])
    ]
    alpha = (result.get("settings") or {}).get("significance_level")
    # Human scores normalised to z: the mean already is WMT's z (one definition in the report,
    # issue 42), so no second column of it; raw scores: WMT's z beside them.
    normalized = (result.get("settings") or {}).get("normalize") == "z"
    mean_col = (
        Column("mean", "Mean z", "num", latex="Mean $z$") if normalized else Column("mean", "Mean", "num", latex="Mean")
    )
    z_cols = (Column("mean_z", "Mean z", "num", latex="Mean $z$"),) if z is not None and not normalized else ()
    if normalized:
        z_text = (
            " Mean z: the mean per-judge z-score (sample σ, WMT's definition, as in the system scores table; "
            "a judge whose z is undefined counts as 0 here and is left out there)."
            + (_undefined_note(z) if z is not None else "")
        )
    elif z is not None:
        z_text = " Mean z: the mean per-judge z-score (WMT's; see the system scores table)." + _undefined_note(z)
    else:
        z_text = ""
    return ReportTable(
        "system_ranking",
        f"System ranking on {target}",
        f"Genuine systems by mean human {target} with {ci} bootstrap CIs over originals; p: paired bootstrap "
        f"against the next system; a new cluster starts where that difference is significant (α = {alpha}).{z_text}",
        (
            RANK,
            SYSTEM,
            mean_col,
            *z_cols,
            ci_column(ci),
            Column("n", "Originals", "int", latex="$n$"),
            Column("cluster", "Cluster", "int", latex="Cluster"),
            Column("pvalue_vs_next", "p vs next", "p", latex="$p$ vs next"),
        ),
        rows,
    )


def system_scores_table(result) -> ReportTable:
    """Per 0–100 criterion, each genuine system's mean raw score and mean per-judge z-score."""
    scores = result.get("system_scores") or {}
    rows, notes = [], []
    for block in scores.get("criteria") or []:
        n_undefined = len(block.get("undefined_judges") or [])
        for r in block.get("systems") or []:
            rows.append(
                {
                    "criterion": block["criterion"],
                    "system": r.get("system"),
                    "raw": r.get("raw"),
                    "z": r.get("z"),
                    "n": r.get("n_originals"),
                    "n_judgments": r.get("n_judgments"),
                    "n_z": r.get("n_z"),
                    "undefined": n_undefined,
                    "z_note": "" if r.get("z") is not None else "undefined",
                }
            )
        notes.append(_undefined_note(block))
    return ReportTable(
        "system_scores",
        "System scores on 0–100 criteria, raw and z",
        "Per 0–100 criterion, genuine systems by mean per-judge z-score (WMT's direct assessment): each judge's "
        "score x becomes z = (x − μ) / σ, μ and σ the judge's mean and sample standard deviation (n − 1) over "
        "their genuine items on that criterion (controls left out); a system's raw and z scores are the mean "
        "over its originals of the mean over their judgments. Judgments: genuine judgments; with z: those whose "
        "judge has a defined z." + "".join(notes),
        (
            CRITERION,
            SYSTEM,
            Column("raw", "Mean raw", "num", latex="Raw"),
            Column("z", "Mean z", "num", latex="$z$"),
            Column("z_note", "", latex=""),
            Column("n", "Originals", "int", latex="$n$"),
            Column("n_judgments", "Judgments", "int", latex="Judg."),
            Column("n_z", "With z", "int", latex="with $z$"),
            Column("undefined", "Judges without z", "int", latex="no $z$"),
        ),
        rows,
    )


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
            rows.append(
                {
                    "level": level,
                    "rank": r.get("rank"),
                    "metric": r.get("metric"),
                    "pearson": r.get("statistic"),
                    "n": r.get("n"),
                    "williams_pvalue": r.get("williams_pvalue"),
                    "marker": "*" if r.get("significantly_worse") else "",
                    "verdict": verdict,
                    "_class": cls,
                    "rank_with_controls": a.get("rank"),
                    "pearson_with_controls": a.get("statistic"),
                }
            )
    return ReportTable(
        "metric_leaderboard",
        "Metric leaderboard",
        f"Every metric run by Pearson correlation with the human reference on genuine items (controls excluded), "
        f"per level; the last two columns rank the same metrics with the controls at their expected scores in the "
        f"reference (PEM §5.2's convention). Williams test (one-tailed) "
        f"that the best metric correlates better than this one; * marks p < {alpha}. Metrics not significantly "
        f"worse than the best form the winning group (bold in LaTeX).",
        (
            LEVEL,
            RANK,
            METRIC,
            PEARSON,
            N,
            Column("williams_pvalue", "Williams p vs best", "p", latex="Williams $p$"),
            Column("marker", "Worse (*)", latex=""),
            Column("verdict", "Verdict"),
            Column("rank_with_controls", "Rank +controls", "int", latex="Rank$_{+c}$"),
            PEARSON_WITH_CONTROLS,
        ),
        rows,
    )


def meta_evaluation_table(result) -> ReportTable:
    meta = result.get("metric_meta_evaluation") or {}
    base = (meta.get("segment") or {}).get("baseline")
    ceiling = (meta.get("segment") or {}).get("human_ceiling") or {}
    as_judge = {r["metric"]: r for r in ceiling.get("metrics") or []}
    margin = ceiling.get("margin", CEILING_MARGIN)  # reports built before the margin: its value now
    rows = []
    human = ceiling.get("human")
    if human:
        # The human ceiling first: one judge against the others' mean, the figure a metric is read against.
        rows.append(
            {
                "level": "segment",
                "rank": None,
                "metric": "human judges (ceiling)",
                "n": ceiling.get("n_items"),
                "as_judge": human.get("statistic"),
                "as_judge_ci": (human.get("ci_low"), human.get("ci_high")),
            }
        )
    for level in ("segment", "system"):
        block = meta.get(level) or {}
        for r in block.get("rows") or []:
            j = as_judge.get(r.get("metric"), {}) if level == "segment" else {}
            rows.append(
                {
                    "level": level,
                    "rank": r.get("rank"),
                    "metric": r.get("metric"),
                    "n": block.get("n"),
                    "pearson": r.get("pearson"),
                    "spearman": r.get("spearman"),
                    "kendall_b": r.get("kendall_b"),
                    "accuracy": r.get("accuracy"),
                    "soft_accuracy": r.get("soft_accuracy"),
                    "as_judge": j.get("statistic"),
                    "as_judge_ci": (j.get("ci_low"), j.get("ci_high")),
                    "vs_ceiling": j.get("delta"),
                    "reaches": j.get("reaches"),
                    "p_vs_best": r.get("p_vs_best"),
                    "p_vs_baseline": r.get("p_vs_baseline"),
                }
            )
    vs = (
        f" p vs {base}: the Williams test between this metric and {base}, H1 that the better-correlated of "
        "the two correlates better."
        if base
        else ""
    )
    return ReportTable(
        "metric_meta_evaluation",
        "Metric meta-evaluation",
        "Every metric run against the mean human score on genuine items, per level: Pearson r, Spearman ρ, "
        "Kendall τb and pairwise accuracy (ties count; within each original at segment level); at system level "
        "soft pairwise accuracy (Thompson et al. 2024: 1 − the mean gap between the permutation-test p-values of "
        "humans and metric over system pairs). Human ceiling (segment level, first row): each judge's Pearson r "
        "with the mean of the other judges, averaged over judges; r as a judge: the metric's r with the same "
        "others' means (− ceiling: the difference). Reaches ceiling: the lower end of the difference's "
        f"bootstrap interval is at least −{margin} (non-inferiority: with that confidence the metric is at most "
        f"{margin} below a typical judge); no means not shown, too few items included. Williams test "
        f"(one-tailed, Pearson): p vs best, H1 that the best metric correlates better.{vs} The full matrix of "
        "Williams tests is in the JSON (metric_meta_evaluation.<level>.matrix).",
        (
            LEVEL,
            RANK,
            METRIC,
            N,
            PEARSON,
            SPEARMAN,
            KENDALL_B,
            Column("accuracy", "Acc.", "r", latex="Acc."),
            Column("soft_accuracy", "Soft acc.", "r", latex="SPA"),
            Column("as_judge", "r as a judge", "r", latex="$r_{judge}$"),
            Column("as_judge_ci", "CI", "ci", latex="CI"),
            Column("vs_ceiling", "− ceiling", "r", latex="$\\Delta_{ceil}$"),
            Column("reaches", "Reaches ceiling", "bool", latex=None),
            Column("p_vs_best", "p vs best", "p", latex="$p_{best}$"),
            Column("p_vs_baseline", f"p vs {base}" if base else "p vs baseline", "p", latex="$p_{base}$"),
        ),
        rows,
    )


def llm_judge_pool_table(result) -> ReportTable:
    """Krippendorff's α of the human judges, and apart, with each LLM judge added to the pool."""
    rows = []
    for pool in (result.get("metric_meta_evaluation") or {}).get("llm_judge_pool") or []:
        humans = pool.get("humans") or {}
        rows.append(
            {
                "criterion": pool.get("criterion"),
                "pool": "human judges",
                "level": pool.get("level"),
                "alpha": humans.get("statistic"),
                "ci": (humans.get("ci_low"), humans.get("ci_high")),
                "n_items": humans.get("n_items"),
                "n_judges": humans.get("n_judges"),
            }
        )
        for r in pool.get("with_llm") or []:
            rows.append(
                {
                    "criterion": pool.get("criterion"),
                    "pool": f"human judges + {r.get('judge')}",
                    "level": pool.get("level"),
                    "alpha": r.get("statistic"),
                    "ci": (r.get("ci_low"), r.get("ci_high")),
                    "n_items": r.get("n_items"),
                    "n_judges": r.get("n_judges"),
                }
            )
    return ReportTable(
        "llm_judge_pool",
        "LLM judges in the judge pool",
        "Krippendorff's α of the human judges alone (as in the agreement table), and apart, of the human judges "
        "with one LLM judge added as one more coder. The humans' own α never includes an LLM. An α that holds "
        "or rises with the LLM added says it rates like one more judge; one that drops says it does not.",
        (
            CRITERION,
            Column("pool", "Judges", latex="Judges"),
            LEVEL,
            Column("alpha", "α", "r", latex="$\\alpha$"),
            Column("ci", "CI", "ci", latex="CI"),
            Column("n_items", "Items", "int", latex="Items"),
            Column("n_judges", "Coders", "int", latex="Coders"),
        ),
        rows,
    )
