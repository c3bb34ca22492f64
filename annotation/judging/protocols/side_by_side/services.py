"""Side-by-side comparison: the second judging protocol (writes and reads).

A comparison study shows each judge the original with two candidates of different
systems for it and asks which is better ("A better / tie / B better", A on the
left), once overall or once per criterion of the design. Pairs come from
:mod:`metrics.core.comparison_plan` (balanced over system pairs), each judge's order
from :func:`metrics.core.assignment.plan_assignments` and the side of each pair from
a seeded coin per judge (:func:`~metrics.core.comparison_plan.sides_for_judge`),
recorded on the :class:`~.models.ComparisonItem` (``left``/``right``).

What a judge receives is built only by :func:`pair_next_for_judge`,
:func:`pair_for_judge` and :func:`pair_previous_for_judge` as :class:`JudgePair`
values: texts, positions and opaque tokens, never a system, a control flag or a
database id. Opening (:func:`side_by_side_assignments_write`) is called by
:func:`.services.study_judging_open`, which holds the transaction and the locks.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Unpack, cast

from django.contrib.auth.models import User
from django.db.models import Count
from django.utils import timezone
from django.utils.translation import gettext

from annotation.judging.selectors.exclusions import judges_excluded
from annotation.judging.services.item_orders import (
    ItemOrder,
    item_keys_late,
    item_keys_participant,
    item_order,
    item_orders_opening,
)
from annotation.models import Candidate, Study
from metrics.core.comparison_plan import pair_key, pair_key_split, plan_control_pairs, plan_pairs, sides_for_judge
from metrics.core.stats.comparison import CONTROL_ACCURACY_BLANK, Comparison, control_accuracy

from ...defaults import PEM_REPORT_TARGET
from ...enums import (
    COMPARISON_ANSWERS,
    COMPARISON_PREFERENCE,
    CONTROL_KIND_OF_SYSTEM_KIND,
    CONTROL_SYSTEM_PREFIX,
)
from ...errors import CannotOpen, JudgmentInvalid
from ...models import Assignment, JudgingDesign
from ...screening import qc_rows_with_attention
from ...selectors.export_rows import RECORD_COLUMNS, judgment_record_cells
from ...selectors.judge import JudgeEntry, item_before, item_entry_fields, item_of_judge
from ...services.submission import Envelope, key_clean, submission_store
from ...tokens import item_token_new
from ..base import ExportAnswer
from .models import ComparisonItem, ComparisonJudgment

BULK_BATCH = 5000


def questions(design: JudgingDesign) -> list[dict]:
    """The questions a comparison judge answers: one overall, or one per criterion of the design."""
    if design.comparison_per_criterion:
        return [{"slug": c["slug"], "name": c["name"], "help": c.get("help", "")} for c in design.criteria]
    return [
        {
            "slug": COMPARISON_PREFERENCE,
            "name": gettext("Which paraphrase is better?"),
            "help": gettext("A good paraphrase keeps the meaning, is fluent, and differs from the original."),
        }
    ]


def expected_question(design: JudgingDesign) -> str | None:
    """The question on which a control pair has an expected answer (the genuine paraphrase
    wins): the overall preference, or the criterion ``overall`` when asked per criterion."""
    if not design.comparison_per_criterion:
        return COMPARISON_PREFERENCE
    return PEM_REPORT_TARGET if PEM_REPORT_TARGET in design.criterion_slugs else None


# --- opening ---------------------------------------------------------------------------


def _pair_plan(study: Study, design: JudgingDesign) -> tuple[list[str], dict[tuple[str, str], int]]:
    """Every pair key to judge (genuine and control pairs) and (original, system) → candidate pk."""
    rows = Candidate.objects.filter(original__study=study).values_list("id", "original__external_id", "system__name")
    pks: dict[tuple[str, str], int] = {}
    genuine: dict[str, list[str]] = defaultdict(list)
    controls: dict[str, list[str]] = defaultdict(list)
    for pk, original, system in rows:
        pks[(original, system)] = pk
        (controls if system.startswith(CONTROL_SYSTEM_PREFIX) else genuine)[original].append(system)
    keys = plan_pairs(genuine, per_original=design.pairs_per_original, seed=design.seed)
    keys += plan_control_pairs(controls, genuine, seed=design.seed)
    return sorted(keys), pks


def _items_insert(*, assignment: Assignment, order: list[str], pks: Mapping[tuple[str, str], int]) -> int:
    sides = sides_for_judge(order, seed=assignment.seed)
    now = timezone.now()
    rows = []
    for position, (key, swap) in enumerate(zip(order, sides), 1):
        original, a, b = pair_key_split(key)
        left, right = (b, a) if swap else (a, b)
        rows.append(
            ComparisonItem(
                assignment=assignment,
                left_id=pks[(original, left)],
                right_id=pks[(original, right)],
                position=position,
                token=item_token_new(),
                created_at=now,
                updated_at=now,
                is_control=a.startswith(CONTROL_SYSTEM_PREFIX) or b.startswith(CONTROL_SYSTEM_PREFIX),
            )
        )
    ComparisonItem.objects.bulk_create(rows, batch_size=BULK_BATCH)
    return len(rows)


def side_by_side_assignments_write(*, study: Study, design: JudgingDesign, judges: list[User]) -> tuple[int, int]:
    """Write every judge's comparison assignment (controls must exist already). Returns
    (pairs planned, assignment items written). :class:`CannotOpen` when no original has
    candidates of two different systems. Runs inside the caller's transaction."""
    keys, pks = _pair_plan(study, design)
    if not any(not pair_key_split(k)[1].startswith(CONTROL_SYSTEM_PREFIX) for k in keys):
        raise CannotOpen(
            gettext(
                "Side-by-side comparison needs at least one original with candidates of two "
                "different systems; import them first."
            )
        )
    written = 0
    for order in item_orders_opening(design=design, judges=judges, keys=keys, groups=_groups(keys)):
        assignment = Assignment.objects.create(
            study=study, judge=order.judge, seed=order.seed, n_items=len(order.keys), joined_late=False
        )
        written += _items_insert(assignment=assignment, order=order.keys, pks=pks)
    return len(keys), written


