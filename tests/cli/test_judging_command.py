"""manage.py judging: a study's judging opened, closed, reopened, reset and shown from the
command line, through the services the pages use (issue 43: no command did it)."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from annotation.enums import Role, StudyStatus
from annotation.judging.models import Assignment
from annotation.services.membership import study_member_add
from tests.factories import study_with_data

pytestmark = pytest.mark.django_db


def _run(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command("judging", *args, stdout=out)
    return out.getvalue()


def test_a_study_is_opened_closed_reopened_and_shown_by_name_or_id(researcher, make_user):
    study = study_with_data(owner=researcher, n_originals=4, name="CLI study")
    study_member_add(study=study, user=make_user("ann"), role=Role.JUDGE)
    assert "draft" in _run("CLI study", "status")
    said = _run("CLI study", "open")
    assert "opened 'CLI study'" in said and "1 judges" in said
    study.refresh_from_db()
    assert study.status == StudyStatus.OPEN and Assignment.objects.filter(study=study).count() == 1
    shown = _run(str(study.pk), "status")
    assert "open" in shown and "ann" in shown and "0 of" in shown
    assert "closed" in _run(str(study.pk), "close")
    study.refresh_from_db()
    assert study.status == StudyStatus.CLOSED
    _run("CLI study", "reopen")
    study.refresh_from_db()
    assert study.status == StudyStatus.OPEN


def test_reset_asks_for_yes_and_then_makes_the_study_a_draft_again(researcher, make_user):
    study = study_with_data(owner=researcher, n_originals=4, name="CLI reset")
    study_member_add(study=study, user=make_user("ann"), role=Role.JUDGE)
    _run("CLI reset", "open")
    with pytest.raises(CommandError, match="pass --yes"):
        _run("CLI reset", "reset")
    assert Assignment.objects.filter(study=study).exists()
    assert "draft" in _run("CLI reset", "reset", "--yes")
    study.refresh_from_db()
    assert study.status == StudyStatus.DRAFT and not Assignment.objects.filter(study=study).exists()


def test_refusals_are_the_services_words_and_an_unknown_study_lists_the_studies(researcher):
    study_with_data(owner=researcher, n_originals=2, name="Known study")
    with pytest.raises(CommandError, match="Only an open study can be closed"):
        _run("Known study", "close")
    with pytest.raises(CommandError, match=r"no study named 'Nown study'.*Known study"):
        _run("Nown study", "status")
