"""A report's tables in page order (:func:`report_tables`), and one of them by slug."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotation.judging.defaults import PEM_REPORT_TARGET
from annotation.judging.protocols.registry import protocol_for_result

from ._shared import pct
from .agreement import agreement_tables, judge_qc_table
from .model import ReportTable
from .pem_tables import pem_table1, pem_table2, pem_table3
from .rankings import (
    leaderboard_table,
    llm_judge_pool_table,
    meta_evaluation_table,
    ranking_table,
    system_scores_table,
)


def report_tables(result: Mapping[str, Any]) -> list[ReportTable]:
    """The report's tables in page order (Table 3 and the leaderboard only with metrics)."""
    own = protocol_for_result(result).report_tables(result)
    if own is not None:  # a protocol with its own report (ESA, ranking, side by side)
        return own
    st = result.get("settings", {})
    level = float(st.get("confidence_level", 0.95))
    target = st.get("criterion") or PEM_REPORT_TARGET  # reports from before settings named their target
    ci = pct(level)
    tables = [pem_table1(result, level, ci, target), pem_table2(result, level, ci, target)]
    if result.get("table3"):
        tables.append(pem_table3(result, level, ci, target))
    tables += [*agreement_tables(result), judge_qc_table(result), ranking_table(result, ci, target)]
    if result.get("system_scores"):  # only with a 0–100 criterion: its raw and z-scores
        tables.append(system_scores_table(result))
    if result.get("metric_leaderboard"):
        tables.append(leaderboard_table(result))
    if result.get("metric_meta_evaluation"):
        tables.append(meta_evaluation_table(result))
        if result["metric_meta_evaluation"].get("llm_judge_pool"):
            tables.append(llm_judge_pool_table(result))
    return tables


def table_by_slug(result: Mapping[str, Any], slug: str) -> ReportTable:
    for t in report_tables(result):
        if t.slug == slug:
            return t
    raise KeyError(slug)


TABLE_SLUGS = (
    "table1",
    "table2",
    "table3",
    "agreement",
    "agreement_pairs",
    "judge_qc",
    "system_ranking",
    "system_scores",
    "metric_leaderboard",
    "metric_meta_evaluation",
    "llm_judge_pool",
)