def _groups(keys) -> dict[str, str]:
    """Each pair's original (its group: pairs of one original are kept apart)."""
    return {k: pair_key_split(k)[0] for k in keys}


def _assignment_late_write(*, study: Study, order: ItemOrder, pks) -> Assignment:
    assignment = Assignment.objects.create(
        study=study, judge=order.judge, seed=order.seed, n_items=len(order.keys), joined_late=True
    )
    _items_insert(assignment=assignment, order=order.keys, pks=pks)
    return assignment


def side_by_side_assignment_late(*, study: Study, design: JudgingDesign, judge: User) -> Assignment:
    """A judge added after opening: every pair the others have (fully crossed) or, with
    k per item, as many as the lightest load from the least-judged pairs. When nobody
    holds a pair yet (a field study opened with no judge), the pairs come from the study's
    own plan, all of them, as the absolute protocol's late judge gets every item. The
    caller holds the design's row lock."""
    items = ComparisonItem.objects.filter(assignment__study=study).values_list(
        "left__original__external_id", "left__system__name", "right__system__name", "left_id", "right_id"
    )
    pks: dict[tuple[str, str], int] = {}
    counts: Counter[str] = Counter()
    for original, ls, rs, lpk, rpk in items:
        pks[(original, ls)], pks[(original, rs)] = lpk, rpk
        counts[pair_key(original, ls, rs)] += 1
    keys = sorted(counts)
    if not counts:
        keys, pks = _pair_plan(study, design)
    keys = item_keys_late(study=study, design=design, judge=judge, keys=keys, live=counts)
    order = item_order(design=design, judge=judge, keys=keys, groups=_groups(keys))
    return _assignment_late_write(study=study, order=order, pks=pks)


def side_by_side_assignment_for_participant(
    *, study: Study, design: JudgingDesign, judge: User, n_items: int | None
) -> Assignment:
    """A join-link participant's pairs: every planned pair (``n_items`` empty) or ``n_items``
    pairs from those with the fewest *live* judges (answered or still held; a timed-out
    participant's released pairs count as free again), in the judge's own seeded order
    and sides. Unlike a late judge, the plan is the study's, not the other judges' pairs:
    a field study often opens with no judge at all. The caller holds the design's lock."""
    keys, pks = _pair_plan(study, design)
    live: Counter[str] = Counter(
        pair_key(o, ls, rs)
        for o, ls, rs in ComparisonItem.objects.filter(assignment__study=study).values_list(
            "left__original__external_id", "left__system__name", "right__system__name"
        )
    )
    keys = item_keys_participant(design=design, judge=judge, keys=keys, live=live, n_items=n_items)
    order = item_order(design=design, judge=judge, keys=keys, groups=_groups(keys))
    return _assignment_late_write(study=study, order=order, pks=pks)


# --- the judge's side ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class JudgePair(JudgeEntry):
    """One pair as a judge sees it (the shared :class:`JudgeEntry` and the two texts)."""

    a: str  # the text shown first: on the left, or on the right of a mirrored page
    b: str  # the text shown second
    answers: dict[str, str] | None


def _pairs_with_texts():
    return ComparisonItem.objects.select_related("left__original", "right")


def _done(assignment: Assignment) -> int:
    return ComparisonItem.objects.filter(assignment=assignment, done_at__isnull=False).count()


