"""The detector of joins nothing uses (``tests/queries.py``), on the SQL Django writes."""

from __future__ import annotations

from django.db.models import Count

from annotation.judging.protocols.absolute.models import AssignmentItem, Judgment
from tests.queries import unused_joins


def test_it_finds_the_joins_meta_ordering_leaves_in_a_group_by():
    sql = str(Judgment.objects.filter(study=1).values("judge_id").annotate(n=Count("id")).query)
    found = unused_joins(sql)
    # The study, the item, its assignment, the assignment's study and judge: Meta.ordering's.
    assert len(found) == 5, found
    assert any("judging_assignmentitem" in j for j in found)


def test_a_group_by_without_the_ordering_joins_nothing_it_does_not_use():
    sql = str(Judgment.objects.filter(study=1).values("judge_id").annotate(n=Count("id")).order_by().query)
    assert "JOIN" not in sql and unused_joins(sql) == []


def test_joins_the_query_reads_through_are_used():
    qs = (
        AssignmentItem.objects.filter(assignment__study=1)
        .values("candidate__system__name")
        .annotate(n=Count("id"))
        .order_by()
    )
    sql = str(qs.query)
    assert sql.count("INNER JOIN") == 3  # assignment (the filter), candidate, system (the group)
    assert unused_joins(sql) == []
