"""Error Span Annotation (ESA): the third judging protocol (writes, and what a judge is served).

An ESA study shows each judge one original and one candidate at a time; the judge marks
the spans that are wrong (on the candidate: changed, added or not fluent; on the
original: left out; or the ``[missing]`` marker), each *minor* or *major* with an
optional category of the design, then gives the candidate a 0–100 score (Kocmi et al.,
WMT 2024). Items are the study's candidates, controls included, planned and ordered like
the absolute protocol's (:func:`metrics.core.assignment.plan_assignments`). With
``esa_prefill == "aligner"`` each item is written with the spans proposed by paraeval's
word aligner (:func:`metrics.core.spans.prefill.propose_spans`), with ``"imported"`` with
those of an imported proposal file (:mod:`.imports`), copied onto the
:class:`~annotation.judging.protocols.esa.models.EsaItem` so that what was proposed stays known.

What the researcher reads (records, exports, QC) is in :mod:`.selectors`. What a judge
receives is built only by :func:`esa_item_next_for_judge`,
:func:`esa_item_for_judge` and :func:`esa_item_previous_for_judge` as :class:`JudgeEsaItem`
values: texts, spans, positions and opaque tokens — never a system, a control flag or a
database id. Offsets are code points of the stored texts, end exclusive
(:mod:`metrics.core.spans.offsets`); the page converts the browser's UTF-16 offsets
before sending, and :func:`spans_clean` checks every span with
:func:`~metrics.core.spans.offsets.span_problem`.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Unpack, cast

from django.contrib.auth.models import User
from django.utils import timezone
from django.utils.translation import gettext

from annotation.judging.services.item_orders import (
    CandidateOrder,
    candidate_order_late,
    candidate_order_participant,
    candidate_orders_opening,
)
from annotation.judging.services.opening import study_items
from annotation.models import Candidate, Study
from metrics.core.assignment import derive_seed
from metrics.core.spans.model import SEVERITIES, SIDES, ErrorSpan
from metrics.core.spans.offsets import span_problem
from metrics.core.spans.prefill import SpanShape, proposal_order, propose_spans, span_shapes, spans_like

from ...enums import CONTROL_SYSTEM_PREFIX, EsaPrefill
from ...errors import CannotOpen, JudgmentInvalid
from ...models import Assignment, JudgingDesign
from ...selectors.judge import JudgeEntry, item_before, item_entry_fields, item_of_judge
from ...services.submission import Envelope, key_clean, submission_store
from ...tokens import item_token_new
from .models import EsaItem, EsaJudgment, EsaProposal

logger = logging.getLogger(__name__)

BULK_BATCH = 5000
#: The categories the aligner's proposals carry (:mod:`metrics.core.spans.prefill`): a
#: judge may keep them whatever the design's own categories are.
PROPOSAL_CATEGORIES = ("addition", "omission")
#: The most spans one judgment may hold (a sentence rarely has more than a handful).
MAX_SPANS = 200
SCORE_MIN, SCORE_MAX = 0, 100


# --- opening ---------------------------------------------------------------------------


def aligner_proposals(*, original: str, candidate: str, label: str) -> list[dict]:
    """The aligner's proposals (:func:`~metrics.core.spans.prefill.propose_spans`) as stored
    span dicts, or none when the tokenizer or the aligner refuses the texts (``ValueError``):
    one odd text must not fail the opening (a 500) or a late judge's first page, so that item
    opens without suggestions and the log names it (``label``)."""
    try:
        return [span_dict(s) for s in propose_spans(original, candidate).spans]
    except ValueError as exc:
        logger.warning("ESA pre-fill: no suggestions for %s, the aligner refused its texts: %s", label, exc)
        return []


def proposals_for(
    *,
    design: JudgingDesign,
    original: str,
    candidate: str,
    shapes: Sequence[tuple[SpanShape, ...]] | None = None,
) -> list[dict]:
    """The spans shown pre-filled on an item built from texts alone (a control, an attention
    item), as stored span dicts. With the aligner: the aligner's, as every item gets. With
    imported proposals no file can name such an item, and proposals unlike the file's (the
    aligner's ``addition``/``omission``, or none among items that have some) would give it
    away: it gets the shapes of one genuine item's imported proposals drawn at random, placed
    on its own texts (:func:`imported_like`). ``shapes`` may pass :func:`imported_shapes`
    computed once for many items. Deterministic: the same texts give the same proposals."""
    if design.esa_prefill == EsaPrefill.ALIGNER:
        return aligner_proposals(original=original, candidate=candidate, label="an item built from texts")
    if design.esa_prefill == EsaPrefill.IMPORTED:
        pool = imported_shapes(study=design.study) if shapes is None else shapes
        return imported_like(design=design, original=original, candidate=candidate, shapes=pool)
    return []


def imported_proposals(*, candidate_ids: Iterable[int]) -> dict[int, list[dict]]:
    """Candidate pk → its imported proposals (span dicts, in
    :func:`~metrics.core.spans.prefill.proposal_order`), for the candidates that have some."""
    rows = EsaProposal.objects.filter(candidate_id__in=list(candidate_ids)).values_list("candidate_id", "spans")
    return {pk: sorted(spans, key=lambda d: proposal_order(span_of(d))) for pk, spans in rows}


def imported_shapes(*, study: Study) -> list[tuple[SpanShape, ...]]:
    """The shapes (:func:`~metrics.core.spans.prefill.span_shapes`) of the imported proposals
    of every genuine candidate of ``study``, an empty one for a candidate the file left
    without proposals, in a fixed order: what an item the file cannot name draws from, so
    that its proposals have the file's categories, severities, sides, counts and lengths, and
    none as often as a genuine item has none."""
    spans = dict(EsaProposal.objects.filter(study=study).values_list("candidate_id", "spans"))
    rows = (
        Candidate.objects.filter(original__study=study)
        .exclude(system__name__startswith=CONTROL_SYSTEM_PREFIX)
        .order_by("original__external_id", "system__name")
        .values_list("id", "original__text", "text")
    )
    return [span_shapes([span_of(d) for d in spans.get(pk, [])], original, text) for pk, original, text in rows]


def imported_like(
    *, design: JudgingDesign, original: str, candidate: str, shapes: Sequence[tuple[SpanShape, ...]]
) -> list[dict]:
    """Proposals for an item no imported file names: the shapes of one genuine item, drawn
    with a seed of the design's seed and the texts, placed on the item's texts
    (:func:`~metrics.core.spans.prefill.spans_like`); none when the aligner refuses the texts."""
    if not shapes:
        return []
    template = shapes[
        random.Random(derive_seed(design.seed, "esa-imported-shape", original, candidate)).randrange(len(shapes))
    ]
    try:
        spans = spans_like(
            template, original, candidate, seed=derive_seed(design.seed, "esa-imported-place", original, candidate)
        )
    except ValueError as exc:
        logger.warning("ESA pre-fill: no suggestions for an item built from texts, the aligner refused them: %s", exc)
        return []
    return [span_dict(s) for s in spans]


def _items_insert(
    *,
    assignment: Assignment,
    design: JudgingDesign,
    candidate_ids: Sequence[int],
    cache: dict[int, tuple[list[dict], bool]] | None = None,
) -> int:
    """Write the assignment's items in order, each with its proposals (``cache`` keeps the
    proposals of a candidate already computed for another judge)."""
    cache = {} if cache is None else cache
    todo = [pk for pk in candidate_ids if pk not in cache]
    imported: dict[int, list[dict]] = {}
    shapes: list[tuple[SpanShape, ...]] | None = None
    if design.esa_prefill == EsaPrefill.IMPORTED:
        imported = imported_proposals(candidate_ids=todo)
    for pk, original, text, system in Candidate.objects.filter(pk__in=todo).values_list(
        "id", "original__text", "text", "system__name"
    ):
        is_control = system.startswith(CONTROL_SYSTEM_PREFIX)
        if design.esa_prefill == EsaPrefill.IMPORTED and is_control:
            # A control is built at opening, so no file can propose spans for it: it gets
            # proposals shaped like a genuine item's, lest their form give it away.
            if shapes is None:
                shapes = imported_shapes(study=assignment.study)
            proposed = proposals_for(design=design, original=original, candidate=text, shapes=shapes)
        elif design.esa_prefill == EsaPrefill.IMPORTED:
            proposed = imported.get(pk, [])
        elif design.esa_prefill == EsaPrefill.ALIGNER:
            proposed = aligner_proposals(original=original, candidate=text, label=f"candidate {pk} ({system})")
        else:
            proposed = []
        cache[pk] = (proposed, is_control)
    now = timezone.now()
    rows = [
        EsaItem(
            assignment=assignment,
            candidate_id=pk,
            position=position,
            token=item_token_new(),
            is_control=cache[pk][1],
            proposed=cache[pk][0],
            created_at=now,
            updated_at=now,
        )
        for position, pk in enumerate(candidate_ids, 1)
    ]
    EsaItem.objects.bulk_create(rows, batch_size=BULK_BATCH)
    return len(rows)


def esa_assignments_write(*, study: Study, design: JudgingDesign, judges: list[User]) -> tuple[int, int]:
    """Every judge's ESA items: the study's candidates, control candidates included (they
    exist already as ``control:`` systems), planned and ordered with the design's seed.
    Returns (items planned, items written); :class:`CannotOpen` without a genuine candidate."""
    pks = study_items(study)[2]
    names = dict(Candidate.objects.filter(original__study=study).values_list("id", "system__name"))
    if not any(not names[pk].startswith(CONTROL_SYSTEM_PREFIX) for pk in pks.values()):
        raise CannotOpen(gettext("Error span annotation needs candidates to annotate; import them first."))
    if design.esa_prefill == EsaPrefill.IMPORTED and not EsaProposal.objects.filter(study=study).exists():
        raise CannotOpen(gettext("The design pre-fills spans from an imported file; import the proposed spans first."))
    n_items, orders = candidate_orders_opening(study=study, design=design, judges=judges)
    written = 0
    cache: dict[int, tuple[list[dict], bool]] = {}
    for o in orders:
        assignment = Assignment.objects.create(
            study=study, judge=o.judge, seed=o.seed, n_items=len(o.candidate_ids), joined_late=False
        )
        written += _items_insert(assignment=assignment, design=design, candidate_ids=o.candidate_ids, cache=cache)
    return n_items, written


def _assignment_late_write(*, study: Study, design: JudgingDesign, order: CandidateOrder) -> Assignment:
    assignment = Assignment.objects.create(
        study=study, judge=order.judge, seed=order.seed, n_items=len(order.candidate_ids), joined_late=True
    )
    _items_insert(assignment=assignment, design=design, candidate_ids=order.candidate_ids)
    return assignment


def esa_assignment_late(*, study: Study, design: JudgingDesign, judge: User) -> Assignment:
    """A judge added after opening (:func:`candidate_order_late`). The caller holds the
    design's row lock."""
    order = candidate_order_late(study=study, design=design, judge=judge, item_model=EsaItem)
    return _assignment_late_write(study=study, design=design, order=order)


