"""Commands work the way docs/people.md and docs/researchers.md write them (issue 28, item 2)."""

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from annotation.enums import Role
from annotation.models import Candidate, Study, StudyMembership


def _data(tmp_path):
    f = tmp_path / "data.csv"
    f.write_text("original_id,original,system,candidate\n1,Hello there.,human,Hi there.\n", encoding="utf-8")
    return f


def test_import_study_create_uses_the_only_researcher_as_owner(researcher, tmp_path, capsys):
    call_command("import_study", "--study", "My study", "--create", str(_data(tmp_path)))
    study = Study.objects.get(name="My study")
    assert study.owner == researcher
    assert Candidate.objects.filter(original__study=study).count() == 1


def test_import_study_create_with_several_researchers_names_them_and_asks_for_owner(make_user, tmp_path):
    make_user("ria", researcher=True)
    make_user("sam", researcher=True)
    with pytest.raises(CommandError) as info:
        call_command("import_study", "--study", "My study", "--create", str(_data(tmp_path)))
    assert "several researchers (ria, sam)" in str(info.value)
    assert "--owner USERNAME" in str(info.value)
    assert not Study.objects.filter(name="My study").exists()


def test_import_study_create_with_no_researcher_points_to_create_researcher(db, tmp_path):
    with pytest.raises(CommandError) as info:
        call_command("import_study", "--study", "My study", "--create", str(_data(tmp_path)))
    assert "create_researcher" in str(info.value)


def test_add_participants_takes_names_after_the_options(study, capsys):
    call_command("add_participants", str(study.pk), "--role", "judge", "--new", "--link", "c@lab.org", "d@lab.org")
    out = capsys.readouterr().out
    assert sum(line.split("\t")[-1].startswith("http") for line in out.splitlines()) == 2
    judges = StudyMembership.objects.filter(study=study, role=Role.JUDGE).values_list("user__email", flat=True)
    assert set(judges) >= {"c@lab.org", "d@lab.org"}
    assert User.objects.filter(email="c@lab.org").exists()


def test_add_participants_takes_names_before_the_options_too(study, make_user):
    make_user("ann")
    make_user("bob")
    call_command("add_participants", study.name, "ann", "bob", "--role", "judge")
    assert set(
        StudyMembership.objects.filter(study=study, role=Role.JUDGE).values_list("user__username", flat=True)
    ) >= {"ann", "bob"}
