"""What two service modules of the alignment app share: links as stored (JSON lists).

Imports nothing of its sibling modules.
"""

from __future__ import annotations

from collections.abc import Iterable


def links_json(links: Iterable[tuple[int, int]]) -> list[list[int]]:
    """``(i, j)`` links as the sorted ``[[i, j], ...]`` list the JSON fields store."""
    return [[i, j] for i, j in sorted(links)]