def esa_assignment_for_participant(
    *, study: Study, design: JudgingDesign, judge: User, n_items: int | None
) -> Assignment:
    """A join-link participant's items (:func:`candidate_order_participant`). The caller holds the lock."""
    order = candidate_order_participant(study=study, design=design, judge=judge, n_items=n_items, item_model=EsaItem)
    return _assignment_late_write(study=study, design=design, order=order)


# --- spans -----------------------------------------------------------------------------


def span_dict(span: ErrorSpan, *, proposed: bool = False) -> dict[str, Any]:
    """A span as stored and sent: side, start, end, severity, category, missing, proposed."""
    return {
        "side": span.side,
        "start": span.start,
        "end": span.end,
        "severity": span.severity,
        "category": span.category,
        "missing": span.missing,
        "proposed": proposed,
    }


def span_of(d: Mapping[str, Any]) -> ErrorSpan:
    """The :class:`ErrorSpan` of a stored span dict."""
    return ErrorSpan(
        d["side"], d["start"], d["end"], d["severity"], d.get("category") or None, missing=bool(d.get("missing"))
    )


def categories_allowed(design: JudgingDesign) -> list[str]:
    """The categories a span may carry: the design's, plus the proposals' when pre-filled."""
    extra = list(PROPOSAL_CATEGORIES) if design.esa_prefill != EsaPrefill.NONE else []
    return [*design.esa_categories, *(c for c in extra if c not in design.esa_categories)]


