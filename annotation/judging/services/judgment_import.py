"""The judges of judgments collected elsewhere, which every protocol's import shares: an
imported participant's account per name in the file (``<name>@s<study>.imported``, never a
login), found or created, and the names the study refuses.

Each protocol's import is in its package (the absolute protocol's long format of judgments:
:mod:`annotation.judging.protocols.absolute.imports`; ESA's and ranking's ``imports.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User

from annotation.enums import Role
from annotation.importing.reading import ImportIssue
from annotation.models import Study
from annotation.services.people import IMPORTED_ACCOUNT_SUFFIX

from ..models import Assignment


@dataclass(frozen=True)
class JudgmentsImported:
    """What a protocol's import of judgments wrote, as every protocol counts it (a protocol's
    summary adds its own counts and its ``describe``)."""

    rows: int
    judgments: int
    revisions: int  # judgments that revise an earlier one of the same judge and item
    judges: int
    judges_created: int  # new imported participants


#: Imported participants' usernames: ``<name>@s<study id>.imported`` (never a login:
#: their password is unusable), so two studies' "worker 7" stay two people. No one may
#: create an account with this ending (:data:`~annotation.services.people.IMPORTED_ACCOUNT_SUFFIX`).


def imported_judge_username(study: Study, name: str) -> str:
    return f"{name}@s{study.pk}{IMPORTED_ACCOUNT_SUFFIX}"


def _is_imported_judge_of(user: User, study: Study) -> bool:
    """Whether ``user`` is the account an import into ``study`` created (and nothing else).

    Anyone who may create accounts could have made one under an imported judge's name first
    (``w1@s5.imported``), with a sign-in link or a password, to have a study's imported
    judgments attached to an account they can use. An import's own account never signs in,
    has no password, belongs to no study, and holds an assignment in this study (written in
    the transaction that created it, never deleted while it has judgments).
    """
    return (
        not user.has_usable_password()
        and user.last_login is None
        and not user.is_staff
        and not user.is_superuser
        and not user.study_memberships.exists()
        and Assignment.objects.filter(study=study, judge=user).exists()
    )


def judges_for_import(*, study: Study, names: list[str]) -> tuple[dict[str, User], int, list[str]]:
    """The accounts of a file's judges: (account by name, accounts created, names refused).

    A name that is the username of a judge of the study is that judge; any other name is an
    imported participant (:func:`imported_judge_username`, no password), created on the first
    import and found again by later ones. An existing account under that name that an import
    into this study did not create (:func:`_is_imported_judge_of`) is never used: its name is
    returned as refused, and the caller refuses the file (nothing is attached to it). The
    caller holds the study's lock and writes each new account's assignment in its transaction.
    """
    members = {
        u.username: u
        for u in User.objects.filter(
            username__in=names, study_memberships__study=study, study_memberships__role=Role.JUDGE
        )
    }
    existing = {
        u.username: u for u in User.objects.filter(username__in=[imported_judge_username(study, n) for n in names])
    }
    judges: dict[str, User] = {}
    refused: list[str] = []
    created = 0
    for n in names:
        user = members.get(n) or existing.get(imported_judge_username(study, n))
        if user is None:
            user = User(username=imported_judge_username(study, n))
            user.set_unusable_password()
            user.save()
            created += 1
        elif n not in members and not _is_imported_judge_of(user, study):
            refused.append(n)
            continue
        judges[n] = user
    return judges, created, refused


def judges_refused_issues(study: Study, refused: list[str]) -> list:
    """The import issues that name each refused judge (:func:`judges_for_import`)."""
    return [
        ImportIssue(
            f"judge '{n}': an account named '{imported_judge_username(study, n)}' exists that no import into "
            "this study created, so nothing is attached to it; give this judge another name in the file",
            column="judge",
        )
        for n in refused
    ]
