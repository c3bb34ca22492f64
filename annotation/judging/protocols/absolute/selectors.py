"""The absolute protocol's items as the judge sees them, read through the ORM: the next one
(the resume point), one by its token, the one before.

What a judge receives is built only here and in :mod:`.hot_path` as :class:`JudgeItem`
values, which hold texts, positions and opaque tokens — never a system, a control kind, an
expected score or a database id.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User

from annotation.models import Study

from ...models import Assignment, JudgingDesign
from ...selectors.judge import JudgeEntry, item_before, item_of_judge, original_context
from ...tokens import serve_stamp_make
from .models import AssignmentItem, Judgment


@dataclass(frozen=True, kw_only=True)
class JudgeItem(JudgeEntry):
    """One item of the absolute protocol as a judge sees it."""

    paraphrase: str
    scores: dict[str, int | float] | None  # the latest values when the item was rated before


def assignment_done_count(*, assignment: Assignment) -> int:
    return AssignmentItem.objects.filter(assignment=assignment, done_at__isnull=False).count()


def _items_with_texts():
    return AssignmentItem.objects.select_related("candidate__original").defer(
        "candidate__created_at", "candidate__updated_at", "candidate__original__reference"
    )


def _judge_item(item: AssignmentItem, *, assignment: Assignment, done: int) -> JudgeItem:
    """``item`` must come from :func:`_items_with_texts` (its texts are loaded with it)."""
    latest = Judgment.objects.filter(item=item, is_latest=True).first() if item.done_at is not None else None
    previous = None
    if item.position > 1:
        previous = (
            AssignmentItem.objects.filter(assignment=assignment, position=item.position - 1)
            .values_list("token", flat=True)
            .first()
        )
    cand = item.candidate
    shown = bool(JudgingDesign.objects.filter(study_id=assignment.study_id, show_context=True).exists())
    before, after = original_context(cand.original) if shown else ((), ())
    return JudgeItem(
        token=item.token,
        position=item.position,
        total=assignment.n_items,
        done=done,
        original=cand.original.text,
        paraphrase=cand.text,
        scores=latest.scores if latest else None,
        revision=latest.revision if latest else 0,
        previous_token=previous,
        serve_stamp=serve_stamp_make(item.token),
        context_shown=shown,
        context_before=before,
        context_after=after,
    )


def item_next_for_judge(*, assignment: Assignment) -> JudgeItem | None:
    """The first item in the judge's order not yet rated (None when all are rated).

    This is the resume point: it lives in the database, so a reload or another
    device continues exactly here.
    """
    item = _items_with_texts().filter(assignment=assignment, done_at__isnull=True).order_by("position").first()
    if item is None:
        return None
    return _judge_item(item, assignment=assignment, done=assignment_done_count(assignment=assignment))


def item_for_judge(*, study: Study, judge: User, token: str) -> JudgeItem:
    """One item of this judge's assignment (to revise it). :class:`ItemNotFound` otherwise."""
    item = item_of_judge(_items_with_texts(), study=study, judge=judge, token=token)
    return _judge_item(item, assignment=item.assignment, done=assignment_done_count(assignment=item.assignment))


def item_previous_for_judge(*, study: Study, judge: User, token: str | None = None) -> JudgeItem | None:
    """The item before ``token`` — or, without a token, before the resume point (the
    last item when all are rated). None at the start of the order."""
    item, assignment = item_before(_items_with_texts(), study=study, judge=judge, token=token)
    if item is None:
        return None
    return _judge_item(item, assignment=assignment, done=assignment_done_count(assignment=assignment))
