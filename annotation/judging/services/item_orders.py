"""Which items a judge gets, and in what order: at opening, for a judge added late and for a
join-link participant, for every protocol. An item is a key the protocol makes (a candidate,
a set of candidates, a pair) with the original it belongs to (its group); the protocol writes
its own rows from the orders (its table and its fields).

Every judge's order is their own, drawn from the design's seed (:mod:`metrics.core.assignment`),
so the same seed reproduces the same orders after a reset. Fully crossed, every judge gets
every item; exactly k per item, a judge added late gets as many items as the lightest-loaded
judge, and a participant ``n_items``, from the items with the fewest live judges (released
items count as free again).

For the protocols whose item is one candidate (absolute rating, ESA) the keys are the
candidates' (:func:`~annotation.judging.services.opening.study_items`), and
:func:`candidate_orders_opening`, :func:`candidate_order_late` and
:func:`candidate_order_participant` give the orders as candidate ids.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db.models import Count

from annotation.models import Study
from metrics.core.assignment import derive_seed, late_judge_items, order_items, plan_assignments

from ..enums import JudgesMode
from ..models import Assignment, JudgingDesign
from .opening import judges_per_item, study_items


@dataclass(frozen=True)
class ItemOrder:
    """One judge's items (keys) in the order they are shown, and the seed that drew it."""

    judge: User
    seed: int
    keys: list[str]


def item_orders_opening(
    *, design: JudgingDesign, judges: list[User], keys: Sequence[str], groups: Mapping[str, str]
) -> list[ItemOrder]:
    """Every judge's items at opening (:func:`metrics.core.assignment.plan_assignments`)."""
    if not judges:
        return []
    by_name = {u.username: u for u in judges}
    plan = plan_assignments(
        list(keys), dict(groups), list(by_name), seed=design.seed, judges_per_item=judges_per_item(design)
    )
    return [ItemOrder(judge=by_name[o.judge], seed=o.seed, keys=list(o.items)) for o in plan.orders]


def item_keys_late(
    *, study: Study, design: JudgingDesign, judge: User, keys: Sequence[str], live: Mapping[str, int]
) -> list[str]:
    """A judge added after opening, from ``keys`` (those the others hold, or the plan's when
    nobody holds one yet) and ``live`` (how many judges hold each now). Fully crossed: all of
    them. Exactly k per item: as many as the lightest-loaded judge, from the least-judged."""
    if design.judges_mode == JudgesMode.K_PER_ITEM and live:
        loads = Assignment.objects.filter(study=study).values_list("n_items", flat=True)
        counts = {k: live.get(k, 0) for k in keys}
        return late_judge_items(counts, n_items=min(loads), seed=derive_seed(design.seed, "late", judge.username))
    return list(keys)


def item_keys_participant(
    *, design: JudgingDesign, judge: User, keys: Sequence[str], live: Mapping[str, int], n_items: int | None
) -> list[str]:
    """A join-link participant, from the plan's ``keys``. Fully crossed (or ``n_items`` empty):
    all of them. Exactly k per item, or fewer than all: ``n_items`` from those with the
    fewest *live* judges (done or still held)."""
    if n_items is not None and (design.judges_mode == JudgesMode.K_PER_ITEM or n_items < len(keys)):
        counts = {k: live.get(k, 0) for k in keys}
        return late_judge_items(
            counts, n_items=min(n_items, len(keys)), seed=derive_seed(design.seed, "late", judge.username)
        )
    return list(keys)


def item_order(*, design: JudgingDesign, judge: User, keys: Sequence[str], groups: Mapping[str, str]) -> ItemOrder:
    """``keys`` in the judge's own seeded order (items of one original kept apart)."""
    seed = derive_seed(design.seed, "order", judge.username)
    return ItemOrder(
        judge=judge, seed=seed, keys=list(order_items(list(keys), {k: groups[k] for k in keys}, seed=seed))
    )


# --- items that are one candidate (absolute rating, ESA) --------------------------------------


@dataclass(frozen=True)
class CandidateOrder:
    """One judge's candidates (primary keys) in the order they are shown, and its seed."""

    judge: User
    seed: int
    candidate_ids: list[int]


def _candidates(order: ItemOrder, pks: Mapping[str, int]) -> CandidateOrder:
    return CandidateOrder(judge=order.judge, seed=order.seed, candidate_ids=[pks[k] for k in order.keys])


def candidate_orders_opening(
    *, study: Study, design: JudgingDesign, judges: list[User]
) -> tuple[int, list[CandidateOrder]]:
    """Every judge's candidates at opening: (the number of items, one order a judge)."""
    keys, groups, pks = study_items(study)
    orders = item_orders_opening(design=design, judges=judges, keys=keys, groups=groups)
    return len(keys), [_candidates(o, pks) for o in orders]


def candidate_counts_live(*, study: Study, item_model) -> Counter:
    """Candidate id → how many judges hold it now (done or not; released items are gone)."""
    return Counter(
        dict(
            item_model.objects.filter(assignment__study=study)
            .values("candidate_id")
            .annotate(n=Count("id"))
            .order_by()
            .values_list("candidate_id", "n")
        )
    )


def candidate_order_late(*, study: Study, design: JudgingDesign, judge: User, item_model) -> CandidateOrder:
    """A judge added after opening: the candidates the others hold (not data imported since)."""
    held = candidate_counts_live(study=study, item_model=item_model)
    keys, groups, pks = study_items(study, candidate_ids=list(held) if held else None)
    live = {k: held.get(pks[k], 0) for k in keys} if held else {}
    chosen = item_keys_late(study=study, design=design, judge=judge, keys=keys, live=live)
    return _candidates(item_order(design=design, judge=judge, keys=chosen, groups=groups), pks)


def candidate_order_participant(
    *, study: Study, design: JudgingDesign, judge: User, n_items: int | None, item_model
) -> CandidateOrder:
    """A join-link participant: from every candidate of the study."""
    held = candidate_counts_live(study=study, item_model=item_model)
    keys, groups, pks = study_items(study)
    live = {k: held.get(pks[k], 0) for k in keys}
    chosen = item_keys_participant(design=design, judge=judge, keys=keys, live=live, n_items=n_items)
    return _candidates(item_order(design=design, judge=judge, keys=chosen, groups=groups), pks)
