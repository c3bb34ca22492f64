"""The absolute protocol's hot path: ``items/next`` and the submit's answer in fixed SQL.

``items/next`` and the submit are what every judge calls every few seconds. Building and
compiling an ORM query costs 0.5–2.5 ms of CPU (more than PostgreSQL spends answering it), so
the reads below are fixed SQL strings, portable between PostgreSQL and SQLite and written once
per process from the models' table names. Each one is one round trip. Their results equal those
of the ORM selectors in :mod:`.selectors` (the tests of the judging API pin the answers and the
number of queries). The judge's study and assignment, which every protocol reads first, are in
:mod:`annotation.judging.selectors.hot_path`.
"""

from __future__ import annotations

from django.db import connection

from annotation.adaptive.publication import adaptive_study
from annotation.adaptive.services import adaptive_item_promote
from annotation.models import Candidate, Original

from ...models import Assignment, JudgingDesign
from ...selectors.judge import original_context
from ...tokens import serve_stamp_make
from .models import AssignmentItem
from .selectors import JudgeItem

_HOT_SQL: dict[str, str] = {}


def _hot_sql(name: str) -> str:
    if not _HOT_SQL:
        t = {
            "item": AssignmentItem._meta.db_table,
            "design": JudgingDesign._meta.db_table,
            "candidate": Candidate._meta.db_table,
            "original": Original._meta.db_table,
        }
        _HOT_SQL["next"] = (
            "SELECT i.token, i.position, c.text, o.text, o.id, o.document, o.position,"
            " (SELECT COUNT(*) FROM {item} d WHERE d.assignment_id = i.assignment_id AND d.done_at IS NOT NULL),"
            " (SELECT p.token FROM {item} p WHERE p.assignment_id = i.assignment_id AND p.position = i.position - 1),"
            " EXISTS(SELECT 1 FROM {design} g WHERE g.study_id = %s AND g.show_context)"
            " FROM {item} i JOIN {candidate} c ON c.id = i.candidate_id JOIN {original} o ON o.id = c.original_id"
            " WHERE i.assignment_id = %s AND i.done_at IS NULL ORDER BY i.position LIMIT 1"
        ).format(**t)
        _HOT_SQL["done"] = "SELECT COUNT(*) FROM {item} WHERE assignment_id = %s AND done_at IS NOT NULL".format(**t)
    return _HOT_SQL[name]


def assignment_done_count_fast(*, assignment: Assignment) -> int:
    """:func:`assignment_done_count` without building an ORM query (the submit's answer)."""
    with connection.cursor() as cursor:
        cursor.execute(_hot_sql("done"), [assignment.pk])
        return cursor.fetchone()[0]


def item_next_for_judge_fast(*, assignment: Assignment) -> JudgeItem | None:
    """:func:`item_next_for_judge` in one query: the item, its texts, the judge's done
    count, the token before it and whether the design shows context (the context
    itself, when shown, is read as :func:`original_context` does)."""
    if adaptive_study(assignment.study_id):  # adaptive allocation: the most informative item first
        adaptive_item_promote(assignment=assignment, item_model=AssignmentItem)
    with connection.cursor() as cursor:
        cursor.execute(_hot_sql("next"), [assignment.study_id, assignment.pk])
        row = cursor.fetchone()
    if row is None:
        return None
    token, position, paraphrase, original, original_id, document, original_position, done, previous, shown = row
    shown = bool(shown)
    before, after = (
        original_context(
            Original(pk=original_id, study_id=assignment.study_id, document=document, position=original_position)
        )
        if shown
        else ((), ())
    )
    return JudgeItem(
        token=token,
        position=position,
        total=assignment.n_items,
        done=done,
        original=original,
        paraphrase=paraphrase,
        scores=None,
        revision=0,
        previous_token=previous if position > 1 else None,
        serve_stamp=serve_stamp_make(token),
        context_shown=shown,
        context_before=before,
        context_after=after,
    )
