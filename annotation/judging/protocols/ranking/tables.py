"""The ranking report's tables, in page order, from the stored result of :mod:`.report`
(the report page, the exports and the unit's ``report_tables`` read them from here)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from metrics.reports.exports.cells import pct_whole
from metrics.reports.exports.columns import CLUSTER, JUDGE, LOSSES, PASSES, PVALUE, SYSTEM, TIES, WINS, ci_column
from metrics.reports.exports.model import Column, ReportTable


def ranking_tables(result: Mapping[str, Any]) -> list[ReportTable]:
    """The ranking report's tables, in page order."""
    settings = result.get("settings") or {}
    ci = pct_whole(float(settings.get("confidence_level", 0.95)))
    notes = result.get("notes") or {}
    pl = result.get("plackett_luce") or {}

    def caption(text: str, note: str) -> str:
        return f"{text} ({notes[note]}.)" if note in notes else text

    return [
        ReportTable(
            "pl_ranking",
            "System ranking (Plackett–Luce)",
            caption(
                f"log-strength β per system (θ = e^β, centred by the fit; higher is better) and the probability "
                f"of being chosen best among all systems, fitted with choix's I-LSR (regularisation α = "
                f"{pl.get('alpha')}; ties as Breslow's); {ci} percentile bootstrap intervals over "
                f"{pl.get('n_boot')} resamples of the {pl.get('n_originals')} originals; a new cluster starts "
                "below a system whose bootstrap p against the next is under 0.05. Controls left out.",
                "plackett_luce",
            ),
            (
                CLUSTER,
                SYSTEM,
                Column("strength", "β", "num", latex=r"$\beta$"),
                ci_column(ci),
                Column("probability", "P(best)", "num", latex="P(best)"),
                Column("p_next", "p vs next", "p"),
                Column("mean_rank", "Mean rank", "num", latex="Mean rank"),
                Column("n_rankings", "Rankings", "int"),
            ),
            [{**r, "ci": (r["ci_low"], r["ci_high"])} for r in result.get("systems", [])],
        ),
        ReportTable(
            "system_wins",
            "Win rates per system",
            "Every pair of systems in each ranking is a meeting: wins, ties (same group) and losses pooled over "
            "every opponent; win rate = (wins + ties/2) / meetings; firsts = rankings where the system is in the "
            "first group; mean rank = the mean of its mid-ranks (1 = best; depends on k).",
            (
                SYSTEM,
                WINS,
                TIES,
                LOSSES,
                Column("win_rate", "Win rate", "num", latex="Win rate"),
                Column("firsts", "Firsts", "int"),
                Column("mean_rank", "Mean rank", "num"),
            ),
            list(result.get("systems", [])),
        ),
        ReportTable(
            "pair_wins",
            "Win rates per system pair",
            "A against B (in name order) over the rankings that contain both: A's wins, ties, A's losses; "
            "A's win rate = (wins + ties/2) / n; without ties = wins / (wins + losses).",
            (
                Column("a", "A", latex="A"),
                Column("b", "B", latex="B"),
                Column("n", "n", "int"),
                Column("wins", "A wins", "int"),
                Column("ties", "Ties", "int"),
                Column("losses", "B wins", "int"),
                Column("win_rate", "A's win rate", "num"),
                Column("decisive_win_rate", "Without ties", "num"),
            ),
            list(result.get("pairs", [])),
        ),
        *_score_tables(result),
        ReportTable(
            "agreement",
            "Agreement between judges (Kendall's W)",
            caption(
                "Kendall's W with the tie correction per set of candidates ranked by at least two judges "
                "(1: every judge gave the same order; 0: no agreement), with Friedman's χ² test of W = 0.",
                "concordance",
            ),
            (
                Column("original", "Original"),
                Column("systems", "Systems"),
                Column("n_judges", "Judges", "int"),
                Column("w", "W", "r"),
                Column("chi2", "χ²", "num"),
                PVALUE,
            ),
            list((result.get("concordance") or {}).get("originals", [])),
        ),
        ReportTable(
            "agreement_summary",
            "Agreement between judges: summary",
            caption("Mean and median of Kendall's W over the sets ranked by at least two judges.", "concordance"),
            (
                Column("mean_w", "Mean W", "r"),
                Column("median_w", "Median W", "r"),
                Column("n_originals", "Sets", "int"),
            ),
            [{k: (result.get("concordance") or {}).get(k) for k in ("mean_w", "median_w", "n_originals")}],
        ),
        ReportTable(
            "controls",
            "Judges on controls",
            caption(
                "A copy of the original is expected in the first group, an unrelated sentence in the last. "
                "p: one-sided binomial test against chance (1/k); a judge passes when p < the design's QC level.",
                "controls",
            ),
            (
                JUDGE,
                Column("n", "Controls", "int"),
                Column("correct", "Where expected", "int"),
                Column("accuracy", "Share", "num"),
                PVALUE,
                PASSES,
            ),
            list(result.get("controls", [])),
        ),
    ]


# --- the dashboard's live figures ------------------------------------------------------


def _score_tables(result: Mapping[str, Any]) -> list[ReportTable]:
    """The tables of the 0–100 scores, where the study collected them (none otherwise)."""
    scores = result.get("scores")
    if not scores:
        return []
    return [
        ReportTable(
            "score_systems",
            "Scores per system (0–100)",
            "The scores judges gave beside their order: per genuine system, the mean over its originals of the "
            "mean over their judgments, raw and as WMT's per-judge z-score (each judge's scores standardised by "
            "their mean and sample standard deviation over their genuine candidates; undefined for a judge with "
            "fewer than two scores, or all equal). Controls left out.",
            (
                SYSTEM,
                Column("raw", "Mean score", "num", latex="Mean"),
                Column("z", "Mean z", "num", latex="Mean $z$"),
                Column("n_originals", "Originals", "int", latex="$n$"),
                Column("n_judgments", "Judgments", "int"),
                Column("n_z", "With z", "int"),
            ),
            list(scores.get("systems") or []),
        ),
        ReportTable(
            "score_order",
            "Scores against each judge's own order",
            "Every pair of candidates a judge put in different groups of one ranking: agree when the better-ranked "
            "one got the higher score, contradict when it got the lower one; equal scores are counted apart. "
            "Mean τ-b: Kendall's τ-b of the scores against the order, averaged over the judge's rankings whose "
            "scores are not all equal (1: the scores follow the order). A high share contradicting points at a "
            "judge not reading, or reading the scale upside down.",
            (
                JUDGE,
                Column("n_rankings", "Rankings", "int"),
                Column("pairs", "Pairs", "int"),
                Column("agree", "Agree", "int"),
                Column("score_ties", "Equal scores", "int"),
                Column("contradict", "Contradict", "int"),
                Column("share_contradicting", "Share contradicting", "num"),
                Column("mean_tau", "Mean τ-b", "r", latex=r"Mean $\tau_b$"),
                Column("n_tau", "Rankings with τ", "int"),
            ),
            list(scores.get("judges") or []),
        ),
    ]
