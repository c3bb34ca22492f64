"""Writes: one account's role in a study, and the rule that one account is never both judge and annotator."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from ..enums import Role
from ..models import Study, StudyMembership

#: Roles one account may not hold together in one study. An annotator sees several
#: candidates of one original side by side (and, before, the researcher's pair ids);
#: as a judge of the same study they could tell which system wrote what.
EXCLUSIVE_ROLES = frozenset({Role.JUDGE, Role.ANNOTATOR})


class RoleConflict(ValidationError):
    """Raised when a membership would make one account both judge and annotator of a study."""


def role_conflict_message(*, username: str, held: str, wanted: str) -> str:
    return (
        f"{username} is already {'an' if held == Role.ANNOTATOR else 'a'} {held} in this study and cannot also be "
        f"{'an' if wanted == Role.ANNOTATOR else 'a'} {wanted}: one account may not both rate candidates and align "
        f"them, or it could tell the systems apart. Remove the {held} role first, or use another account."
    )


@transaction.atomic
def study_member_add(*, study: Study, user: User, role: str) -> StudyMembership:
    """Give ``user`` a role in ``study`` (idempotent).

    Refuses (:class:`RoleConflict`) making one account both judge and annotator of
    the same study. The study row is locked first, so two requests adding the two
    roles at once cannot both pass the check.
    Other apps react to new judges/annotators through their own services (e.g.
    building a late judge's assignment), called by the view that adds members.
    """
    membership = StudyMembership(study=study, user=user, role=role)
    membership.full_clean(validate_constraints=False)
    Study.objects.select_for_update().filter(pk=study.pk).first()
    if role in EXCLUSIVE_ROLES:
        held = set(
            StudyMembership.objects.filter(study=study, user=user, role__in=EXCLUSIVE_ROLES - {role}).values_list(
                "role", flat=True
            )
        )
        if held:
            raise RoleConflict(
                role_conflict_message(username=user.username, held=held.pop(), wanted=role), code="role_conflict"
            )
    membership, _ = StudyMembership.objects.get_or_create(study=study, user=user, role=role)
    return membership


@transaction.atomic
def study_member_remove(*, study: Study, user: User, role: str) -> bool:
    """Take ``role`` in ``study`` away from ``user``. Returns whether there was such a membership.

    The owner's researcher role cannot be removed (``ValidationError``): a study
    always keeps someone who can manage it. Work already done (judgments,
    alignments) stays; it is the researcher's data.
    """
    if role == Role.RESEARCHER and study.owner_id == user.pk:
        raise ValidationError(f"{user.username} owns this study and stays one of its researchers.")
    deleted, _ = StudyMembership.objects.filter(study=study, user=user, role=role).delete()
    return bool(deleted)
