# Over 400 lines: this session's feature work (protocols, screening, field studies, speed) landed here; splitting it along its seams is issue 17's remaining step, done once so code moves only once.
"""Writes: studies, membership and imports. Views, APIs, tasks and commands call these."""

from __future__ import annotations

import hashlib
import logging
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError
from django.db.models.functions import Lower
from django.utils import timezone

from .enums import JobStatus, Role, SystemKind
from .importing import ImportIssue, ParsedStudyData, StudyImportError, parse_study_file
from .models import Candidate, ImportJob, Original, SignInLink, Study, StudyMembership, System
from .selectors import RESEARCHERS_GROUP

logger = logging.getLogger(__name__)


def researcher_grant(*, user: User) -> None:
    """Let ``user`` create studies (membership of the 'researchers' group)."""
    group, _ = Group.objects.get_or_create(name=RESEARCHERS_GROUP)
    user.groups.add(group)


@transaction.atomic
def study_create(*, name: str, owner: User, description: str = "", participant_title: str = "",
                 language: str = "") -> Study:
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
        raise ValidationError({f: "This field cannot be changed here." for f in unknown})
    study = Study.objects.select_for_update().get(pk=study.pk)
    for field, value in changes.items():
        setattr(study, field, value.strip() if isinstance(value, str) and field != "description" else value)
    study.full_clean()
    study.save()
    return study


#: Roles one account may not hold together in one study. An annotator sees several
#: candidates of one original side by side (and, before, the researcher's pair ids);
#: as a judge of the same study they could tell which system wrote what.
EXCLUSIVE_ROLES = frozenset({Role.JUDGE, Role.ANNOTATOR})


class RoleConflict(ValidationError):
    """Raised when a membership would make one account both judge and annotator of a study."""


def role_conflict_message(*, username: str, held: str, wanted: str) -> str:
    return (f"{username} is already {'an' if held == Role.ANNOTATOR else 'a'} {held} in this study and cannot also be "
            f"{'an' if wanted == Role.ANNOTATOR else 'a'} {wanted}: one account may not both rate candidates and align "
            f"them, or it could tell the systems apart. Remove the {held} role first, or use another account.")


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
        held = set(StudyMembership.objects.filter(study=study, user=user, role__in=EXCLUSIVE_ROLES - {role})
                   .values_list("role", flat=True))
        if held:
            raise RoleConflict(role_conflict_message(username=user.username, held=held.pop(), wanted=role), code="role_conflict")
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


def study_import_lock(*, study: Study) -> None:
    """Hold ``study``'s row lock until the surrounding transaction ends.

    Imports into one study then run one after the other: each reads the rows
    the previous one committed and refuses duplicates with a message, instead
    of both inserting and the second dying on the unique constraint (a 500).
    PostgreSQL: ``SELECT … FOR UPDATE``; SQLite takes the database write lock
    at ``BEGIN IMMEDIATE`` (settings), which serializes writers anyway.
    """
    list(Study.objects.select_for_update().filter(pk=study.pk).values_list("pk", flat=True))


#: What a concurrent writer's unique-constraint violation tells the user (the lock makes it rare).
CONCURRENT_IMPORT_MESSAGE = (
    "another import into this study wrote the same rows at the same time; nothing of this file was written "
    "(look at the study's data, then import again if rows are still missing)"
)


def study_import_parsed(*, study: Study, parsed: ParsedStudyData, replace: bool = False) -> dict:
    """Write a parsed file into ``study`` in one transaction: all of it or nothing.

    See :func:`_study_import_parsed`; a unique-constraint race that slips past
    :func:`study_import_lock` becomes a :class:`StudyImportError` (a 400), and
    the transaction is rolled back.
    """
    try:
        return _study_import_parsed(study=study, parsed=parsed, replace=replace)
    except IntegrityError:
        logger.warning("import into study %s raced another import", study.pk, exc_info=True)
        raise StudyImportError(parsed.filename, [ImportIssue(CONCURRENT_IMPORT_MESSAGE)]) from None