def spans_clean(*, spans: object, original: str, candidate: str, categories: Sequence[str]) -> list[dict]:
    """Check the judge's spans: a list of span objects, each on a side of the item, inside
    its text on whole characters (:func:`~metrics.core.spans.offsets.span_problem`), with a
    severity (minor, major) and a category of the design or none. Duplicates are refused, and
    so are two spans of one side that overlap (share a character): an error is counted once,
    with one severity, and a span file refuses overlaps too
    (:func:`annotation.judging.protocols.esa.parsers.spans_read`), so what a judge stored always
    exports and imports again. Raises :class:`JudgmentInvalid` naming each bad span by its
    place in the list (both places for an overlap)."""
    if not isinstance(spans, list):
        raise JudgmentInvalid(gettext("spans must be a list of span objects"), field_errors={"spans": ["not a list"]})
    if len(spans) > MAX_SPANS:
        raise JudgmentInvalid(
            gettext("Too many spans (at most %(n)d).") % {"n": MAX_SPANS}, field_errors={"spans": ["too many"]}
        )
    texts = {"original": original, "candidate": candidate}
    errors: list[str] = []
    out: list[dict] = []
    places: list[int] = []  # each kept span's place in the judge's list (from 1)
    seen = set()
    for n, raw in enumerate(spans, 1):
        if not isinstance(raw, Mapping):
            errors.append(gettext("span %(n)d: not an object") % {"n": n})
            continue
        missing = raw.get("missing") is True
        side = "candidate" if missing else raw.get("side")
        severity, category = raw.get("severity"), raw.get("category") or None
        problem = None
        if side not in SIDES:
            problem = gettext("side must be original or candidate")
        elif severity not in SEVERITIES:
            problem = gettext("severity must be minor or major")
        elif category is not None and category not in categories:
            problem = gettext("unknown category %(c)s") % {"c": repr(category)}
        elif not isinstance(raw.get("proposed", False), bool):
            problem = gettext("proposed must be true or false")
        elif not missing:
            problem = span_problem(texts[side], raw.get("start"), raw.get("end"))
        if problem:
            errors.append(gettext("span %(n)d: %(problem)s") % {"n": n, "problem": problem})
            continue
        assert isinstance(side, str) and isinstance(severity, str)  # no problem: one of SIDES and SEVERITIES
        span = (
            ErrorSpan.missing_marker(severity, category)
            if missing
            else ErrorSpan(side, raw["start"], raw["end"], severity, category)
        )
        place = (span.side, span.start, span.end, span.missing)
        if place in seen:
            errors.append(gettext("span %(n)d: the same span is marked twice") % {"n": n})
            continue
        seen.add(place)
        out.append(span_dict(span, proposed=bool(raw.get("proposed", False))))
        places.append(n)
    errors += _overlaps(out, places)
    if errors:
        raise JudgmentInvalid(
            gettext("Some spans are not valid: %(problems)s.") % {"problems": "; ".join(errors)},
            field_errors={"spans": errors},
        )
    return out


