"""The judge's side every protocol shares, read through the ORM: what an entry shows beside its
texts (:class:`JudgeEntry`), places and progress among the attention checks drawn with the
items, an attention check drawn like an item, the document context, and the judge's studies.

Each protocol builds its own entries (the absolute protocol's ``JudgeItem`` in
:mod:`annotation.judging.protocols.absolute.selectors`, ESA's, ranking's and side by side's in
their packages): texts, positions and opaque tokens — never a system, a control kind, an
expected score or a database id.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.utils.translation import gettext

from annotation.enums import Role, StudyStatus
from annotation.models import Original, Study

from ..errors import ItemNotFound
from ..models import Assignment, AttentionCheck
from ..protocols.registry import protocols_all
from ..tokens import serve_stamp_make


def place_among_checks(
    *, assignment: Assignment, position: int, done: int, check: AttentionCheck | None = None
) -> tuple[int, int, int]:
    """(position, total, done) as the judge is shown them where attention checks are drawn on
    the protocol's own page among the real items (side by side, ESA, ranking): the checks
    count as items. A check placed after k real items stands at k + 1 plus the checks before
    it; a real item at ``position`` moves down by the checks before it; the total and the
    done count include the checks. Without it "5 of 40" would be shown twice, for a check and
    for the real item after it, which tells a judge, after the fact, which one was a check.
    ``position`` is ignored for a check; ``done`` counts the real items answered."""
    checks = sorted(AttentionCheck.objects.filter(assignment=assignment).values_list("after_done", "id", "answered_at"))
    if not checks:
        return position, assignment.n_items, done
    if check is None:
        before = sum(1 for after, _id, _at in checks if after < position)
    else:
        before = sum(1 for after, pk, _at in checks if (after, pk) < (check.after_done, check.pk))
        position = check.after_done + 1
    answered = sum(1 for _after, _id, at in checks if at is not None)
    return position + before, assignment.n_items + len(checks), done + answered


def progress_among_checks(*, assignment: Assignment, done: int) -> tuple[int, int]:
    """(done, total) of the judge's whole order, attention checks drawn among the items
    included, as every item shows them (:func:`place_among_checks`): a next-item or submit
    answer whose counts left the checks out would differ from its item's by their number."""
    _position, total, shown_done = place_among_checks(assignment=assignment, position=1, done=done)
    return shown_done, total


def previous_among_checks(
    *, assignment: Assignment, item_model, position: int = 0, check: AttentionCheck | None = None
) -> str | None:
    """The token of what the judge was shown just before the item at ``position`` (or before
    ``check``) where attention checks are drawn among the items: a check placed after k items
    stands between items k and k + 1, so it is the way back from item k + 1 (the last of
    several there) and item k is the way back from it. Skipping the check would tell the
    judge which one it was. ``item_model`` is the protocol's item table."""
    if check is not None:
        after = check.after_done
        there = AttentionCheck.objects.filter(assignment=assignment, after_done=after, pk__lt=check.pk)
    else:
        after = position - 1
        there = AttentionCheck.objects.filter(assignment=assignment, after_done=after)
    if after < 1:
        return None
    token = there.order_by("-pk").values_list("token", flat=True).first()
    if token is not None:
        return token
    return item_model.objects.filter(assignment=assignment, position=after).values_list("token", flat=True).first()


def attention_unrelated_text(rng: random.Random, others: Sequence[int]) -> str:
    """The unrelated sentence of an attention check: the text of an original drawn from
    ``others`` (ids of the judge's other originals), or, where the judge's items have a single
    original, a fixed sentence in the page's language."""
    if others:
        return Original.objects.get(pk=rng.choice(others)).text
    return gettext("The train to the coast leaves from platform four at seven in the morning.")


def attention_entry_fields(
    *, check: AttentionCheck, done: int, item_model: Any, original: Original, shown: bool
) -> dict[str, Any]:
    """The :class:`JudgeEntry` fields of an attention check drawn like an item (its place and
    progress among the items, the way back, no revision yet, its serve stamp and the context of
    ``original`` where the design shows context, ``shown``), its token the check's: a protocol
    adds the texts and the empty answer. ``done`` counts the real items answered."""
    assignment = check.assignment
    position, total, shown_done = place_among_checks(assignment=assignment, position=done + 1, done=done, check=check)
    before, after = original_context(original) if shown else ((), ())
    return {
        "token": check.token,
        "position": position,
        "total": total,
        "done": shown_done,
        "revision": 0,
        "previous_token": previous_among_checks(assignment=assignment, item_model=item_model, check=check),
        "serve_stamp": serve_stamp_make(check.token),
        "context_shown": shown,
        "context_before": before,
        "context_after": after,
    }


def item_entry_fields(
    *, item: Any, assignment: Assignment, latest: Any, original: Original, shown: bool
) -> dict[str, Any]:
    """The :class:`JudgeEntry` fields of one of a protocol's items (a row of its ``item_model``
    whose attention checks are drawn among its items): its place and progress counting the
    checks, the way back (a check where one stands before it), the revision of ``latest`` (the
    judge's latest judgment of it; None: not answered), its serve stamp and the context of
    ``original`` where the design shows context (``shown``)."""
    model = type(item)
    position, total, done = place_among_checks(
        assignment=assignment,
        position=item.position,
        done=model.objects.filter(assignment=assignment, done_at__isnull=False).count(),
    )
    before, after = original_context(original) if shown else ((), ())
    return {
        "token": item.token,
        "position": position,
        "total": total,
        "done": done,
        "revision": latest.revision if latest else 0,
        "previous_token": previous_among_checks(assignment=assignment, item_model=model, position=item.position),
        "serve_stamp": serve_stamp_make(item.token),
        "context_shown": shown,
        "context_before": before,
        "context_after": after,
    }


