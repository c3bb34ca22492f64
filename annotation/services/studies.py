"""Writes: studies (creation, the editable fields) and who may create them (researchers)."""

from __future__ import annotations

from django.contrib.auth.models import Group, User
from django.core.exceptions import ValidationError
from django.db import transaction

from ..enums import Role
from ..models import Study, StudyMembership
from ..selectors import RESEARCHERS_GROUP


def researcher_grant(*, user: User) -> None:
    """Let ``user`` create studies (membership of the 'researchers' group)."""
    group, _ = Group.objects.get_or_create(name=RESEARCHERS_GROUP)
    user.groups.add(group)


@transaction.atomic
def study_create(
    *, name: str, owner: User, description: str = "", participant_title: str = "", language: str = ""
) -> Study:
    study = Study(name=name.strip(), owner=owner, description=description)
    if language:
        study.language = language
    if participant_title.strip():
        study.participant_title = participant_title.strip()
    study.full_clean()
    study.save()
    StudyMembership.objects.get_or_create(study=study, user=owner, role=Role.RESEARCHER)
    return study


#: Fields a researcher may change with :func:`study_update`.
STUDY_EDITABLE_FIELDS = ("name", "description", "participant_title", "language")


@transaction.atomic
def study_update(*, study: Study, changes: dict) -> Study:
    """Change a study's name, description, participant title or language (others in ``changes`` are refused).

    Raises ``ValidationError`` (field-keyed) for unknown fields, an empty title or a
    name another study has; nothing is saved then.
    """
    unknown = sorted(set(changes) - set(STUDY_EDITABLE_FIELDS))
    if unknown:
        raise ValidationError(dict.fromkeys(unknown, "This field cannot be changed here."))
    study = Study.objects.select_for_update().get(pk=study.pk)
    for field, value in changes.items():
        setattr(study, field, value.strip() if isinstance(value, str) and field != "description" else value)
    study.full_clean()
    study.save()
    return study