def _judge_pair(item: ComparisonItem, *, assignment: Assignment) -> JudgePair:
    latest = ComparisonJudgment.objects.filter(item=item, is_latest=True).first() if item.done_at else None
    shown = JudgingDesign.objects.filter(study_id=assignment.study_id, show_context=True).exists()
    return JudgePair(
        **item_entry_fields(item=item, assignment=assignment, latest=latest, original=item.left.original, shown=shown),
        original=item.left.original.text,
        a=item.left.text,
        b=item.right.text,
        answers=dict(latest.values) if latest else None,
    )


def pair_next_for_judge(*, assignment: Assignment) -> JudgePair | None:
    """The first pair not yet answered (the resume point); None when all are."""
    item = _pairs_with_texts().filter(assignment=assignment, done_at__isnull=True).order_by("position").first()
    return None if item is None else _judge_pair(item, assignment=assignment)


def pair_for_judge(*, study: Study, judge: User, token: str) -> JudgePair:
    item = item_of_judge(_pairs_with_texts(), study=study, judge=judge, token=token)
    return _judge_pair(item, assignment=item.assignment)


def pair_previous_for_judge(*, study: Study, judge: User, token: str | None = None) -> JudgePair | None:
    """The pair before ``token`` (or before the resume point); None at the start."""
    item, assignment = item_before(_pairs_with_texts(), study=study, judge=judge, token=token)
    return None if item is None else _judge_pair(item, assignment=assignment)


def answers_clean(*, design: JudgingDesign, answers: object) -> dict[str, str]:
    """Every question answered with "A", "tie" or "B"; unknown questions refused (:class:`JudgmentInvalid`)."""
    slugs = [q["slug"] for q in questions(design)]
    if not isinstance(answers, Mapping):
        raise JudgmentInvalid(gettext("answers must map each question to A, tie or B"))
    errors: dict[str, list[str]] = {}
    for name in answers:
        if name not in slugs:
            errors.setdefault(str(name), []).append(gettext("unknown question"))
    out = {}
    for slug in slugs:
        v = answers.get(slug)
        if v not in COMPARISON_ANSWERS:
            errors.setdefault(slug, []).append(gettext("answer A, tie or B"))
        else:
            out[slug] = v
    if errors:
        raise JudgmentInvalid(gettext("Answer every question with A, tie or B."), field_errors=errors)
    return out


def side_by_side_submit(
    *, answers: Mapping[str, object], **envelope: Unpack[Envelope]
) -> tuple[ComparisonJudgment, bool]:
    """Store one judge's answers for one pair of their assignment. Returns (judgment, created).

    The answers are checked against the design's questions (:func:`answers_clean`), then
    stored by the submission core every protocol shares
    (:func:`annotation.judging.services.submission.submission_store`): idempotent on
    ``(judge, key)`` (:class:`KeyReused` for the same key with another submission), the
    study must be open, the serve stamp must be this pair's, a second submission is a
    new revision. No automatic QC screen-out runs after it: that rule tests absolute
    scores of controls; a comparison study's QC is its control-pair accuracy (:func:`side_by_side_qc`).
    """
    key_clean(envelope["key"])
    clean = answers_clean(design=JudgingDesign.objects.get(study=envelope["study"]), answers=answers)
    result = submission_store(values=clean, item_model=ComparisonItem, judgment_model=ComparisonJudgment, **envelope)
    return cast(ComparisonJudgment, result.judgment), result.created


# --- the researcher's side --------------------------------------------------------------


def study_has_side_by_side_judgments(*, study: Study) -> bool:
    return ComparisonJudgment.objects.filter(study=study).exists()


def _latest(study: Study):
    return (
        ComparisonJudgment.objects.filter(study=study, is_latest=True)
        .select_related(
            "judge", "item__assignment", "item__left__system", "item__right__system", "item__left__original"
        )
        .order_by("judge__username", "item__assignment_id", "item__position")
    )


def side_by_side_records(*, study: Study) -> dict[str, list[Comparison]]:
    """Latest answers as :class:`~metrics.core.stats.comparison.Comparison` values, per question.

    A control pair's expected winner (on :func:`expected_question`) is its genuine system.
    """
    design = JudgingDesign.objects.get(study=study)
    expect_on = expected_question(design)
    out: dict[str, list[Comparison]] = {q["slug"]: [] for q in questions(design)}
    for j in _latest(study):
        left, right = j.item.left.system.name, j.item.right.system.name
        genuine = right if left.startswith(CONTROL_SYSTEM_PREFIX) else left
        for slug, answer in j.values.items():
            out.setdefault(slug, []).append(
                Comparison(
                    judge=j.judge.username,
                    original=j.item.left.original.external_id,
                    left=left,
                    right=right,
                    answer={"A": "left", "tie": "tie", "B": "right"}[answer],
                    is_control=j.item.is_control,
                    expected=genuine if j.item.is_control and slug == expect_on else None,
                )
            )
    return out


