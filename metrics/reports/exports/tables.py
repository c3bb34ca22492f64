"""A report's tables in page order (:func:`report_tables`), and one of them by slug."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotation.judging.protocols.registry import protocol_for_result

from .model import ReportTable


def report_tables(result: Mapping[str, Any]) -> list[ReportTable]:
    """The report's tables in page order, as the protocol that built it draws them (its
    unit's :meth:`report_tables`): the page, every export format and the API read these."""
    return protocol_for_result(result).report_tables(result)


def table_by_slug(result: Mapping[str, Any], slug: str) -> ReportTable:
    for t in report_tables(result):
        if t.slug == slug:
            return t
    raise KeyError(slug)
