"""Writes: people without the admin: new accounts and existing ones given a role, all of a list or none."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models.functions import Lower

from ..enums import Role
from ..models import Study, StudyMembership
from .membership import EXCLUSIVE_ROLES, role_conflict_message
from .signin import signin_link_create
from .studies import researcher_grant

#: Roles a researcher gives through the "add people" form, API and command.
PARTICIPANT_ROLES = (Role.JUDGE, Role.ANNOTATOR)
#: Generated passwords: 4 groups of 5 from an alphabet without look-alikes (≈ 100 bits).
#: The ending of imported judges' usernames (``annotation.judging.services.judgment_import``),
#: which no one may take for a new account.
IMPORTED_ACCOUNT_SUFFIX = ".imported"
_PASSWORD_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"


class PeopleError(ValidationError):
    """Bulk people operations refused as a whole; ``issues`` says what is wrong with which line."""

    def __init__(self, issues: list[str]):
        self.issues = issues
        super().__init__(issues)


@dataclass(frozen=True)
class NewPerson:
    """An account just made: ``password`` or ``signin_token`` is the one secret to hand over (shown once)."""

    username: str
    email: str
    password: str | None = None
    signin_token: str | None = None


def password_generate() -> str:
    return "-".join("".join(secrets.choice(_PASSWORD_ALPHABET) for _ in range(5)) for _ in range(4))


def _line_label(n: int, text: str) -> str:
    return f"line {n} (“{text}”)"


def people_lines(text: str) -> list[tuple[int, str]]:
    """Non-empty lines of a pasted list (commas and semicolons also separate), numbered from 1."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for part in line.replace(";", ",").split(","):
            if part.strip():
                out.append((n, part.strip()))
    return out


def _check_role(role: str | None) -> str:
    if role is None or role not in PARTICIPANT_ROLES:
        raise PeopleError([f"role '{role}' is not one of: {', '.join(PARTICIPANT_ROLES)}"])
    return role


def _numbered(lines: list[tuple[int, str]] | list[str]) -> list[tuple[int, str]]:
    """``(line number, text)`` pairs: ``lines`` as given when numbered, else numbered from 1."""
    return [x if isinstance(x, tuple) else (n, x) for n, x in enumerate(lines, 1)]


def _role_issues(study: Study, users: list[tuple[int, str, User]], role: str) -> list[str]:
    """Per-line refusals of the judge+annotator rule for existing accounts."""
    other = EXCLUSIVE_ROLES - {role}
    held = set(
        StudyMembership.objects.filter(study=study, user__in=[u for _, _, u in users], role__in=other).values_list(
            "user_id", flat=True
        )
    )
    return [
        f"{_line_label(n, text)}: {role_conflict_message(username=u.username, held=next(iter(other)), wanted=role)}"
        for n, text, u in users
        if u.pk in held
    ]


def _after_members_added(study: Study, users: list[User], role: str) -> None:
    if role == Role.JUDGE:
        # A judge added after judging opened gets their own list at once.
        from annotation.judging.services.assignments import assignment_ensure_for_judge

        for user in users:
            assignment_ensure_for_judge(study=study, judge=user)


def study_people_add_existing(*, study: Study, usernames: list[tuple[int, str]] | list[str], role: str) -> list[User]:
    """Give existing accounts ``role`` in ``study``: all of them, or none.

    ``usernames`` are names (or ``(line number, name)`` pairs, for messages). Unknown
    names, duplicates and judge+annotator conflicts are refused together, each with
    its line, and nothing is written.
    """
    _check_role(role)
    numbered = _numbered(usernames)
    if not numbered:
        raise PeopleError(["the list is empty: give one username per line"])
    found = {u.username: u for u in User.objects.filter(username__in=[u for _, u in numbered])}
    issues, seen, users = [], set(), []
    for n, name in numbered:
        if name in seen:
            issues.append(f"{_line_label(n, name)}: appears twice")
        elif name not in found:
            issues.append(f"{_line_label(n, name)}: no user has this name (make a new account instead)")
        else:
            users.append((n, name, found[name]))
        seen.add(name)
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        issues += _role_issues(study, users, role)
        if issues:
            raise PeopleError(issues)
        for _, _, user in users:
            StudyMembership.objects.get_or_create(study=study, user=user, role=role)
        _after_members_added(study, [u for _, _, u in users], role)
    return [u for _, _, u in users]


