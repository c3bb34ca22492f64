"""The report's metric meta-evaluation as Markdown tables (README, docs, the CLI)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["meta_evaluation_markdown", "system_scores_markdown"]

_METHOD_LABEL = {
    "pearson": "Pearson",
    "spearman": "Spearman",
    "kendall_b": "Kendall τb",
    "accuracy": "pairwise acc.",
    "soft_accuracy": "soft pairwise acc.",
}


def _f(x: Any, digits: int = 3) -> str:
    return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{digits}f}"


def _p(p: Any) -> str:
    if p is None or (isinstance(p, float) and not math.isfinite(p)):
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def meta_evaluation_markdown(
    result: Mapping[str, Any], *, skipped: Sequence[tuple[str, str]] = (), matrix: bool = True
) -> str:
    """Leaderboard (both levels, every measure), Williams tests against the baseline and
    the segment-level Williams matrix of ``result["metric_meta_evaluation"]``; then the
    metrics not on the board (``skipped``: (slug, why)) and the report's meta-evaluation
    warnings. Empty string without a meta-evaluation."""
    meta = result.get("metric_meta_evaluation") or {}
    seg, sys_ = meta.get("segment") or {}, meta.get("system") or {}
    if not seg.get("rows"):
        return ""
    methods = seg.get("methods") or ["pearson"]
    sys_methods = sys_.get("methods") or methods
    by_sys = {r["metric"]: r for r in sys_.get("rows") or []}
    acc_note = " (within original)" if seg.get("accuracy_groups") else ""
    head = (
        ["rank", "metric"]
        + [f"seg. {_METHOD_LABEL.get(m, m)}" + (acc_note if m == "accuracy" else "") for m in methods]
        + [f"sys. {_METHOD_LABEL.get(m, m)}" for m in sys_methods]
    )
    lines = [
        f"Segment level: {seg['n']} items; system level: {sys_.get('n')} systems. Ranked by segment-level "
        "Pearson r with the mean human score.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---:|---|" + "---:|" * (len(methods) + len(sys_methods)),
    ]
    for r in seg["rows"]:
        s = by_sys.get(r["metric"], {})
        lines.append(
            "| "
            + " | ".join(
                [str(r["rank"]), r["metric"]] + [_f(r.get(m)) for m in methods] + [_f(s.get(m)) for m in sys_methods]
            )
            + " |"
        )
    lines += _ceiling_lines(seg.get("human_ceiling") or {}) + _pool_lines(meta.get("llm_judge_pool") or [])
    base = seg.get("baseline")
    if base:
        lines += [
            "",
            f"Williams tests against {base} (one-tailed, Pearson; H1: the better-correlated of the two "
            "correlates better with the humans):",
            "",
            f"| metric | seg. r − {base} r | seg. p | sys. r − {base} r | sys. p |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in seg["rows"]:
            if r["metric"] == base:
                continue
            s = by_sys.get(r["metric"], {})
            lines.append(
                f"| {r['metric']} | {_f(r.get('delta_vs_baseline'))} | {_p(r.get('p_vs_baseline'))} | "
                f"{_f(s.get('delta_vs_baseline'))} | {_p(s.get('p_vs_baseline'))} |"
            )
    if matrix and len(seg["matrix"]["metrics"]) > 1:
        names = seg["matrix"]["metrics"]
        lines += [
            "",
            "Segment-level Williams matrix: p that the row metric correlates better with the humans than "
            "the column metric (Pearson, one-tailed; rows ranked best first).",
            "",
            "| | " + " | ".join(names[1:]) + " |",
            "|---|" + "---:|" * (len(names) - 1),
        ]
        for i, name in enumerate(names[:-1]):
            row = seg["matrix"]["pvalues"][i]
            lines.append(f"| {name} | " + " | ".join("" if j <= i else _p(row[j]) for j in range(1, len(names))) + " |")
    if skipped:
        lines += ["", "Not on the board:", ""] + [f"- `{slug}`: {why}" for slug, why in skipped]
    notes = [w for w in result.get("warnings") or [] if str(w.get("code", "")).startswith("meta_eval")]
    if notes:
        lines += ["", "Warnings:", ""] + [f"- {w['message']}" for w in notes]
    return "\n".join(lines) + "\n"


def system_scores_markdown(result: Mapping[str, Any]) -> str:
    """The human side of the leaderboard: per 0–100 criterion, each genuine system's mean
    raw score and mean per-judge z-score (``result["system_scores"]``), best z first, and
    the judges whose z is undefined. Empty string when no criterion is z-scored."""
    blocks = (result.get("system_scores") or {}).get("criteria") or []
    lines: list[str] = []
    for block in blocks:
        c = block["criterion"]
        lines += [
            "",
            f"Systems on {c} (0–100): mean raw score and mean z-score (per judge, z = (x − μ) / σ over "
            "the judge's genuine items, sample SD; controls left out); each original counts once.",
            "",
            f"| system | {c} raw | {c} z | originals | judgments with z |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in block.get("systems") or []:
            z = "undefined" if r.get("z") is None else _f(r.get("z"))
            lines.append(
                f"| {r['system']} | {_f(r.get('raw'), 2)} | {z} | {r.get('n_originals')} | "
                f"{r.get('n_z')} of {r.get('n_judgments')} |"
            )
        undefined = block.get("undefined_judges") or []
        if undefined:
            lines += [
                "",
                f"z undefined for {len(undefined)} judge{'s' if len(undefined) != 1 else ''} on {c} "
                f"(fewer than two genuine scores, or all equal): {', '.join(undefined)}. Their scores count in "
                "the raw means only.",
            ]
    return "\n".join(lines).lstrip("\n") + "\n" if lines else ""


def _ci(low: Any, high: Any) -> str:
    return "n/a" if low is None or high is None else f"[{_f(low)}, {_f(high)}]"


def _ceiling_lines(ceiling: Mapping[str, Any]) -> list[str]:
    """The human ceiling and each metric as one more judge (segment level)."""
    human = ceiling.get("human")
    if not human:
        return ["", f"Human ceiling: not computed ({ceiling['note']})."] if ceiling.get("note") else []
    level = int(round(100 * float(ceiling.get("confidence_level") or 0.95)))
    lines = [
        "",
        f"Human ceiling ({ceiling['criterion']}, segment level, leave one judge out, {ceiling['n_judges']} "
        f"judges, {ceiling['n_items']} items): one judge's Pearson r with the mean of the others, averaged over "
        f"judges, is **{_f(human['statistic'])}** {_ci(human.get('ci_low'), human.get('ci_high'))} ({level}% "
        "bootstrap over items). Each metric as one more judge: its r with the same others' means; it reaches "
        f"the ceiling when the lower end of the difference's interval is at least −{ceiling.get('margin', 0.05)} "
        "(non-inferiority: at most that far below a typical judge; no: not shown).",
        "",
        f"| metric | r as a judge | {level}% CI | − ceiling | {level}% CI | reaches the ceiling |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for r in sorted(ceiling.get("metrics") or [], key=lambda r: -(r.get("statistic") or -9)):
        reaches = "n/a" if r.get("reaches") is None else ("yes" if r["reaches"] else "no")
        lines.append(
            f"| {r['metric']} | {_f(r.get('statistic'))} | {_ci(r.get('ci_low'), r.get('ci_high'))} | "
            f"{_f(r.get('delta'))} | {_ci(r.get('delta_ci_low'), r.get('delta_ci_high'))} | {reaches} |"
        )
    return lines


def _pool_lines(pools: Sequence[Mapping[str, Any]]) -> list[str]:
    """Krippendorff's α of the humans, and apart, with each LLM judge added."""
    lines: list[str] = []
    for pool in pools:
        h = pool.get("humans") or {}
        lines += [
            "",
            f"LLM judges in the judge pool ({pool['criterion']}, Krippendorff's α, {pool['level']}): the "
            "humans' own α never includes an LLM.",
            "",
            "| judges | α | CI | items |",
            "|---|---:|---:|---:|",
            f"| human judges ({h.get('n_judges')}) | {_f(h.get('statistic'))} | "
            f"{_ci(h.get('ci_low'), h.get('ci_high'))} | {h.get('n_items')} |",
        ]
        for r in pool.get("with_llm") or []:
            lines.append(
                f"| human judges + {r['judge']} | {_f(r.get('statistic'))} | "
                f"{_ci(r.get('ci_low'), r.get('ci_high'))} | {r.get('n_items')} |"
            )
    return lines
