"""The judge's hot path, the part every protocol shares: the judge's study and assignment in
fixed SQL.

Every judge request of every protocol starts here, every few seconds. Building and compiling
an ORM query costs 0.5–2.5 ms of CPU (more than PostgreSQL spends answering it), so the reads
below are fixed SQL strings, portable between PostgreSQL and SQLite and written once per
process from the models' table names; each one is one round trip. A protocol's own hot reads
are in its package (the absolute protocol's ``items/next`` and the submit's answer:
:mod:`annotation.judging.protocols.absolute.hot_path`).
"""

from __future__ import annotations

from django.contrib.auth.models import User

from annotation.enums import Role
from annotation.models import Study, StudyMembership

from ..models import Assignment, JudgingDesign

_HOT_SQL: dict[str, str] = {}


def _hot_sql(name: str) -> str:
    if not _HOT_SQL:
        t = {
            "study": Study._meta.db_table,
            "member": StudyMembership._meta.db_table,
            "assignment": Assignment._meta.db_table,
            "design": JudgingDesign._meta.db_table,
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
