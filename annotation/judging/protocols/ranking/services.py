"""k-way ranking: the fourth judging protocol (writes, and what a judge is served).

A ranking study shows each judge an original with k candidates of it at once (the
design's ``ranking_k``) and asks for their order, best first, ties allowed, and, when the
design's ``ranking_scores`` is set, a 0–100 score for each. Which candidates are ranked
together comes from :func:`metrics.core.ranking.sets.plan_sets` (balanced over systems,
controls in sets of their own), each judge's order of the sets from
:func:`metrics.core.assignment.plan_assignments`, and the order of the candidates on the
screen from a seeded shuffle per judge and set (:func:`~metrics.core.ranking.sets.screen_order`),
stored server-side in :attr:`RankingItem.candidates`.

The judge names candidates by their place on the screen only (1..k): what a judge
receives is built by :func:`ranking_next_for_judge`, :func:`ranking_for_judge` and
:func:`ranking_previous_for_judge` as :class:`JudgeRanking` values (texts, places,
positions and opaque tokens). A submitted order of places is turned into candidate ids
here (:func:`order_clean`) and stored by the shared submission core. What the researcher
reads (records, exports, QC) is in :mod:`.selectors`.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Unpack, cast

from django.contrib.auth.models import User
from django.utils import timezone
from django.utils.translation import gettext

from annotation.judging.services.item_orders import (
    ItemOrder,
    item_keys_late,
    item_keys_participant,
    item_order,
    item_orders_opening,
)
from annotation.models import Candidate, Study
from metrics.core.ranking.sets import plan_sets, screen_order, set_key, set_key_split

from ...enums import CONTROL_SYSTEM_PREFIX
from ...errors import CannotOpen, JudgmentInvalid
from ...models import Assignment, JudgingDesign
from ...selectors.judge import JudgeEntry, item_before, item_entry_fields, item_of_judge
from ...services.submission import Envelope, key_clean, submission_store
from ...tokens import item_token_new
from .models import RankingItem, RankingJudgment

BULK_BATCH = 5000
SCORE_MIN, SCORE_MAX = 0, 100


# --- opening ---------------------------------------------------------------------------


def _candidates(
    study: Study,
) -> tuple[dict[str, list[str]], dict[str, list[str]], dict[tuple[str, str], int], dict[str, int]]:
    """(genuine systems per original, control systems per original, (original, system) →
    candidate pk, original external id → original pk)."""
    rows = Candidate.objects.filter(original__study=study).values_list(
        "id", "original_id", "original__external_id", "system__name"
    )
    pks: dict[tuple[str, str], int] = {}
    originals: dict[str, int] = {}
    genuine: dict[str, list[str]] = defaultdict(list)
    controls: dict[str, list[str]] = defaultdict(list)
    for pk, original_pk, original, system in rows:
        pks[(original, system)] = pk
        originals[original] = original_pk
        (controls if system.startswith(CONTROL_SYSTEM_PREFIX) else genuine)[original].append(system)
    return genuine, controls, pks, originals


def _set_plan(study: Study, design: JudgingDesign):
    genuine, controls, pks, originals = _candidates(study)
    keys = plan_sets(genuine, controls, k=design.ranking_k, seed=design.seed)
    return keys, pks, originals


def _items_insert(
    *, assignment: Assignment, order: list[str], pks: Mapping[tuple[str, str], int], originals: Mapping[str, int]
) -> int:
    now = timezone.now()
    rows = []
    for position, key in enumerate(order, 1):
        original, systems = set_key_split(key)
        shown = screen_order(systems, seed=assignment.seed, key=key)
        rows.append(
            RankingItem(
                assignment=assignment,
                original_id=originals[original],
                candidates=[pks[(original, s)] for s in shown],
                position=position,
                token=item_token_new(),
                created_at=now,
                updated_at=now,
                is_control=any(s.startswith(CONTROL_SYSTEM_PREFIX) for s in systems),
            )
        )
    RankingItem.objects.bulk_create(rows, batch_size=BULK_BATCH)
    return len(rows)


def ranking_assignments_write(*, study: Study, design: JudgingDesign, judges: list[User]) -> tuple[int, int]:
    """Write every judge's ranking assignment (controls must exist already). Returns (sets
    planned, assignment items written). :class:`CannotOpen` when no original has candidates
    of two systems. Runs inside the caller's transaction."""
    keys, pks, originals = _set_plan(study, design)
    if not any(not any(s.startswith(CONTROL_SYSTEM_PREFIX) for s in set_key_split(k)[1]) for k in keys):
        raise CannotOpen(
            gettext("Ranking needs at least one original with candidates of two different systems; import them first.")
        )
    written = 0
    for order in item_orders_opening(design=design, judges=judges, keys=keys, groups=_groups(keys)):
        assignment = Assignment.objects.create(
            study=study, judge=order.judge, seed=order.seed, n_items=len(order.keys), joined_late=False
        )
        written += _items_insert(assignment=assignment, order=order.keys, pks=pks, originals=originals)
    return len(keys), written


