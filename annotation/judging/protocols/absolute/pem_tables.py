"""PEM's Tables 1–3 of a report: inter-judge correlation, criteria against the target
criterion, metrics against the human reference."""

from __future__ import annotations

from metrics.reports.exports.cells import fisher_ci, stat
from metrics.reports.exports.columns import (
    CRITERION,
    KENDALL_B,
    LEVEL,
    METRIC,
    N_SYSTEMS,
    PEARSON,
    PEARSON_WITH_CONTROLS,
    SPEARMAN,
    N,
    ci_column,
)
from metrics.reports.exports.model import Column, ReportTable


def _correlations(d: dict, level: float, prefix: str = "") -> dict:
    """One level's correlations as cells: Pearson's r with its p and Fisher-z interval at
    ``level``, Spearman's ρ and Kendall's τb, named ``<prefix>pearson`` and so on."""
    r = d.get("pearson")
    return {
        f"{prefix}pearson": stat(r),
        f"{prefix}pearson_p": stat(r, "pvalue"),
        f"{prefix}pearson_ci": fisher_ci(r, level),
        f"{prefix}spearman": stat(d.get("spearman")),
        f"{prefix}kendall_b": stat(d.get("kendall_b")),
    }


def _both_levels(sentence: dict, system: dict, level: float) -> dict:
    """The correlations of Tables 1 and 2 at sentence and at system level, as cells (the system
    level's interval is not shown: :func:`_both_levels_columns`)."""
    return _correlations(sentence, level, "sentence_") | _correlations(system, level, "system_")


def _both_levels_columns(ci: str) -> tuple[Column, ...]:
    """:func:`_both_levels`' columns, the systems counted before the system level's."""
    return (
        Column("sentence_pearson", "Sentence r", "r", latex="$r$"),
        Column("sentence_pearson_p", "p", "p"),
        ci_column(ci, "sentence_pearson_ci"),
        Column("sentence_spearman", "Sentence ρ", "r", latex="$\\rho$"),
        Column("sentence_kendall_b", "Sentence τb", "r", latex="$\\tau_b$"),
        N_SYSTEMS,
        Column("system_pearson", "System r", "r", latex="sys.\\ $r$"),
        Column("system_pearson_p", "System p", "p"),
        Column("system_spearman", "System ρ", "r", latex="sys.\\ $\\rho$"),
        Column("system_kendall_b", "System τb", "r", latex="sys.\\ $\\tau_b$"),
    )


def pem_table1(result, level, ci, target) -> ReportTable:
    t1 = result.get("table1") or {}
    rows = []
    for p in t1.get("pairs", []):
        sent, sys_ = p.get("sentence", {}), p.get("system", {})
        rows.append(
            {
                "judge_a": p["judges"][0],
                "judge_b": p["judges"][1],
                "n_shared": p.get("n_shared"),
                **_both_levels(sent, sys_, level),
                "n_systems": stat(sys_.get("pearson"), "n"),
                "summarised": p.get("summarised", True),
            }
        )
    mean = t1.get("mean_pearson") or {}
    summ = t1.get("summary") or {}
    min_shared = t1.get("min_shared")
    if rows:
        used = (summ.get("sentence") or {}).get("n_pairs")
        label = "weighted summary" if used is None else f"weighted summary ({used} of {len(rows)} pairs)"
        rows.append(
            {
                "judge_a": label,
                "judge_b": "",
                "sentence_pearson": mean.get("sentence"),
                "system_pearson": mean.get("system"),
                "_class": "mean-row",
            }
        )
    rule = (
        f" The summary row is the Fisher-z mean weighted by n − 3 (n: shared items; systems at system level) "
        f"over the pairs sharing at least {min_shared} items; the others are listed, not summarised."
        if min_shared is not None
        else ""
    )
    return ReportTable(
        "table1",
        "Table 1 — inter-judge correlation",
        f"Correlation between every two judges on {target}, controls excluded (PEM Table 1): sentence level over "
        f"the items both rated, system level over each judge's per-system means. CI: {ci} Fisher z.{rule}",
        (
            Column("judge_a", "Judge A", latex="Judge A"),
            Column("judge_b", "Judge B", latex="Judge B"),
            Column("n_shared", "Shared items", "int", latex="$n$"),
            Column("summarised", "In summary", "bool", latex="Sum."),
            *_both_levels_columns(ci),
        ),
        rows,
    )


def pem_table2(result, level, ci, target) -> ReportTable:
    t2 = result.get("table2") or {}
    rows = []
    for r in t2.get("rows", []):
        sent, sys_ = r.get("sentence", {}), r.get("system", {})
        rows.append(
            {
                "criterion": r["criterion"],
                "subset": r.get("subset"),
                "n_items": r.get("n_items"),
                **_both_levels(sent, sys_, level),
                "n_systems": r.get("n_systems"),
            }
        )
    controls = "included at their expected scores" if t2.get("include_controls") else "excluded"
    return ReportTable(
        "table2",
        f"Table 2 — criteria vs {target}",
        f"Each criterion's human reference (mean of the judges) against {target}'s, at sentence and system level, "
        f"on all items and on the subset where the mean scores reach the thresholds (PEM Table 2); controls "
        f"{controls}. CI: {ci} Fisher z.",
        (
            CRITERION,
            Column("subset", "Items", latex="Items"),
            Column("n_items", "n", "int", latex="$n$"),
            *_both_levels_columns(ci),
        ),
        rows,
    )


def pem_table3(result, level, ci, target) -> ReportTable:
    t3 = result.get("table3") or {}
    rows = []
    with_controls = {(r["metric"], r["level"]): r for r in t3.get("rows_with_controls") or []}
    for r in t3.get("rows", []):
        alt = with_controls.get((r["metric"], r["level"])) if r["human"] == "mean" else None
        rows.append(
            {
                "pearson_with_controls": stat((alt or {}).get("pearson")),
                "metric": r["metric"],
                "human": r["human"],
                "level": r["level"],
                "n": r.get("n"),
                **_correlations(r, level),
                "kendall_c": stat(r.get("kendall_c")),
                "accuracy": stat(r.get("accuracy")),
                "accuracy_tc": stat(r.get("accuracy_tc")),
                "_class": "" if r["human"] == "mean" else "per-judge",
            }
        )
    controls = "included at their expected scores" if t3.get("controls_in_mean") else "excluded"
    second = (
        " Column “r +controls”: the same against the human reference with the controls at their expected "
        "scores (PEM §5.2's convention), for comparison with the paper."
        if t3.get("rows_with_controls")
        else ""
    )
    return ReportTable(
        "table3",
        f"Table 3 — metrics vs human {target}",
        f"Each metric against the human reference (mean of the judges; controls {controls}) and against each "
        f"judge (controls excluded), at segment and system level (PEM Table 3). Accuracy: pairwise ranking "
        f"accuracy with ties, pairs within an original; tie-calibrated: the same after treating metric scores "
        f"closer than the best threshold ε as ties (Deutsch et al. 2023). CI: {ci} Fisher z.{second}",
        (
            METRIC,
            Column("human", "Human", latex="Human"),
            LEVEL,
            N,
            PEARSON,
            Column("pearson_p", "p", "p"),
            ci_column(ci, "pearson_ci"),
            SPEARMAN,
            KENDALL_B,
            Column("kendall_c", "τc", "r", latex="$\\tau_c$"),
            Column("accuracy", "Accuracy", "r", latex="Acc."),
            Column("accuracy_tc", "Accuracy (tie-cal.)", "r", latex="Acc.$^*$"),
            PEARSON_WITH_CONTROLS,
        ),
        rows,
    )
