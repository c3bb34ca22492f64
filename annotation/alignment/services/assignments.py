"""Writes: the study's alignment settings (k, the pre-fill system) and handing pairs out to annotators."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.models import Study

from .. import selectors
from ..enums import AssignmentStatus
from ..models import AlignmentAssignment, AlignmentConfig, AlignmentPair, AlignmentSystem, SystemAlignment


@transaction.atomic
def alignment_config_update(
    *,
    study: Study,
    annotators_per_pair: int | None = None,
    prefill_system: AlignmentSystem | None = None,
    clear_prefill: bool = False,
) -> AlignmentConfig:
    """Change the study's k and pre-fill system.

    A new pre-fill system is also copied into every assignment nobody has
    touched yet (revision 0), so that annotators start from it.
    """
    config, _ = AlignmentConfig.objects.select_for_update().get_or_create(study=study)
    if annotators_per_pair is not None:
        config.annotators_per_pair = annotators_per_pair
    if prefill_system is not None:
        if prefill_system.study_id != study.pk:
            raise ValidationError("the pre-fill system belongs to another study")
        config.prefill_system = prefill_system
    elif clear_prefill:
        config.prefill_system = None
    config.full_clean()
    config.save()
    untouched = AlignmentAssignment.objects.filter(pair__study=study, revision=0, status=AssignmentStatus.ASSIGNED)
    if prefill_system is not None or clear_prefill:
        by_pair = {}
        if config.prefill_system_id:
            by_pair = {r.pair_id: r for r in SystemAlignment.objects.filter(system_id=config.prefill_system_id)}
        batch = []
        for a in untouched:
            row = by_pair.get(a.pair_id)
            a.sure, a.possible = (row.sure, row.possible) if row else ([], [])
            a.prefill_system_id = config.prefill_system_id
            batch.append(a)
        AlignmentAssignment.objects.bulk_update(batch, ["sure", "possible", "prefill_system"], batch_size=500)
    return config


@transaction.atomic
def assignments_create(*, study: Study, annotators: Iterable[User] | None = None) -> dict:
    """Give each pair of the study up to k annotators (k from the study's settings); idempotent.

    ``annotators`` defaults to the study's annotator members. Pairs are handed
    out in task order to the annotators with the fewest assignments so far
    (ties by username), never twice to one person. New assignments start from
    the pre-fill system's alignment. Returns counts, including the pairs still
    short of k because the study has fewer than k annotators.
    """
    config = selectors.alignment_config_get(study=study)
    k = config.annotators_per_pair
    people = sorted(
        annotators if annotators is not None else selectors.annotators_of_study(study=study), key=lambda u: u.username
    )
    if not people:
        raise ValidationError("the study has no annotators; add people with the role 'annotator' first")
    existing: dict[int, set[int]] = {}
    load: Counter[int] = Counter()
    for pid, uid in AlignmentAssignment.objects.filter(pair__study=study).values_list("pair_id", "annotator_id"):
        existing.setdefault(pid, set()).add(uid)
        load[uid] += 1
    prefill = {}
    if config.prefill_system_id:
        prefill = {r.pair_id: r for r in SystemAlignment.objects.filter(system_id=config.prefill_system_id)}
    order = {u.pk: n for n, u in enumerate(people)}
    new, short = [], 0
    for pair in AlignmentPair.objects.filter(study=study).order_by("position"):
        have = existing.get(pair.pk, set())
        need = k - len(have)
        if need <= 0:
            continue
        candidates = sorted((u for u in people if u.pk not in have), key=lambda u: (load[u.pk], order[u.pk]))
        chosen = candidates[:need]
        short += need > len(chosen)
        for u in chosen:
            load[u.pk] += 1
            row = prefill.get(pair.pk)
            new.append(
                AlignmentAssignment(
                    pair=pair,
                    annotator=u,
                    prefill_system_id=config.prefill_system_id,
                    sure=list(row.sure) if row else [],
                    possible=list(row.possible) if row else [],
                )
            )
    AlignmentAssignment.objects.bulk_create(new, batch_size=1000)
    return {"created": len(new), "pairs_short": short, "annotators_per_pair": k, "annotators": len(people)}