def _groups(keys) -> dict[str, str]:
    """Each set's original (its group: sets of one original are kept apart)."""
    return {k: set_key_split(k)[0] for k in keys}


def _assignment_late_write(*, study: Study, order: ItemOrder, pks, originals) -> Assignment:
    assignment = Assignment.objects.create(
        study=study, judge=order.judge, seed=order.seed, n_items=len(order.keys), joined_late=True
    )
    _items_insert(assignment=assignment, order=order.keys, pks=pks, originals=originals)
    return assignment


def _live_keys(study: Study) -> Counter[str]:
    """How many judges hold each set now (answered or not)."""
    names = dict(Candidate.objects.filter(original__study=study).values_list("id", "system__name"))
    live: Counter[str] = Counter()
    for original, cands in RankingItem.objects.filter(assignment__study=study).values_list(
        "original__external_id", "candidates"
    ):
        live[set_key(original, [names[c] for c in cands])] += 1
    return live


def ranking_assignment_late(*, study: Study, design: JudgingDesign, judge: User) -> Assignment:
    """A judge added after opening: every set the others have (fully crossed) or, with k per
    item, as many as the lightest load from the least-judged sets. When nobody holds a set
    yet (a field study opened with no judge), the sets come from the study's own plan, all
    of them, as the absolute protocol's late judge gets every item: building only from the
    others' sets gave such a judge none, for good. The caller holds the design's row lock."""
    counts = _live_keys(study)
    if counts:
        _, _, pks, originals = _candidates(study)
        keys = sorted(counts)
    else:
        keys, pks, originals = _set_plan(study, design)
    keys = item_keys_late(study=study, design=design, judge=judge, keys=keys, live=counts)
    order = item_order(design=design, judge=judge, keys=keys, groups=_groups(keys))
    return _assignment_late_write(study=study, order=order, pks=pks, originals=originals)


def ranking_assignment_for_participant(
    *, study: Study, design: JudgingDesign, judge: User, n_items: int | None
) -> Assignment:
    """A join-link participant's sets: every planned set (``n_items`` empty) or ``n_items`` sets
    from those with the fewest live judges, in the judge's own seeded order and screen
    orders. The caller holds the design's lock."""
    keys, pks, originals = _set_plan(study, design)
    keys = item_keys_participant(design=design, judge=judge, keys=keys, live=_live_keys(study), n_items=n_items)
    order = item_order(design=design, judge=judge, keys=keys, groups=_groups(keys))
    return _assignment_late_write(study=study, order=order, pks=pks, originals=originals)


# --- the judge's side ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class JudgeRanking(JudgeEntry):
    """One set as a judge sees it (the shared :class:`JudgeEntry`, the k texts in screen
    order, named 1..k by their place) and the judge's latest answer in places."""

    candidates: tuple[str, ...]
    order: list[int | list[int]] | None  # places best first, ties as lists; None: not answered
    ranks: dict[int, int]  # place → rank (1 = best; tied places share the best rank of their group)
    scores: dict[int, float]  # place → score, when answered with scores
    asks_scores: bool

    @property
    def places(self) -> list[int]:
        return list(range(1, len(self.candidates) + 1))


def _rank_items():
    return RankingItem.objects.select_related("original")