def _study_import_parsed(*, study: Study, parsed: ParsedStudyData, replace: bool = False) -> dict:
    """Write a parsed file into ``study`` in one transaction: all of it or nothing.

    Without ``replace`` the import may add systems to originals the study already
    has (same id and same text), but may not change an original's text or
    overwrite an existing candidate. With ``replace`` the study's imported data
    (originals, systems, candidates) is deleted first; that is refused once
    judgments or other work depend on it.
    Returns a summary dict of what was written.
    """
    with transaction.atomic():
        study_import_lock(study=study)
        if replace:
            try:
                Original.objects.filter(study=study).delete()
                System.objects.filter(study=study).delete()
            except ProtectedError:
                raise StudyImportError(
                    parsed.filename,
                    [ImportIssue(f"study '{study.name}' already has judgments or other work on its data; it cannot be replaced")],
                ) from None
        existing = {o.external_id: o for o in Original.objects.filter(study=study)}
        systems = {s.name: s for s in System.objects.filter(study=study)}
        issues: list[ImportIssue] = []
        for oid, odata in parsed.originals.items():
            old = existing.get(oid)
            if old is not None and old.text != odata.text:
                issues.append(ImportIssue(
                    f"study '{study.name}' already holds original '{oid}' with a different text; pass replace to replace the study's data",
                    line=odata.line, column="original"))
        existing_pairs = set(
            Candidate.objects.filter(original__study=study).values_list("original__external_id", "system__name")
        )
        for cand in parsed.candidates:
            if (cand.original_id, cand.system) in existing_pairs:
                issues.append(ImportIssue(
                    f"study '{study.name}' already holds a candidate for original '{cand.original_id}' and system '{cand.system}'; pass replace to replace the study's data",
                    line=cand.line))
            if len(issues) >= 50:
                break
        for name in parsed.systems:
            if name in systems and systems[name].kind != SystemKind.IMPORTED:
                issues.append(ImportIssue(f"system '{name}' is not an imported system and cannot receive imported candidates"))
        if issues:
            raise StudyImportError(parsed.filename, issues)

        next_pos = len(existing)
        new_originals = []
        for oid, odata in parsed.originals.items():
            if oid not in existing:
                new_originals.append(Original(
                    study=study, external_id=oid, text=odata.text, reference=odata.reference,
                    group=odata.group, document=odata.document, position=next_pos + odata.position))
        Original.objects.bulk_create(new_originals, batch_size=2000)
        new_systems = [System(study=study, name=name, kind=SystemKind.IMPORTED) for name in parsed.systems if name not in systems]
        System.objects.bulk_create(new_systems, batch_size=500)
        original_ids = dict(Original.objects.filter(study=study).values_list("external_id", "id"))
        system_ids = dict(System.objects.filter(study=study).values_list("name", "id"))
        Candidate.objects.bulk_create(
            [Candidate(original_id=original_ids[c.original_id], system_id=system_ids[c.system], text=c.text) for c in parsed.candidates],
            batch_size=2000,
        )
        return {
            "rows": parsed.row_count,
            "layout": parsed.layout,
            "format": parsed.format,
            "originals_added": len(new_originals),
            "systems_added": len(new_systems),
            "candidates_added": len(parsed.candidates),
            "replaced": replace,
        }


