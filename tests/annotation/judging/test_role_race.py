"""Two researchers giving one account the judge and the annotator role of a study at
the same moment: exactly one wins, the other is refused with the reason (threads, real
transactions; CI runs it on SQLite and PostgreSQL)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from annotation.enums import Role
from annotation.models import StudyMembership
from annotation.services.membership import RoleConflict, study_member_add

from .conftest import real_database_file

pytestmark = pytest.mark.django_db(transaction=True)


def test_racing_judge_and_annotator_grants_leave_exactly_one_role(study, make_user, tmp_path):
    with real_database_file(tmp_path):
        _race(study, make_user)


def _race(study, make_user):
    for n in range(8):
        user = make_user(f"racer{n}")
        barrier = threading.Barrier(2)
        outcomes: list[str] = []

        def grant(role):
            try:
                barrier.wait(timeout=10)
                study_member_add(study=study, user=user, role=role)
                outcomes.append("added")
            except RoleConflict as exc:
                assert "cannot also be" in exc.messages[0]
                outcomes.append("refused")
            finally:
                connection.close()

        threads = [threading.Thread(target=grant, args=(r,)) for r in (Role.JUDGE, Role.ANNOTATOR)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
        assert sorted(outcomes) == ["added", "refused"]
        assert StudyMembership.objects.filter(study=study, user=user).count() == 1
