"""The judge's side, read through the ORM: their items (blinded), the one before, their
studies and progress.

What a judge receives is built only here (:func:`item_next_for_judge`,
:func:`item_for_judge`, :func:`item_previous_for_judge`) and in :mod:`.hot_path` as
:class:`JudgeItem` values, which hold texts, positions and opaque tokens — never a
system, a control kind, an expected score or a database id.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User

from annotation.enums import Role, StudyStatus
from annotation.models import Original, Study

from ..errors import ItemNotFound
from ..models import Assignment, AttentionCheck, JudgingDesign
from ..protocols.absolute.models import AssignmentItem, Judgment
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


@dataclass(frozen=True, kw_only=True)
class JudgeItem(JudgeEntry):
    """One item of the absolute protocol as a judge sees it."""

    paraphrase: str
    scores: dict[str, int | float] | None  # the latest values when the item was rated before


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


def _own_item(*, study: Study, judge: User, token: str) -> tuple[AssignmentItem, Assignment]:
    item = (
        _items_with_texts()
        .select_related("assignment")
        .filter(token=token, assignment__study=study, assignment__judge=judge)
        .first()
        if isinstance(token, str)
        else None
    )
    if item is None:
        raise ItemNotFound("There is no such item in your assignment for this study.")
    return item, item.assignment


def item_for_judge(*, study: Study, judge: User, token: str) -> JudgeItem:
    """One item of this judge's assignment (to revise it). :class:`ItemNotFound` otherwise."""
    item, assignment = _own_item(study=study, judge=judge, token=token)
    return _judge_item(item, assignment=assignment, done=assignment_done_count(assignment=assignment))


def item_previous_for_judge(*, study: Study, judge: User, token: str | None = None) -> JudgeItem | None:
    """The item before ``token`` — or, without a token, before the resume point (the
    last item when all are rated). None at the start of the order."""
    assignment: Assignment | None
    if token is not None:
        item, assignment = _own_item(study=study, judge=judge, token=token)
        position = item.position - 1
    else:
        assignment = assignment_for_judge(study=study, judge=judge)
        if assignment is None:
            raise ItemNotFound("You have no assignment in this study.")
        nxt = AssignmentItem.objects.filter(assignment=assignment, done_at__isnull=True).order_by("position").first()
        position = (nxt.position if nxt else assignment.n_items + 1) - 1
    if position < 1:
        return None
    prev = _items_with_texts().get(assignment=assignment, position=position)
    return _judge_item(prev, assignment=assignment, done=assignment_done_count(assignment=assignment))


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