def study_import_file(
    *,
    study: Study,
    data: bytes,
    filename: str,
    fmt: str | None = None,
    replace: bool = False,
    user: User | None = None,
    background: bool | None = None,
) -> ImportJob:
    """Import a study file through the one path shared by CLI, form and API.

    Small files are parsed and written now; a :class:`StudyImportError` propagates
    and nothing is written. Files with more rows than
    ``PARAEVAL_IMPORT_BACKGROUND_ROWS`` (or ``background=True``) are stored and a
    Celery worker imports them; the returned job reports progress and errors.
    The size limit is checked before anything else.
    """
    max_bytes = settings.PARAEVAL_IMPORT_MAX_BYTES
    if len(data) > max_bytes:
        raise StudyImportError(filename, [ImportIssue(
            f"the file is {len(data):,} bytes; the limit is {max_bytes:,} (PARAEVAL_IMPORT_MAX_BYTES)")])
    from .importing import detect_format

    fmt = detect_format(filename, fmt)
    if background is None:
        background = data.count(b"\n") > settings.PARAEVAL_IMPORT_BACKGROUND_ROWS
    if not background:
        parsed = parse_study_file(data, filename=filename, fmt=fmt, max_bytes=max_bytes)
        with transaction.atomic():
            summary = study_import_parsed(study=study, parsed=parsed, replace=replace)
            now = timezone.now()
            return ImportJob.objects.create(
                study=study, created_by=user, filename=filename, format=fmt, replace=replace,
                row_count=parsed.row_count, summary=summary, status=JobStatus.SUCCEEDED,
                progress_done=parsed.row_count, progress_total=parsed.row_count, started_at=now, finished_at=now,
            )
    with transaction.atomic():
        job = ImportJob(study=study, created_by=user, filename=filename, format=fmt, replace=replace,
                        progress_total=max(1, data.count(b"\n")), phase="queued")
        job.file.save(filename, ContentFile(data), save=False)
        job.save()
        from .tasks import import_job_run_task

        transaction.on_commit(lambda: job_enqueue(import_job_run_task, job.pk))
    return job


def job_enqueue(task, *args) -> bool:
    """Send a task to the broker; if the broker is away, log and leave the job queued.

    A web request must never fail because the broker is down: the job row already
    exists, and ``manage.py requeue_jobs`` (or the next worker start) sends it again.
    """
    try:
        task.apply_async(args=args)
        return True
    except Exception:  # kombu raises many kinds of connection errors
        logger.warning("broker unavailable; %s%r stays queued", task.name, args, exc_info=True)
        return False


def _job_update(job_id: int, **fields) -> None:
    ImportJob.objects.filter(pk=job_id).update(**fields, updated_at=timezone.now())


def import_job_run(*, job_id: int, progress_every: int = 1000) -> ImportJob:
    """Run a queued import (the worker's side). Safe to run twice: a finished job is left alone."""
    job = ImportJob.objects.select_related("study").get(pk=job_id)
    if job.is_finished:
        return job
    _job_update(job.pk, status=JobStatus.RUNNING, phase="reading", started_at=timezone.now(), error="")
    try:
        with job.file.open("rb") as fh:
            data = fh.read()

        def progress(n: int) -> None:
            _job_update(job.pk, progress_done=n)

        parsed = parse_study_file(data, filename=job.filename, fmt=job.format,
                                  max_bytes=settings.PARAEVAL_IMPORT_MAX_BYTES, progress=progress)
        _job_update(job.pk, phase="writing", progress_done=parsed.row_count, progress_total=parsed.row_count)
        with transaction.atomic():
            locked = ImportJob.objects.select_for_update().get(pk=job.pk)
            if locked.status == JobStatus.SUCCEEDED:
                return locked  # another worker finished it meanwhile
            summary = study_import_parsed(study=job.study, parsed=parsed, replace=job.replace)
            ImportJob.objects.filter(pk=job.pk).update(
                status=JobStatus.SUCCEEDED, phase="done", summary=summary, row_count=parsed.row_count,
                finished_at=timezone.now(), updated_at=timezone.now())
    except StudyImportError as exc:
        _job_update(job.pk, status=JobStatus.FAILED, phase="failed", error=exc.describe(), finished_at=timezone.now())
    job.refresh_from_db()
    return job


def jobs_to_resend(model, *, stale_after: timedelta | None = None, queued_after: timedelta | None = None) -> list[int]:
    """Ids of ``model`` jobs to send to the broker again: queued ones, and with
    ``stale_after`` running ones whose worker stopped its heartbeat that long ago.
    See :func:`config.recovery.jobs_to_resend`."""
    from config.recovery import jobs_to_resend

    return jobs_to_resend(model, stale_after=stale_after, queued_after=queued_after)


