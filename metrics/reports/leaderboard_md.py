"""The report's metric meta-evaluation as Markdown tables (README, docs, the CLI)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["meta_evaluation_markdown"]

_METHOD_LABEL = {"pearson": "Pearson", "spearman": "Spearman", "kendall_b": "Kendall τb", "accuracy": "pairwise acc."}


def _f(x: Any, digits: int = 3) -> str:
    return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{digits}f}"


def _p(p: Any) -> str:
    if p is None or (isinstance(p, float) and not math.isfinite(p)):
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def meta_evaluation_markdown(result: Mapping[str, Any], *, skipped: Sequence[tuple[str, str]] = (),
                             matrix: bool = True) -> str:
    """Leaderboard (both levels, every measure), Williams tests against the baseline and
    the segment-level Williams matrix of ``result["metric_meta_evaluation"]``; then the
    metrics not on the board (``skipped``: (slug, why)) and the report's meta-evaluation
    warnings. Empty string without a meta-evaluation."""
    meta = result.get("metric_meta_evaluation") or {}
    seg, sys_ = meta.get("segment") or {}, meta.get("system") or {}
    if not seg.get("rows"):
        return ""
    methods = seg.get("methods") or ["pearson"]
    by_sys = {r["metric"]: r for r in sys_.get("rows") or []}
    acc_note = " (within original)" if seg.get("accuracy_groups") else ""
    head = ["rank", "metric"] + [f"seg. {_METHOD_LABEL.get(m, m)}" + (acc_note if m == "accuracy" else "")
                                 for m in methods] + [f"sys. {_METHOD_LABEL.get(m, m)}" for m in methods]
    lines = [f"Segment level: {seg['n']} items; system level: {sys_.get('n')} systems. Ranked by segment-level "
             "Pearson r with the mean human score.", "",
             "| " + " | ".join(head) + " |", "|" + "---:|---|" + "---:|" * (2 * len(methods))]
    for r in seg["rows"]:
        s = by_sys.get(r["metric"], {})
        lines.append("| " + " | ".join([str(r["rank"]), r["metric"]] + [_f(r.get(m)) for m in methods]
                                       + [_f(s.get(m)) for m in methods]) + " |")
    base = seg.get("baseline")
    if base:
        lines += ["", f"Williams tests against {base} (one-tailed, Pearson; H1: the better-correlated of the two "
                  "correlates better with the humans):", "",
                  f"| metric | seg. r − {base} r | seg. p | sys. r − {base} r | sys. p |", "|---|---:|---:|---:|---:|"]
        for r in seg["rows"]:
            if r["metric"] == base:
                continue
            s = by_sys.get(r["metric"], {})
            lines.append(f"| {r['metric']} | {_f(r.get('delta_vs_baseline'))} | {_p(r.get('p_vs_baseline'))} | "
                         f"{_f(s.get('delta_vs_baseline'))} | {_p(s.get('p_vs_baseline'))} |")
    if matrix and len(seg["matrix"]["metrics"]) > 1:
        names = seg["matrix"]["metrics"]
        lines += ["", "Segment-level Williams matrix: p that the row metric correlates better with the humans than "
                  "the column metric (Pearson, one-tailed; rows ranked best first).", "",
                  "| | " + " | ".join(names[1:]) + " |", "|---|" + "---:|" * (len(names) - 1)]
        for i, name in enumerate(names[:-1]):
            row = seg["matrix"]["pvalues"][i]
            lines.append(f"| {name} | " + " | ".join("" if j <= i else _p(row[j]) for j in range(1, len(names))) + " |")
    if skipped:
        lines += ["", "Not on the board:", ""] + [f"- `{slug}`: {why}" for slug, why in skipped]
    notes = [w for w in result.get("warnings") or [] if str(w.get("code", "")).startswith("meta_eval")]
    if notes:
        lines += ["", "Warnings:", ""] + [f"- {w['message']}" for w in notes]
    return "\n".join(lines) + "\n"