EXPORT_HEADER = [
    "judge",
    "position",
    "original_id",
    "left_system",
    "right_system",
    "left_text",
    "right_text",
    "question",
    "answer",
    "preferred_system",
    "is_control",
    *RECORD_COLUMNS,
]


def side_by_side_export_rows(*, study: Study) -> Iterator[list]:
    """The researcher's CSV: one row per latest answer, with the systems on each side."""
    yield EXPORT_HEADER
    for j in _latest(study):
        left, right = j.item.left, j.item.right
        for slug, answer in j.values.items():
            preferred = {"A": left.system.name, "B": right.system.name}.get(answer, "")
            yield [
                j.judge.username,
                j.item.position,
                left.original.external_id,
                left.system.name,
                right.system.name,
                left.text,
                right.text,
                slug,
                answer,
                preferred,
                j.item.is_control,
                *judgment_record_cells(j),
            ]


def side_by_side_qc(*, study: Study) -> list[dict]:
    """Per judge with answered control pairs: n, answered as expected, accuracy, the binomial
    p-value against chance and ``passes`` at the design's QC level, ``excluded``
    (:func:`metrics.core.stats.comparison.control_accuracy`), and ``attention``: (attention
    pairs answered, passed), None when the judge answered none."""
    design = JudgingDesign.objects.get(study=study)
    slug = expected_question(design)
    if slug is None:
        return []
    excluded = judges_excluded(study=study)
    rows = control_accuracy(side_by_side_records(study=study).get(slug, []), qc_alpha=design.qc_alpha)
    return qc_rows_with_attention(
        study=study, rows=[r | {"excluded": r["judge"] in excluded} for r in rows], blank=CONTROL_ACCURACY_BLANK
    )


def side_by_side_pair_of(left_id: int, right_id: int) -> tuple[int, int]:
    """A pair as every judge of it shares it: its two candidate ids in order (each judge sees
    them on their own sides)."""
    return (left_id, right_id) if left_id < right_id else (right_id, left_id)


def side_by_side_per_pair(*, study: Study, done: bool) -> dict[tuple[int, int], int]:
    """Pair (:func:`side_by_side_pair_of`) → how many judges hold it (``done``: have answered it)."""
    items = ComparisonItem.objects.filter(assignment__study=study)
    if done:
        items = items.filter(done_at__isnull=False)
    out: Counter[tuple[int, int]] = Counter()
    for left, right, n in (
        items.values("left_id", "right_id").annotate(n=Count("id")).order_by().values_list("left_id", "right_id", "n")
    ):
        out[side_by_side_pair_of(left, right)] += n
    return dict(out)


def side_by_side_rated_per_system(*, study: Study) -> dict[str, int]:
    """System name → latest answers of pairs its candidates were in."""
    out: Counter[str] = Counter()
    for left, right, n in (
        _latest_rows(study)
        .values("item__left__system__name", "item__right__system__name")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("item__left__system__name", "item__right__system__name", "n")
    ):
        out[left] += n
        out[right] += n
    return dict(out)


def _latest_rows(study: Study):
    return ComparisonJudgment.objects.filter(study=study, is_latest=True)


def side_by_side_export_questions(*, study: Study) -> list[str]:
    """The answers of a pair in the tidy and wide CSVs: one per question the design asks."""
    return [q["slug"] for q in questions(JudgingDesign.objects.get(study=study))]


def side_by_side_export_answers(*, study: Study) -> Iterator[ExportAnswer]:
    """Every latest answer (screened-out judges left out) as the tidy and wide CSVs write it: the
    pair (``<candidate id>|<candidate id>``, lower id first, whatever the judge's sides), its two
    systems (``first vs second``) and, per question, the system preferred or ``tie``."""
    for j in _latest(study).exclude(item__assignment__screened_out_at__isnull=False):
        left, right = j.item.left, j.item.right
        first, second = (left, right) if left.pk < right.pk else (right, left)
        control = next((c for c in (first, second) if c.system.name.startswith(CONTROL_SYSTEM_PREFIX)), None)
        yield ExportAnswer(
            judge=j.judge.username,
            item=f"{first.pk}|{second.pk}",
            original_id=left.original.external_id,
            system=f"{first.system.name} vs {second.system.name}",
            control_kind=(CONTROL_KIND_OF_SYSTEM_KIND.get(control.system.kind) or "") if control else "",
            original=left.original.text,
            candidate=f"{first.text} | {second.text}",
            values={
                slug: {"A": left.system.name, "B": right.system.name}.get(answer, answer)
                for slug, answer in j.values.items()
            },
            seconds=j.seconds,
            active_seconds=j.active_seconds,
            submitted_at=j.submitted_at,
            revision=j.revision,
        )