def item_of_judge(items: QuerySet, *, study: Study, judge: User, token: object) -> Any:
    """The item with ``token`` among ``items`` (a protocol's items, its texts selected) in the
    judge's own assignment of ``study``, its assignment loaded; :class:`ItemNotFound` otherwise
    (another judge's token, a token of another study, a token that is no text)."""
    item = (
        items.select_related("assignment").filter(token=token, assignment__study=study, assignment__judge=judge).first()
        if isinstance(token, str)
        else None
    )
    if item is None:
        raise ItemNotFound(gettext("There is no such item in your assignment for this study."))
    return item


def item_before(items: QuerySet, *, study: Study, judge: User, token: str | None = None) -> tuple[Any, Assignment]:
    """(the item before ``token``'s among ``items`` — or, without a token, before the resume
    point, the last one when all are answered — and the judge's assignment). The item is None at
    the start of the order; :class:`ItemNotFound` where the judge has no assignment."""
    if token is not None:
        item = item_of_judge(items, study=study, judge=judge, token=token)
        assignment, position = item.assignment, item.position - 1
    else:
        found = Assignment.objects.filter(study=study, judge=judge).first()
        if found is None:
            raise ItemNotFound(gettext("You have no assignment in this study."))
        assignment = found
        nxt = items.model.objects.filter(assignment=assignment, done_at__isnull=True).order_by("position").first()
        position = (nxt.position if nxt else assignment.n_items + 1) - 1
    if position < 1:
        return None, assignment
    return items.get(assignment=assignment, position=position), assignment


@dataclass(frozen=True, kw_only=True)
class JudgeEntry:
    """What every protocol's item shows a judge, whatever it asks: its place in the judge's
    order, the original, the revision, the serve stamp and the document context. Each
    protocol adds what it shows (:class:`JudgeItem`: one paraphrase and its scores; the
    side-by-side ``JudgePair``: two paraphrases and the answers). Safe to render or
    serialise for the judge: texts, positions and opaque tokens only."""

    token: str
    position: int
    total: int
    done: int
    original: str
    revision: int  # how many times it was answered (0: not yet)
    previous_token: str | None
    serve_stamp: str
    # Document context (when the design shows it): the originals just before and after
    # this one in the same document, in import order. ``context_shown`` says whether the
    # design shows context at all, so the page can say "no context for this item".
    context_shown: bool = False
    context_before: tuple[str, ...] = ()
    context_after: tuple[str, ...] = ()

    @property
    def is_revision(self) -> bool:
        return self.revision > 0

    @property
    def has_context(self) -> bool:
        return bool(self.context_before or self.context_after)


#: Sentences of context on each side of an item's original.
CONTEXT_SENTENCES = 2


def original_context(original: Original) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The texts of up to :data:`CONTEXT_SENTENCES` originals before and after ``original``
    in its document (same study and ``document``, by import position); empty without a document."""
    if not original.document:
        return (), ()
    same = Original.objects.filter(study_id=original.study_id, document=original.document)
    before = list(
        same.filter(position__lt=original.position)
        .order_by("-position")
        .values_list("text", flat=True)[:CONTEXT_SENTENCES]
    )
    after = list(
        same.filter(position__gt=original.position)
        .order_by("position")
        .values_list("text", flat=True)[:CONTEXT_SENTENCES]
    )
    return tuple(reversed(before)), tuple(after)


def assignment_for_judge(*, study: Study, judge: User) -> Assignment | None:
    return Assignment.objects.filter(study=study, judge=judge).first()


def studies_for_judge(*, judge: User) -> list[dict]:
    """The judge's studies with their status and the judge's progress, open ones first."""
    studies = Study.objects.filter(memberships__user=judge, memberships__role=Role.JUDGE).distinct()
    assignments = {a.study_id: a for a in Assignment.objects.filter(judge=judge)}
    # Each protocol counts its own answered items (items, pairs, ESA items, ranked sets); a
    # study's assignment holds one protocol's items, so the counts do not overlap.
    done: dict[int, int] = {}
    tables = set()
    for unit in protocols_all():
        if unit.item_model in tables:  # a unit that shares another's table is counted once
            continue
        tables.add(unit.item_model)
        for study_id, n in unit.done_per_study(judge=judge).items():
            done[study_id] = done.get(study_id, 0) + n
    rows: list[dict] = []
    for s in studies:
        a = assignments.get(s.pk)
        rows.append(
            {
                "study": s,
                "is_open": s.status == StudyStatus.OPEN,
                "assignment": a,
                "done": done.get(s.pk, 0),
                "total": a.n_items if a else 0,
            }
        )
    rows.sort(key=lambda r: (not r["is_open"], r["study"].name))
    return rows