def _overlaps(spans: Sequence[Mapping[str, Any]], places: Sequence[int]) -> list[str]:
    """One message per pair of spans of one side that share a character (the ``[missing]``
    marker has no characters), naming both by their place in the judge's list."""
    errors = []
    placed = sorted(
        ((s["side"], s["start"], s["end"], n) for s, n in zip(spans, places) if not s["missing"]),
    )
    for k, (side, start, end, n) in enumerate(placed):
        for other_side, other_start, other_end, m in placed[k + 1 :]:
            if other_side != side or other_start >= end:
                break
            first, second = sorted(((n, start, end), (m, other_start, other_end)))
            errors.append(
                gettext(
                    "spans %(a)d [%(a_start)d, %(a_end)d) and %(b)d [%(b_start)d, %(b_end)d) of the %(side)s overlap; "
                    "mark one span, or two that do not overlap"
                )
                % {
                    "a": first[0],
                    "a_start": first[1],
                    "a_end": first[2],
                    "b": second[0],
                    "b_start": second[1],
                    "b_end": second[2],
                    "side": side,
                }
            )
    return errors


def score_clean(score: object) -> float:
    """The 0–100 score, required (:class:`JudgmentInvalid` when absent or out of range)."""
    if score is None or score == "" or isinstance(score, bool):
        raise JudgmentInvalid(gettext("Set the score (0–100) before submitting."), field_errors={"score": ["required"]})
    try:
        value = float(score) if isinstance(score, (int, float, str)) else float("nan")
    except ValueError:
        value = float("nan")
    if not SCORE_MIN <= value <= SCORE_MAX:  # NaN fails too
        raise JudgmentInvalid(
            gettext("The score must be a number from 0 to 100."), field_errors={"score": ["out of range"]}
        )
    return value


