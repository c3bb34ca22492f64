"""The judge simulator: fill an open study with the judgments of simulated judges."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import numpy as np
import pandas as pd
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from annotation.enums import Role, StudyStatus
from annotation.judging.enums import CONTROL_KIND_OF_SYSTEM_KIND, CRITERIA, JudgmentSource
from annotation.judging.models import JudgingDesign
from annotation.judging.services.assignments import assignment_ensure_for_judge
from annotation.models import Candidate, Original, Study
from annotation.services.membership import study_member_add
from metrics.core.stats.simulate import DEFAULT_SYSTEMS, simulate_judgments

from .models import AssignmentItem, Judgment

SIM_JUDGE_PREFIX = "sim-judge-"


@dataclass(frozen=True)
class SimulationSummary:
    judges: tuple[str, ...]
    random_clickers: tuple[str, ...]
    judgments_created: int
    items_already_rated: int
    items: int
    judges_per_item: int | None


def _simulated_judge(index: int) -> User:
    username = f"{SIM_JUDGE_PREFIX}{index:02d}"
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()  # nobody logs in as a simulated judge
        user.save(update_fields=["password"])
    return user


def _latent_profiles(
    systems: list[str], given: dict[str, dict[str, float]] | None = None
) -> dict[str, dict[str, float]]:
    """Latent per-criterion means for the study's systems: those in ``given`` as given
    (missing criteria from the middle default profile), the others in name order from
    the simulator's four default profiles (two human-like, two machine-like, best
    first) spread over up to four systems so that they differ (two systems: the best
    and the worst profile), cycled beyond four. Without a profile the order of the
    systems in a simulated report therefore says nothing about the systems."""
    given = given or {}
    defaults = list(DEFAULT_SYSTEMS.values())
    out = {name: {**defaults[1], **given[name]} for name in systems if name in given}
    out.update(_default_profiles([name for name in systems if name not in given]))
    return out


def _default_profiles(systems: list[str]) -> dict[str, dict[str, float]]:
    profiles = list(DEFAULT_SYSTEMS.values())
    names = sorted(systems)
    if not names:
        return {}
    if len(names) <= len(profiles):
        picks = np.rint(np.linspace(0, len(profiles) - 1, len(names))).astype(int) if len(names) > 1 else [0]
    else:
        picks = [i % len(profiles) for i in range(len(names))]
    return {name: dict(profiles[int(k)]) for name, k in zip(names, picks)}


@transaction.atomic
def simulated_judges_fill(
    *,
    study: Study,
    n_judges: int,
    judges_per_item: int | None = None,
    n_random_clickers: int = 0,
    seed: int = 0,
    item_sd: float = 0.7,
    judge_bias_sd: float = 0.25,
    noise_sd: float = 0.6,
    control_slip: float = 0.15,
    profiles: dict[str, dict[str, float]] | None = None,
) -> SimulationSummary:
    """Fill an open study with judgments of simulated judges ``sim-judge-01`` … ``sim-judge-NN``.

    The judges are real accounts (unusable passwords) added as judges of the study;
    their assignments are built by the judging app (``assignment_ensure_for_judge``,
    as for any judge added after opening) and their judgments written as
    ``Judgment`` rows like submitted ones (revision 1, keys ``sim-<item token>``,
    serve and submit times spaced by the simulated seconds), so the study then looks
    judged. Scores come from ``metrics.core.stats.simulate_judgments``: latent item
    quality per criterion (systems get the simulator's default profiles, cycled in
    name order), judge bias and noise; the last ``n_random_clickers`` judges click at
    random and fast; careful judges give controls their expected score, sometimes one
    off. With ``judges_per_item`` = k each item is rated by k of the simulated judges
    (chosen at random among those who have it), otherwise by all of them.

    ``profiles`` gives systems their latent per-criterion means (1–5) explicitly —
    a researcher's prior about the systems, e.g. ``fixtures/demo/simulation_profile.json``
    for the demo; systems it does not name get the default profiles above.

    Items a simulated judge already rated are left alone, so running it again adds
    nothing. Raises ``ValidationError`` when judging is not open.
    """
    errors = []
    if n_judges < 1:
        errors.append("the number of simulated judges must be at least 1")
    if not 0 <= n_random_clickers <= max(n_judges, 0):
        errors.append("the number of random clickers must be between 0 and the number of judges")
    if judges_per_item is not None and not 1 <= judges_per_item <= n_judges:
        errors.append("judges per item must be between 1 and the number of judges")
    if profiles:
        known = set(Candidate.objects.filter(original__study=study).values_list("system__name", flat=True))
        for name, means in profiles.items():
            if name not in known:
                errors.append(f"the profile names system '{name}', which study '{study.name}' does not have")
                continue
            for criterion, value in means.items():
                if criterion not in CRITERIA:
                    errors.append(f"the profile of '{name}' names an unknown criterion '{criterion}'")
                elif not isinstance(value, (int, float)) or not 1 <= value <= 5:
                    errors.append(f"the profile of '{name}' gives {criterion} {value!r}; use a number from 1 to 5")
    if errors:
        raise ValidationError(errors)
    design = JudgingDesign.objects.filter(study=study).first()
    if study.status != StudyStatus.OPEN or design is None or not design.is_frozen:
        states: dict[str, str] = {StudyStatus.DRAFT: "still a draft", StudyStatus.CLOSED: "closed"}
        state = states.get(study.status, study.status)
        action = (
            "reopen it on its Judging progress page"
            if study.status == StudyStatus.CLOSED
            else "open judging on its Judging design page"
        )
        raise ValidationError(
            f"Study '{study.name}' is not open for judging (it is {state}); {action} first, then run the simulator."
        )
    if [c["slug"] for c in design.criteria] != list(CRITERIA) or any(
        c["scale"].get("type") != "points" or (c["scale"]["min"], c["scale"]["max"]) != (1, 5) for c in design.criteria
    ):
        raise ValidationError(
            "The simulator simulates PEM's four criteria on 1–5 points; this study's design "
            "has other criteria or scales."
        )
    rng = np.random.default_rng(seed)

    judges = [_simulated_judge(i + 1) for i in range(n_judges)]
    for user in judges:
        study_member_add(study=study, user=user, role=Role.JUDGE)
        if assignment_ensure_for_judge(study=study, judge=user) is None:
            raise ValidationError(f"no assignment could be built for {user.username}")
    clickers = tuple(u.username for u in judges[n_judges - n_random_clickers :]) if n_random_clickers else ()

    # The study's items: originals (import order) × systems, controls by kind and copy.
    originals = list(
        Original.objects.filter(study=study).order_by("position", "external_id").values_list("external_id", flat=True)
    )
    cands = list(
        Candidate.objects.filter(original__study=study).values_list(
            "pk", "original__external_id", "system__name", "system__kind"
        )
    )
    genuine_systems = sorted({name for _, _, name, kind in cands if kind not in CONTROL_KIND_OF_SYSTEM_KIND})
    control_kinds = sorted(
        {CONTROL_KIND_OF_SYSTEM_KIND[kind] for *_, kind in cands if kind in CONTROL_KIND_OF_SYSTEM_KIND}
    )
    copies: dict[str, list[str]] = {}
    for _, _, name, kind in cands:
        if kind in CONTROL_KIND_OF_SYSTEM_KIND:
            copies.setdefault(CONTROL_KIND_OF_SYSTEM_KIND[kind], [])
            if name not in copies[CONTROL_KIND_OF_SYSTEM_KIND[kind]]:
                copies[CONTROL_KIND_OF_SYSTEM_KIND[kind]].append(name)
    max_copies = max((len(v) for v in copies.values()), default=1)
    expected = {k: {c: int(v) for c, v in scores.items()} for k, scores in design.expected_scores.items()}

    # Simulated scores per (judge index, original index, real system name, criterion).
    # One simulation gives the genuine systems and the first copy of each control kind;
    # further control copies (rare) come from further seeded simulations.
    sim_scores: dict[tuple[int, int, str], tuple[list[int], float]] = {}
    for copy in range(max_copies):
        sim = simulate_judgments(
            n_originals=max(1, len(originals)),
            systems=_latent_profiles(genuine_systems, profiles) if genuine_systems else {"_none": {}},
            n_judges=n_judges,
            criteria=CRITERIA,
            controls=tuple(control_kinds),
            control_expected=expected,
            item_sd=item_sd,
            judge_bias_sd=judge_bias_sd,
            noise_sd=noise_sd,
            n_random_clickers=n_random_clickers,
            control_slip=control_slip,
            seed=seed + copy,
        )
        wide = sim.pivot_table(
            index=["judge", "original", "system"], columns="criterion", values="score", aggfunc="first"
        ).reset_index()
        secs = sim.drop_duplicates(["judge", "item"]).set_index(["judge", "original", "system"])["seconds"]
        wide["seconds"] = secs.reindex(pd.MultiIndex.from_frame(wide[["judge", "original", "system"]])).to_numpy()
        for row in wide.itertuples(index=False):
            judge, orig, system = row.judge, row.original, row.system
            j, o = int(judge[1:]) - 1, int(orig[1:])
            if system.startswith("control:"):
                names = copies.get(system.split(":", 1)[1], [])
                if copy >= len(names):
                    continue
                real = names[copy]
            elif copy == 0:
                real = system
            else:
                continue
            sim_scores[(j, o, real)] = ([int(getattr(row, c)) for c in CRITERIA], float(row.seconds))

    # Who rates what: each simulated judge's assignment, minus items already rated,
    # thinned to k judges per item when asked.
    orig_index = {ext: i for i, ext in enumerate(originals)}
    cand_info = {pk: (orig_index.get(ext), system) for pk, ext, system, _ in cands}
    judge_index = {u.pk: i for i, u in enumerate(judges)}
    items = list(
        AssignmentItem.objects.filter(assignment__study=study, assignment__judge__in=judges).values_list(
            "pk", "assignment__judge_id", "candidate_id", "token", "position", "done_at"
        )
    )
    already = sum(1 for *_, done in items if done is not None)
    by_candidate: dict[int, list[tuple]] = {}
    for row in items:
        by_candidate.setdefault(row[2], []).append(row)
    chosen: list[tuple] = []
    for cand_pk in sorted(by_candidate):
        rows = sorted(by_candidate[cand_pk], key=lambda r: judge_index[r[1]])
        if judges_per_item is not None and len(rows) > judges_per_item:
            keep = rng.choice(len(rows), size=judges_per_item, replace=False)
            rows = [rows[i] for i in sorted(keep)]
        chosen.extend(r for r in rows if r[5] is None)

    now = timezone.now()
    per_judge: dict[int, list[tuple]] = {}
    for row in chosen:
        per_judge.setdefault(row[1], []).append(row)
    created = 0
    for judge_pk, rows in per_judge.items():
        # One judge at a time: 10 judges × 25,000 items would otherwise hold 250,000
        # model instances in memory at once.
        rows.sort(key=lambda r: r[4])  # in the judge's order, one after the other
        timed = []
        for item_pk, _, cand_pk, token, _, _ in rows:
            orig_i, system = cand_info[cand_pk]
            if orig_i is None or (key := (judge_index[judge_pk], orig_i, system)) not in sim_scores:
                continue
            timed.append((item_pk, token, *sim_scores[key]))
        clock = now - timedelta(seconds=sum(t[3] for t in timed))
        judgments = []
        for item_pk, token, values, seconds in timed:
            served = clock
            clock = clock + timedelta(seconds=seconds)
            judgment = Judgment(
                study=study,
                item_id=item_pk,
                judge_id=judge_pk,
                key=f"sim-{token}",
                revision=1,
                is_latest=True,
                served_at=served,
                submitted_at=clock,
                seconds=seconds,
                source=JudgmentSource.API,
                values=dict(zip(CRITERIA, values)),
            )
            # Field checks (scores 1–5, key length) without one query per foreign key.
            judgment.full_clean(exclude=["study", "item", "judge"], validate_unique=False, validate_constraints=False)
            judgments.append(judgment)
        try:
            with transaction.atomic():
                Judgment.objects.bulk_create(judgments, batch_size=2000)
        except IntegrityError:
            raise ValidationError("Some of these items were rated while the simulator ran; run it again.") from None
        created += len(judgments)
    # Each rated item is done since its judgment's submission: one UPDATE with a
    # subquery, not one CASE branch per item (bulk_update takes seconds at 10,000 items).
    AssignmentItem.objects.filter(
        assignment__study=study,
        assignment__judge__in=judges,
        done_at__isnull=True,
        judgments__is_latest=True,
    ).update(
        done_at=Subquery(Judgment.objects.filter(item=OuterRef("pk"), is_latest=True).values("submitted_at")[:1]),
        updated_at=now,
    )
    n_items = len({row[2] for row in items})
    return SimulationSummary(
        judges=tuple(u.username for u in judges),
        random_clickers=clickers,
        judgments_created=created,
        items_already_rated=already,
        items=n_items,
        judges_per_item=judges_per_item,
    )
