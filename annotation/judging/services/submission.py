"""Submitting a judgment, for every protocol: the shared core (:func:`submission_store`:
the item lock, idempotency keys and replays, revisions, the serve stamp and active time,
the screened-out and open checks, the automatic QC screen-out after a new judgment), the
one path of an item or an attention check drawn among the items (:func:`entry_answer_submit`,
:func:`attention_store`), and the :class:`Envelope` every submission carries through them.

A protocol's own submit (``judgment_submit``, ``esa_submit``, ``side_by_side_submit``,
``ranking_submit`` in its package's ``services``) checks its answer and hands it here; the
absolute one is on the judge's hot path (every judge, every few seconds), with the fast
selectors of :mod:`annotation.judging.selectors.hot_path`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict, Unpack

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Exists, Max, Q
from django.utils import timezone
from django.utils.translation import gettext

from annotation.enums import StudyStatus
from annotation.models import Study

from ..enums import MAX_ITEM_SECONDS, JudgmentSource
from ..errors import ItemNotFound, JudgmentInvalid, KeyReused, StudyNotOpen
from ..models import Assignment, AttentionAnswer, AttentionCheck
from ..screening import ScreenedOut, attention_record
from ..tokens import serve_stamp_read

KEY_MIN_LENGTH, KEY_MAX_LENGTH = 8, 64


class Envelope(TypedDict):
    """What every submission carries besides its answer, from the door (page or API) through
    the protocol's submit to the core, whatever the protocol: who answers (``judge``) which
    item or attention check (``token``) of which study, under which idempotency ``key``, the
    ``serve_stamp`` the item was served with, the judge's ``active_seconds`` as the client
    measured them (checked by :func:`active_seconds_clean`; absent: not measured) and the door
    it came through (``source``, a :class:`~annotation.judging.enums.JudgmentSource`; absent:
    the API). The doors pass what they were sent: the core checks each field."""

    study: Study
    judge: User
    token: str
    key: str
    serve_stamp: str
    active_seconds: NotRequired[object]
    source: NotRequired[str]


@dataclass(frozen=True)
class SubmitResult:
    judgment: Any  # a row of the protocol's judgment table (its unit's judgment_model)
    created: bool  # False: the key was seen before and this is the stored judgment
    screened_out: bool = False  # the automatic QC screened the judge out after this judgment
    # An attention check answered through :func:`attention_store`: whether its (first) answer
    # failed. The page may say so (the "warn" policy); nothing else reads it.
    check_failed: bool = False


def key_clean(key: object) -> str:
    """The idempotency key, checked: 8–64 ASCII letters, digits, '-' or '_' (:class:`JudgmentInvalid`)."""
    if (
        not isinstance(key, str)
        or not KEY_MIN_LENGTH <= len(key) <= KEY_MAX_LENGTH
        or not all(ch.isascii() and (ch.isalnum() or ch in "-_") for ch in key)
    ):
        raise JudgmentInvalid(
            f"key must be {KEY_MIN_LENGTH}–{KEY_MAX_LENGTH} characters of letters, digits, '-' or '_'",
            field_errors={"key": ["invalid idempotency key"]},
        )
    return key


def active_seconds_clean(active_seconds: object) -> float | None:
    """The page's active time in seconds (None: not measured), from 0 to
    :data:`~annotation.judging.enums.MAX_ITEM_SECONDS`; :class:`JudgmentInvalid` otherwise
    (every protocol's submission passes its client's value through here)."""
    if active_seconds is None:
        return None
    message = f"active_seconds must be a number of seconds from 0 to {MAX_ITEM_SECONDS} (one day)"
    try:
        value = float(active_seconds if isinstance(active_seconds, (int, float, str)) else "nan")
    except (ValueError, OverflowError):
        raise JudgmentInvalid(message, field_errors={"active_seconds": [message]}) from None
    if not (math.isfinite(value) and 0 <= value <= MAX_ITEM_SECONDS):
        raise JudgmentInvalid(message, field_errors={"active_seconds": [message]})
    return value


def submission_store(
    *,
    values: Mapping[str, object],
    # The protocol's two tables (its unit's item_model and judgment_model): the fields used
    # here are those of their abstract bases (JudgingItemBase, JudgmentBase), which have no
    # manager to type ``.objects`` with, so they are typed by what the docstring says.
    item_model: Any,
    judgment_model: Any,
    after_stored: Callable[..., object] | None = None,
    fields_of: Callable[[Mapping[str, object]], dict[str, Any]] | None = None,
    values_of: Callable[[Any], Mapping[str, object]] | None = None,
    checked_fields: tuple[str, ...] = (),
    **envelope: Unpack[Envelope],
) -> SubmitResult:
    """The submission core every protocol shares: store ``values`` (already checked against
    the protocol's questions) for the judge's item ``token`` as a new revision.

    The :class:`Envelope`'s key and active time are checked here (the key's form again: the
    protocol checks it first, before its answer; then the active time), after the answer.

    ``item_model`` is the protocol's item table (a row per item of an assignment, with
    ``token``, ``assignment`` and ``done_at``), ``judgment_model`` its judgment table (``item``,
    ``judge``, ``key``, ``revision``, ``is_latest``, ``values`` and the times). In order: the
    item must be in *this judge's* assignment of *this study* (:class:`ItemNotFound`); the
    same key again returns the stored judgment (``created=False``) even if the study has
    closed since, the same key with other values or another item is :class:`KeyReused`; a
    screened-out judge is refused (:class:`ScreenedOut`), then a study not open
    (:class:`StudyNotOpen`) and a serve stamp that is not this item's. A new judgment of
    an item is a new revision; earlier ones are kept and the latest counts.

    Concurrency: the item row is locked (``SELECT … FOR UPDATE``; on SQLite the IMMEDIATE
    transaction holds the database write lock), so revisions of one item are numbered
    without gaps and one key gives one row; the unique constraint on ``(judge, key)``
    settles a key raced across two items. After the transaction, ``after_stored(assignment=...)``
    runs for a new judgment: the protocol's automatic QC screen-out (once, here, for the
    page and the API alike).

    A protocol whose judgment table stores its answer in other fields than ``values``
    (the ESA protocol: ``spans`` and ``score``) passes ``fields_of`` (``values`` → the
    model's fields) and ``values_of`` (a stored judgment → the ``values`` it was stored
    from, to compare a replayed key's submission), and names in ``checked_fields`` the
    fields it has checked itself (field validation would refuse an empty list of spans).
    """
    study, judge, token, serve_stamp = envelope["study"], envelope["judge"], envelope["token"], envelope["serve_stamp"]
    key = key_clean(envelope["key"])
    active_seconds = active_seconds_clean(envelope.get("active_seconds"))
    source = envelope.get("source", JudgmentSource.API)
    as_fields = fields_of or (lambda v: {"values": dict(v)})
    with transaction.atomic():
        item = (
            item_model.objects.select_for_update(of=("self",))
            .select_related("assignment")
            .filter(token=token, assignment__study=study, assignment__judge=judge)
            # Whether the key is one of the judge's attention checks' (a check drawn among
            # the items answers with keys too), in the same query: the hot path's count holds.
            .annotate(key_of_check=Exists(AttentionAnswer.objects.filter(judge_id=judge.pk, key=key)))
            .order_by()
            .first()
            if isinstance(token, str)
            else None
        )
        if item is None:
            raise ItemNotFound(gettext("There is no such item in your assignment for this study."))
        # One query for both: a judgment under this key (a retry) and the item's latest
        # judgment (which only changes under the item lock we hold).
        found = list(judgment_model.objects.filter(Q(judge=judge, key=key) | Q(item=item, is_latest=True)).order_by())
        existing = next((j for j in found if j.judge_id == judge.pk and j.key == key), None)
        if existing is not None:
            return _replay(
                existing, item=item, values=values, values_of=values_of
            )  # an acknowledged retry is answered as before
        if item.key_of_check:
            raise KeyReused(gettext(_KEY_REUSED))  # the key of one of the judge's checks: another item
        served_at = _submission_allowed(assignment=item.assignment, study=study, token=token, serve_stamp=serve_stamp)
        now = timezone.now()
        latest = next((j for j in found if j.item_id == item.pk and j.is_latest), None)
        if latest is not None:
            judgment_model.objects.filter(pk=latest.pk).update(is_latest=False)
        judgment = judgment_model(
            study=study,
            item=item,
            judge=judge,
            key=key,
            revision=(latest.revision + 1) if latest else 1,
            is_latest=True,
            served_at=served_at,
            submitted_at=now,
            # Wall time since serving, at most a day (a page left open for days is not days of
            # work): every timing paraeval stores stays within MAX_ITEM_SECONDS, so a study's
            # sums stay ordinary numbers and its exports import again.
            seconds=min(float(MAX_ITEM_SECONDS), max(0.0, (now - served_at).total_seconds())),
            active_seconds=active_seconds,
            source=source,
            **as_fields(values),
        )
        # Field validation only: the uniqueness rules are enforced by the database
        # constraints, which (unlike a query first) hold under concurrency, and the three
        # foreign keys are rows we have just read.
        judgment.full_clean(
            exclude=["study", "item", "judge", *checked_fields], validate_unique=False, validate_constraints=False
        )
        try:
            with transaction.atomic():
                judgment.save(force_insert=True)
        except IntegrityError:
            # The same key was used concurrently for another item and committed first.
            existing = judgment_model.objects.filter(judge=judge, key=key).first()
            if existing is None:
                raise
            if latest is not None:
                judgment_model.objects.filter(pk=latest.pk).update(is_latest=True)
            return _replay(existing, item=item, values=values, values_of=values_of)
        if item.done_at is None:
            item_model.objects.filter(pk=item.pk).update(done_at=now, updated_at=now)
    screened_out = bool(after_stored(assignment=item.assignment)) if after_stored is not None else False
    return SubmitResult(judgment=judgment, created=True, screened_out=screened_out)


_KEY_REUSED = "This key was already used for a different submission; send a new key for a new judgment."


def _submission_allowed(*, assignment, study: Study, token: str, serve_stamp: object):
    """The refusals after the key, in this order, for an item and an attention check alike
    (one function, so that the order and the texts cannot drift apart and tell a check from
    an item): screened out, study not open, a serve stamp that is not this token's. Returns
    when the item was served."""
    if assignment.screened_out_at is not None:
        raise ScreenedOut(gettext("You were screened out of this study; thank you for your time."))
    if Study.objects.filter(pk=study.pk).values_list("status", flat=True).order_by().first() != StudyStatus.OPEN:
        raise StudyNotOpen(gettext("This study is not open for judging."))
    served_at = serve_stamp_read(serve_stamp, token) if isinstance(serve_stamp, str) else None
    if served_at is None:
        raise JudgmentInvalid(
            gettext("The serve stamp is missing or does not belong to this item; reload the item."),
            field_errors={"serve_stamp": ["missing or invalid"]},
        )
    return served_at


def entry_answer_submit(
    *,
    item_submit: Callable[..., tuple[Any, bool]],
    check_values: Callable[[AttentionCheck], Mapping[str, object]],
    check_score: Callable[[AttentionCheck, Mapping[str, object]], tuple[float | None, bool]],
    item_model: Any,
    judgment_model: Any,
    fields_of: Callable[[Mapping[str, object]], dict[str, Any]] | None = None,
    **envelope: Unpack[Envelope],
) -> SubmitResult:
    """The one submission path of a protocol whose attention checks are drawn among its items
    (side by side, ESA, ranking; its unit's ``answer_submit``): an item or a check, so that the
    refusals, their order and texts, the replays and the revisions cannot tell them apart.

    An item's token goes to ``item_submit`` (the protocol's own submit, called with the
    :class:`Envelope`; it answers the judgment and whether it was new). A check's token runs the same checks in the same order: the
    key's form, the protocol's answer as for an item (``check_values(check)``: the values to
    keep, or a refusal), the active time; then :func:`attention_store`, which scores the answer
    with ``check_score(check, values)`` and keeps it as ``fields_of(values)``."""
    study, judge = envelope["study"], envelope["judge"]
    check = attention_check_of_judge(study_id=study.pk, judge_id=judge.pk, token=envelope["token"])
    if check is None:
        # The core refuses what is not an item (a non-text token), a key, a stamp or an active time.
        judgment, created = item_submit(**envelope)
        return SubmitResult(judgment=judgment, created=created)
    clean_key = key_clean(envelope["key"])
    values = check_values(check)
    active_seconds_clean(envelope.get("active_seconds"))  # refused as for an item; a check keeps no timing
    return attention_store(
        study=study,
        judge=judge,
        check=check,
        key=clean_key,
        values=values,
        serve_stamp=envelope["serve_stamp"],
        item_model=item_model,
        judgment_model=judgment_model,
        score=lambda v: check_score(check, v),
        fields_of=fields_of,
    )


def entry_or_check_for_judge(
    study: Study,
    judge: User,
    token: str,
    *,
    entry_for_judge: Callable[..., Any],
    check_entry: Callable[..., Any],
    check_answered: Callable[[Any, AttentionAnswer], Any],
) -> Any:
    """An entry of the judge's own assignment by its token (revise page, the item API), attention
    checks drawn among the items included: a token the judge was given is answered the same way
    whatever it stands for (a 404 for a check alone would tell it apart). An item's entry is the
    protocol's ``entry_for_judge(study=, judge=, token=)``; a check's is ``check_entry(check=)``,
    then, once answered, ``check_answered(entry, latest answer)``: what the judge sent last, read
    back as an item's latest judgment is."""
    check = attention_check_of_judge(study_id=study.pk, judge_id=judge.pk, token=token)
    if check is None:
        return entry_for_judge(study=study, judge=judge, token=token)
    entry = check_entry(check=check)
    latest = AttentionAnswer.objects.filter(attention=check).order_by("-revision").first()
    return entry if latest is None else check_answered(entry, latest)


def attention_check_of_judge(*, study_id: int, judge_id: int, token: object) -> AttentionCheck | None:
    """The judge's attention check with ``token`` (answered or not), or None: an item's token."""
    if not isinstance(token, str):
        return None
    return (
        AttentionCheck.objects.select_related("assignment")
        .filter(token=token, assignment__study_id=study_id, assignment__judge_id=judge_id)
        .first()
    )


def attention_store(
    *,
    study: Study,
    judge: User,
    check: AttentionCheck,
    key: str,
    values: Mapping[str, object],
    serve_stamp: object,
    item_model: Any,
    judgment_model: Any,
    score: Callable[[Mapping[str, object]], tuple[float | None, bool]],
    fields_of: Callable[[Mapping[str, object]], dict[str, Any]] | None = None,
) -> SubmitResult:
    """:func:`submission_store` for an attention check drawn among the items (side by side,
    ESA, ranking): the protocol has checked the key and ``values`` exactly as for an item,
    and this checks the rest in the same order with the same texts (the same key again is
    answered as before, the same key with other values or another item's key is
    :class:`KeyReused`, then :func:`_submission_allowed`), so that no answer tells a check
    from an item. Only what is stored differs: the check keeps every answer: its values, key and
    revision (an :class:`~annotation.judging.models.AttentionAnswer` per answer, as a judgment
    per revision), and its verdict (``score(values)`` → the answer as stored, passed) is the
    first answer's, counted under the study's policy
    (:func:`annotation.judging.screening.attention_record`).

    The judgment in the result is a stand-in, never saved: the protocol's judgment row with
    the check's revision, values and time, on a stand-in item of the check's assignment and
    token, so that a door answers it as it answers an item.
    """
    as_fields = fields_of or (lambda v: {"values": dict(v)})
    failed = ended = False
    with transaction.atomic():
        # The lock order of attention_answer and the releases: the assignment, then the check.
        assignment = Assignment.objects.select_for_update().get(pk=check.assignment_id)
        check = AttentionCheck.objects.select_for_update().get(pk=check.pk)
        check.assignment = assignment
        answer = AttentionAnswer.objects.filter(judge=judge, key=key).first()
        if answer is not None:  # an acknowledged retry is answered as before (or KeyReused)
            if answer.attention_id != check.pk or answer.values != dict(values):
                raise KeyReused(gettext(_KEY_REUSED))
            created = False
        else:
            if judgment_model.objects.filter(judge=judge, key=key).exists():
                raise KeyReused(gettext(_KEY_REUSED))  # the key of one of the judge's items
            _submission_allowed(assignment=assignment, study=study, token=check.token, serve_stamp=serve_stamp)
            now = timezone.now()
            latest = AttentionAnswer.objects.filter(attention=check).aggregate(n=Max("revision"))["n"] or 0
            answer = AttentionAnswer.objects.create(
                attention=check, judge=judge, key=key, revision=latest + 1, values=dict(values), submitted_at=now
            )
            created = True
            if check.answered_at is None:
                check.answer, check.passed = score(values)
                check.answered_at = now
                check.save(update_fields=["answer", "passed", "answered_at", "updated_at"])
                failed = not check.passed
                _failures, ended = attention_record(assignment=assignment)
    stand_in = judgment_model(
        study=study,
        item=item_model(assignment=assignment, token=check.token),
        judge=judge,
        key=key,
        revision=answer.revision,
        is_latest=True,
        submitted_at=answer.submitted_at,
        **as_fields(answer.values),
    )
    return SubmitResult(judgment=stand_in, created=created, screened_out=ended, check_failed=failed)


def _replay(
    existing, *, item, values: Mapping[str, object], values_of: Callable[[Any], Mapping[str, object]] | None = None
) -> SubmitResult:
    stored = values_of(existing) if values_of is not None else existing.values
    if existing.item_id != item.pk or stored != values:
        raise KeyReused(gettext(_KEY_REUSED))
    existing.item = item  # the locked row, with its assignment loaded
    return SubmitResult(judgment=existing, created=False)