# --- the judge's side ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class JudgeEsaItem(JudgeEntry):
    """One ESA item as a judge sees it: the shared :class:`JudgeEntry`, the candidate's text,
    the spans to start from (the latest judgment's, else the proposals, each marked
    ``proposed``), the latest score, and whether the proposals are still to be decided."""

    candidate: str
    spans: list[dict]
    score: float | None
    proposals_pending: bool


def _items_with_texts():
    return EsaItem.objects.select_related("candidate__original")


def _judge_item(item: EsaItem, *, assignment: Assignment) -> JudgeEsaItem:
    latest = EsaJudgment.objects.filter(item=item, is_latest=True).first() if item.done_at else None
    shown = JudgingDesign.objects.filter(study_id=assignment.study_id, show_context=True).exists()
    original = item.candidate.original
    if latest is not None:
        spans = [dict(s) for s in latest.spans]
    else:
        spans = [dict(s, proposed=True) for s in item.proposed]
    return JudgeEsaItem(
        **item_entry_fields(item=item, assignment=assignment, latest=latest, original=original, shown=shown),
        original=original.text,
        candidate=item.candidate.text,
        spans=spans,
        score=latest.score if latest else None,
        proposals_pending=latest is None and bool(item.proposed),
    )


def esa_item_next_for_judge(*, assignment: Assignment) -> JudgeEsaItem | None:
    """The first item not yet annotated (the resume point); None when all are."""
    item = _items_with_texts().filter(assignment=assignment, done_at__isnull=True).order_by("position").first()
    return None if item is None else _judge_item(item, assignment=assignment)


def esa_item_for_judge(*, study: Study, judge: User, token: str) -> JudgeEsaItem:
    item = item_of_judge(_items_with_texts(), study=study, judge=judge, token=token)
    return _judge_item(item, assignment=item.assignment)


def esa_item_previous_for_judge(*, study: Study, judge: User) -> JudgeEsaItem | None:
    """The item before the resume point (the last one when all are done); None at the start."""
    item, assignment = item_before(_items_with_texts(), study=study, judge=judge)
    return None if item is None else _judge_item(item, assignment=assignment)


def _fields_of(values: Mapping[str, object]) -> dict[str, Any]:
    return {"spans": values["spans"], "score": values["score"]}


def _values_of(judgment: EsaJudgment) -> dict[str, Any]:
    return {"spans": judgment.spans, "score": judgment.score}


def esa_submit(*, spans: object, score: object, **envelope: Unpack[Envelope]) -> tuple[EsaJudgment, bool]:
    """Store one judge's spans and score for one item of their assignment. Returns (judgment, created).

    The spans are checked against the item's texts and the design's categories
    (:func:`spans_clean`), the score must be set (:func:`score_clean`); then the submission
    core every protocol shares stores them (:func:`~annotation.judging.services.submission.submission_store`):
    idempotent on ``(judge, key)``, the study must be open, the serve stamp must be this
    item's, a second submission is a new revision.
    """
    key_clean(envelope["key"])
    design = JudgingDesign.objects.get(study=envelope["study"])
    item = item_of_judge(_items_with_texts(), study=envelope["study"], judge=envelope["judge"], token=envelope["token"])
    clean = spans_clean(
        spans=spans,
        original=item.candidate.original.text,
        candidate=item.candidate.text,
        categories=categories_allowed(design),
    )
    values = {"spans": clean, "score": score_clean(score)}
    result = submission_store(
        values=values,
        item_model=EsaItem,
        judgment_model=EsaJudgment,
        fields_of=_fields_of,
        values_of=_values_of,
        checked_fields=("spans",),
        **envelope,
    )
    return cast(EsaJudgment, result.judgment), result.created