def places_of(
    item: RankingItem, judgment: RankingJudgment
) -> tuple[list[int | list[int]], dict[int, int], dict[int, float]]:
    """The stored answer in the judge's screen places: order, place → rank, place → score."""
    place = {cid: i for i, cid in enumerate(item.candidates, 1)}
    order: list[int | list[int]] = []
    ranks: dict[int, int] = {}
    placed = 0
    for group in judgment.groups:
        ids = group if isinstance(group, list) else [group]
        places = [place[c] for c in ids]
        order.append(places if len(places) > 1 else places[0])
        for p in places:
            ranks[p] = placed + 1
        placed += len(places)
    scores = {place[int(c)]: v for c, v in (judgment.scores or {}).items()}
    return order, ranks, scores


def _judge_ranking(item: RankingItem, *, assignment: Assignment, design: JudgingDesign) -> JudgeRanking:
    latest = RankingJudgment.objects.filter(item=item, is_latest=True).first() if item.done_at else None
    texts = dict(Candidate.objects.filter(pk__in=item.candidates).values_list("id", "text"))
    order, ranks, scores = places_of(item, latest) if latest else (None, {}, {})
    return JudgeRanking(
        **item_entry_fields(
            item=item, assignment=assignment, latest=latest, original=item.original, shown=design.show_context
        ),
        original=item.original.text,
        candidates=tuple(texts[c] for c in item.candidates),
        order=order,
        ranks=ranks,
        scores=scores,
        asks_scores=design.ranking_scores,
    )


def ranking_next_for_judge(*, assignment: Assignment) -> JudgeRanking | None:
    """The first set not yet ranked (the resume point); None when all are."""
    item = _rank_items().filter(assignment=assignment, done_at__isnull=True).order_by("position").first()
    if item is None:
        return None
    return _judge_ranking(item, assignment=assignment, design=JudgingDesign.objects.get(study_id=assignment.study_id))


def ranking_for_judge(*, study: Study, judge: User, token: str) -> JudgeRanking:
    item = item_of_judge(_rank_items(), study=study, judge=judge, token=token)
    return _judge_ranking(item, assignment=item.assignment, design=JudgingDesign.objects.get(study=study))


def ranking_previous_for_judge(*, study: Study, judge: User, token: str | None = None) -> JudgeRanking | None:
    """The set before ``token`` (or before the resume point); None at the start."""
    item, assignment = item_before(_rank_items(), study=study, judge=judge, token=token)
    if item is None:
        return None
    return _judge_ranking(item, assignment=assignment, design=JudgingDesign.objects.get(study=study))