def jobs_requeue_stale(*, stale_after: timedelta | None = None, queued_after: timedelta | None = None) -> int:
    """Send queued (and, with ``stale_after``, stalled running) import and generation jobs again.

    Each is a resent message: it runs only if it can claim its job (``config.recovery``).
    """
    from config.recovery import job_resend

    from .tasks import import_job_run_task, system_generate_run_task

    n = 0
    for pk in jobs_to_resend(ImportJob, stale_after=stale_after, queued_after=queued_after):
        job = ImportJob.objects.get(pk=pk)
        # Generation jobs reuse ImportJob for their progress; they carry their request in summary.
        task = system_generate_run_task if "request" in (job.summary or {}) else import_job_run_task
        n += job_resend(task, pk, stale_after=stale_after)
    return n


# --- people: accounts and membership without the admin -------------------------------------

#: Roles a researcher gives through the "add people" form, API and command.
PARTICIPANT_ROLES = (Role.JUDGE, Role.ANNOTATOR)
#: Generated passwords: 4 groups of 5 from an alphabet without look-alikes (≈ 100 bits).
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


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def signin_link_create(*, user: User, study: Study | None = None, created_by: User | None = None,
                       hours: float | None = None) -> str:
    """Make a single-use sign-in link for ``user``; return its secret (store only its hash).

    The secret is 32 random bytes (URL-safe); the row keeps its SHA-256, so the
    link cannot be rebuilt from the database. It expires after ``hours``
    (``PARAEVAL_SIGNIN_LINK_HOURS``, 72 by default).
    """
    hours = settings.PARAEVAL_SIGNIN_LINK_HOURS if hours is None else hours
    token = secrets.token_urlsafe(32)
    SignInLink.objects.create(user=user, token_hash=_token_hash(token), study=study, created_by=created_by,
                              expires_at=timezone.now() + timedelta(hours=hours))
    return token


class SignInLinkInvalid(Exception):
    """A sign-in link that does not exist (404), was used or expired (410); the message says which."""

    def __init__(self, message: str, status: int = 404):
        super().__init__(message)
        self.status = status


@transaction.atomic
def signin_link_redeem(*, token: str) -> User:
    """Use a sign-in link: mark it used and return its user. Raises :class:`SignInLinkInvalid`.

    The row is locked, so two tabs opening the same link cannot both sign in.
    """
    if not isinstance(token, str) or not 20 <= len(token) <= 100:
        raise SignInLinkInvalid("This sign-in link is not valid. Ask the researcher for a new one.")
    link = SignInLink.objects.select_for_update().select_related("user").filter(token_hash=_token_hash(token)).first()
    if link is None:
        raise SignInLinkInvalid("This sign-in link is not valid. Ask the researcher for a new one.")
    if link.used_at is not None:
        raise SignInLinkInvalid("This sign-in link was already used; it works only once. Sign in with your password, "
                                "or ask the researcher for a new link.", status=410)
    if link.expires_at <= timezone.now() or not link.user.is_active:
        raise SignInLinkInvalid("This sign-in link has expired. Ask the researcher for a new one.", status=410)
    link.used_at = timezone.now()
    link.save(update_fields=["used_at", "updated_at"])
    return link.user


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
    held = set(StudyMembership.objects.filter(study=study, user__in=[u for _, _, u in users], role__in=other)
               .values_list("user_id", flat=True))
    return [f"{_line_label(n, text)}: {role_conflict_message(username=u.username, held=next(iter(other)), wanted=role)}"
            for n, text, u in users if u.pk in held]


def _after_members_added(study: Study, users: list[User], role: str) -> None:
    if role == Role.JUDGE:
        # A judge added after judging opened gets their own list at once.
        from annotation.judging.services import assignment_ensure_for_judge

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


def study_people_create(*, study: Study | None, lines: list[tuple[int, str]] | list[str], role: str | None,
                        delivery: str = "password", created_by: User | None = None,
                        researcher: bool = False) -> list[NewPerson]:
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
    taken = set(User.objects.annotate(lower=Lower("username")).filter(lower__in=[u.lower() for _, _, u, _ in wanted])
                .values_list("lower", flat=True))
    issues += [f"{_line_label(n, text)}: an account with this name exists (add it as an existing user instead)"
               for n, text, username, _ in wanted if username.lower() in taken]
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
