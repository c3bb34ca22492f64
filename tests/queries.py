"""Reading the SQL a test captured: joins that nothing in the query uses.

Django drops a model's ``Meta.ordering`` from a ``GROUP BY`` query but keeps the joins that
ordering set up (``Judgment`` orders by its item, whose assignment orders by its study and
judge: a count of judgments per judge joined every assigned item of the study, 175,000 rows
at 500 judges). An inner join to a non-null foreign key filters nothing, so the answer is the
same and only the database's time is lost; ``.order_by()`` on the query removes them.
"""

from __future__ import annotations

import re

_JOIN = re.compile(r'INNER JOIN "(?P<table>[^"]+)"(?: (?P<alias>\w+))? ON \((?P<on>[^()]*)\)')


def unused_joins(sql: str) -> list[str]:
    """The inner joins of ``sql`` whose table (or alias) appears nowhere but in its own ``ON``
    clause or in the ``ON`` clauses of other such joins: the text of each, in query order."""
    unused: list[str] = []
    rest = sql
    changed = True
    while changed:
        changed = False
        for m in _JOIN.finditer(rest):
            name = m.group("alias") or f'"{m.group("table")}"'
            without = rest[: m.start()] + rest[m.end() :]
            if f"{name}." not in without:
                unused.append(m.group(0))
                rest = without
                changed = True
                break
    return unused


def queries_with_unused_joins(queries: list[dict]) -> list[tuple[str, list[str]]]:
    """Of ``CaptureQueriesContext.captured_queries``, the queries with unused joins."""
    return [(q["sql"], found) for q in queries if (found := unused_joins(q["sql"]))]