def study_people_create(
    *,
    study: Study | None,
    lines: list[tuple[int, str]] | list[str],
    role: str | None,
    delivery: str = "password",
    created_by: User | None = None,
    researcher: bool = False,
) -> list[NewPerson]:
    """Make new accounts from names or emails, all or none, and give them ``role`` in ``study``.

    Each line is a username or an email address (then it is the username too).
    ``delivery`` is ``"password"`` (a generated password, returned once, stored only
    hashed) or ``"link"`` (no usable password; a single-use sign-in link is returned
    once, stored hashed). Invalid names, duplicates, and names that already exist
    are refused together, each with its line. ``researcher=True`` (with no study)
    makes researchers, who may create studies.
    """
    from django.contrib.auth.validators import UnicodeUsernameValidator
    from django.core.validators import validate_email

    if delivery not in ("password", "link"):
        raise PeopleError([f"delivery '{delivery}' is not 'password' or 'link'"])
    study_role = _check_role(role) if study is not None else ""  # used only with a study
    numbered = _numbered(lines)
    if not numbered:
        raise PeopleError(["the list is empty: give one name or email address per line"])
    validator = UnicodeUsernameValidator()
    issues, seen, wanted = [], set(), []
    for n, text in numbered:
        email = ""
        if "@" in text:  # meant as an email address: it must be one
            try:
                validate_email(text)
            except ValidationError:
                issues.append(f"{_line_label(n, text)}: not a valid email address")
                continue
            email = text.lower()
        username = email or text
        if len(username) > 150:
            issues.append(f"{_line_label(n, text)}: longer than 150 characters")
            continue
        if username.lower().endswith(IMPORTED_ACCOUNT_SUFFIX):
            # Imported judges' accounts (``w1@s5.imported``) are made by judgment imports only:
            # an account made first under such a name must not collect a study's imported work.
            issues.append(f"{_line_label(n, text)}: names ending in '{IMPORTED_ACCOUNT_SUFFIX}' are reserved")
            continue
        try:
            validator(username)
        except ValidationError:
            issues.append(f"{_line_label(n, text)}: a username may hold only letters, digits and @ . + - _")
            continue
        if username.lower() in seen:
            issues.append(f"{_line_label(n, text)}: appears twice")
            continue
        seen.add(username.lower())
        wanted.append((n, text, username, email))
    # Case-insensitive: "Bob" next to an existing "bob" would be two accounts people confuse.
    taken = set(
        User.objects.annotate(lower=Lower("username"))
        .filter(lower__in=[u.lower() for _, _, u, _ in wanted])
        .values_list("lower", flat=True)
    )
    issues += [
        f"{_line_label(n, text)}: an account with this name exists (add it as an existing user instead)"
        for n, text, username, _ in wanted
        if username.lower() in taken
    ]
    if issues:
        raise PeopleError(issues)
    made: list[NewPerson] = []
    with transaction.atomic():
        users = []
        for _, _, username, email in wanted:
            user = User(username=username, email=email)
            password = password_generate() if delivery == "password" else None
            if password:
                user.set_password(password)
            else:
                user.set_unusable_password()
            user.full_clean()
            user.save()
            if researcher:
                researcher_grant(user=user)
            if study is not None:
                StudyMembership.objects.create(study=study, user=user, role=study_role)
            token = signin_link_create(user=user, study=study, created_by=created_by) if delivery == "link" else None
            made.append(NewPerson(username=username, email=email, password=password, signin_token=token))
            users.append(user)
        if study is not None:
            _after_members_added(study, users, study_role)
    return made
