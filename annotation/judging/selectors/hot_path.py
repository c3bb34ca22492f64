"""The judge's hot path: ``items/next`` and the submit's answer in fixed SQL.

``items/next`` and the submit are what every judge calls every few seconds. Building
and compiling an ORM query costs 0.5–2.5 ms of CPU (more than PostgreSQL spends
answering it), so the reads below are fixed SQL strings, portable between
PostgreSQL and SQLite and written once per process from the models' table names.
Each one is one round trip. Their results equal those of the ORM selectors in
:mod:`.judge` (the tests of the judging API pin the answers and the number of queries).
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import connection

from annotation.adaptive.publication import adaptive_study
from annotation.adaptive.services import adaptive_item_promote
from annotation.enums import Role
from annotation.models import Original, Study

from ..models import Assignment, JudgingDesign
from ..protocols.absolute.models import AssignmentItem
from ..tokens import serve_stamp_make
from .judge import JudgeItem, original_context

_HOT_SQL: dict[str, str] = {}


def _hot_sql(name: str) -> str:
    if not _HOT_SQL:
        from annotation.models import Candidate, StudyMembership

        t = {
            "study": Study._meta.db_table,
            "member": StudyMembership._meta.db_table,
            "assignment": Assignment._meta.db_table,
            "item": AssignmentItem._meta.db_table,
            "design": JudgingDesign._meta.db_table,
            "candidate": Candidate._meta.db_table,
            "original": Original._meta.db_table,
        }
        _HOT_SQL["study"] = (
            "SELECT s.*, EXISTS(SELECT 1 FROM {member} a WHERE a.study_id = s.id AND a.user_id = %s AND a.role = %s)"
            " AS judge_also_annotates FROM {study} s WHERE s.id = %s AND EXISTS(SELECT 1 FROM {member} m"
            " WHERE m.study_id = s.id AND m.user_id = %s AND m.role = %s)"
        ).format(**t)
        # The assignment once it is the judge's: built late for them, or the design is frozen
        # (the rule of services.assignment_ensure_for_judge, which handles every other case).
        _HOT_SQL["assignment"] = (
            "SELECT a.* FROM {assignment} a WHERE a.study_id = %s AND a.judge_id = %s AND (a.joined_late OR"
            " EXISTS(SELECT 1 FROM {design} g WHERE g.study_id = a.study_id AND g.opened_at IS NOT NULL))"
        ).format(**t)
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


def study_for_judge(*, study_id: int, judge: User) -> Study | None:
    """The study if ``judge`` is one of its judges, else None; one query. The study's
    ``judge_also_annotates`` says whether the account is also an annotator of it
    (:func:`annotation.selectors.user_role_conflict`: such an account is held out)."""
    rows = list(
        Study.objects.raw(_hot_sql("study"), [judge.pk, Role.ANNOTATOR.value, study_id, judge.pk, Role.JUDGE.value])
    )
    if not rows:
        return None
    study = rows[0]
    # A column of the raw SQL, not a field: the Study type (django-stubs) cannot know it.
    study.judge_also_annotates = bool(study.judge_also_annotates)  # type: ignore[attr-defined]
    return study


def assignment_ready_for_judge(*, study: Study, judge: User) -> Assignment | None:
    """The judge's assignment if it exists and is theirs to judge (built late for them,
    or the study's opening has finished); else None, and
    ``services.assignment_ensure_for_judge`` decides (and may build it). One query."""
    rows = list(Assignment.objects.raw(_hot_sql("assignment"), [study.pk, judge.pk]))
    return rows[0] if rows else None


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
        adaptive_item_promote(assignment=assignment)
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