def _place(value: object, k: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError
    place = int(value)
    if not 1 <= place <= k:
        raise ValueError
    return place


def order_from_ranks(ranks: Mapping[str, object], *, k: int) -> list[int | list[int]]:
    """The order, best first with ties as lists, from a rank (1 = best) per screen place, as the
    page's form sends it: places with the same rank are tied. :class:`JudgmentInvalid` when a
    place has no rank or a rank is not a whole number from 1 to k."""
    errors: dict[str, list[str]] = {}
    by_rank: dict[int, list[int]] = defaultdict(list)
    for place in range(1, k + 1):
        raw = ranks.get(str(place))
        try:
            rank = _place(raw.strip() if isinstance(raw, str) else raw, k)
        except (TypeError, ValueError):
            errors[f"rank_{place}"] = [gettext("give a rank from 1 to %(k)d") % {"k": k}]
            continue
        by_rank[rank].append(place)
    if errors:
        raise JudgmentInvalid(
            gettext("Give every paraphrase a rank from 1 (best) to %(k)d; equal ranks are ties.") % {"k": k},
            field_errors=errors,
        )
    return [g[0] if len(g) == 1 else g for _, g in sorted(by_rank.items())]


def order_clean(
    *, item: RankingItem, design: JudgingDesign, order: object, scores: object
) -> tuple[list[int | list[int]], dict[str, int | float]]:
    """The judge's order of screen places (best first, ties as lists of places) and scores
    (place → 0–100), checked and turned into candidate ids: (groups, scores by candidate id
    as text). Every place 1..k exactly once; scores for every place when the design asks
    for them, none otherwise. :class:`JudgmentInvalid` naming the problem."""
    k = len(item.candidates)
    if not isinstance(order, list) or not order:
        raise JudgmentInvalid(
            gettext("order must list the places 1 to %(k)d, best first (ties as lists).") % {"k": k},
            field_errors={"order": ["not a list of places"]},
        )
    groups: list[int | list[int]] = []
    seen: list[int] = []
    for element in order:
        places = element if isinstance(element, list) else [element]
        if not places:
            raise JudgmentInvalid(gettext("An empty tie in the order."), field_errors={"order": ["empty tie"]})
        ids = []
        for p in places:
            try:
                place = _place(p, k)
            except (TypeError, ValueError):
                raise JudgmentInvalid(
                    gettext("Places are whole numbers from 1 to %(k)d.") % {"k": k},
                    field_errors={"order": [f"not a place: {str(p)[:20]}"]},
                ) from None
            if place in seen:
                raise JudgmentInvalid(
                    gettext("Place %(place)d is in the order twice.") % {"place": place},
                    field_errors={"order": [f"place {place} twice"]},
                )
            seen.append(place)
            ids.append(item.candidates[place - 1])
        groups.append(ids if len(ids) > 1 else ids[0])
    missing = sorted(set(range(1, k + 1)) - set(seen))
    if missing:
        raise JudgmentInvalid(
            gettext("Rank every paraphrase: %(places)s missing.") % {"places": ", ".join(map(str, missing))},
            field_errors={"order": [f"missing places {missing}"]},
        )
    clean_scores: dict[str, int | float] = {}
    given = scores if scores is not None else {}
    if not isinstance(given, Mapping):
        raise JudgmentInvalid(
            gettext("scores must map each place to a score from 0 to 100."), field_errors={"scores": ["not a mapping"]}
        )
    if given and not design.ranking_scores:
        raise JudgmentInvalid(gettext("This study asks for no scores."), field_errors={"scores": ["not asked"]})
    if design.ranking_scores:
        errors: dict[str, list[str]] = {}
        for name in given:
            try:
                _place(name, k)
            except (TypeError, ValueError):
                errors[f"score_{str(name)[:20]}"] = [gettext("unknown place")]
        for place in range(1, k + 1):
            raw = given.get(str(place), given.get(place))
            try:
                if isinstance(raw, bool) or raw is None or (isinstance(raw, str) and not raw.strip()):
                    raise ValueError
                value = float(raw)
                if not math.isfinite(value) or not SCORE_MIN <= value <= SCORE_MAX:
                    raise ValueError
            except (TypeError, ValueError):
                errors[f"score_{place}"] = [gettext("give a score from 0 to 100")]
                continue
            clean_scores[str(item.candidates[place - 1])] = int(value) if value.is_integer() else value
        if errors:
            raise JudgmentInvalid(gettext("Give every paraphrase a score from 0 to 100."), field_errors=errors)
    return groups, clean_scores


def ranking_submit(
    *, order: object, scores: object = None, **envelope: Unpack[Envelope]
) -> tuple[RankingJudgment, bool]:
    """Store one judge's order (screen places, best first, ties as lists) and scores of one
    set of their assignment, as candidate ids. Returns (judgment, created).

    The order and scores are checked (:func:`order_clean`), then stored by the submission
    core every protocol shares (:func:`~annotation.judging.services.submission.submission_store`):
    idempotent on ``(judge, key)``, the study must be open, the serve stamp must be this
    set's, a second submission is a new revision.
    """
    key_clean(envelope["key"])
    design = JudgingDesign.objects.get(study=envelope["study"])
    item = item_of_judge(_rank_items(), study=envelope["study"], judge=envelope["judge"], token=envelope["token"])
    groups, clean = order_clean(item=item, design=design, order=order, scores=scores)
    result = submission_store(
        values={"groups": groups, "scores": clean},
        item_model=RankingItem,
        judgment_model=RankingJudgment,
        fields_of=dict,
        values_of=lambda j: {"groups": j.groups, "scores": j.scores},
        **envelope,
    )
    return cast(RankingJudgment, result.judgment), result.created
