"""The planner's Django side: assumptions from the study's pilot (its first judgments, imported
ones included) or from the researcher, one plan computed by :mod:`metrics.core.planning`, kept
on the study's dashboard (the design page and the dashboard show it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.enums import SystemKind
from annotation.judging.enums import JudgesMode
from annotation.judging.protocols.base import PilotUnsupported
from annotation.judging.protocols.registry import protocol_for_study
from annotation.judging.selectors.design import design_for_study
from annotation.models import Study
from metrics.core.planning import PlanAssumptions, assumptions_from_pilot, plan_cost, plan_study
from metrics.core.stats.results import jsonable

from ..models import Dashboard
from .snapshot import dashboard_get_or_create

#: The planner's inputs and their bounds (what the form, the API and the CLI accept).
LIMITS = {"n_originals": (2, 20_000), "n_judges": (1, 500), "judges_per_item": (1, 500), "n_simulations": (10, 2_000)}
#: Simulated judgments one plan may compute, every table counted (the ranking's simulations and
#: the separation table's): about 15 s of a worker. Counted before any work (:func:`plan_cost_check`).
MAX_CELLS = 5_000_000
#: Items × judges of the largest simulated study of a plan (its draw and its judge × item matrix:
#: 8 bytes each, a few copies): what one plan may hold in the worker's memory at once.
MAX_STUDY_CELLS = 5_000_000


def pilot_assumptions(*, study: Study, criterion: str | None = None) -> PlanAssumptions:
    """Assumptions estimated from the study's judgments on the protocol's primary score (absolute:
    ``overall``, else the design's first criterion; ESA: the 0–100 score; ranking: its 0–100
    scores when the design asks for them) or on ``criterion``. ``ValidationError``: on
    ``criterion`` for one the study does not have, on ``source`` when the protocol's judgments
    are not scores (it says what to do instead) or when there are too few."""
    unit = protocol_for_study(study=study)
    try:
        pilot = unit.planner_pilot(study=study, criterion=criterion)
    except PilotUnsupported as exc:
        raise ValidationError(
            {"source": [f"The planner cannot use this study's judgments as a pilot: {exc}."]}
        ) from exc
    except ValueError as exc:
        raise ValidationError({"criterion": [str(exc)]}) from exc
    try:
        return assumptions_from_pilot(pilot.frame, criterion=pilot.criterion, discrete=pilot.discrete)
    except (ValueError, KeyError) as exc:
        raise ValidationError({"source": [f"The study has no usable pilot yet: {exc}."]}) from exc


def stated_assumptions(
    *,
    study: Study | None,
    system_means: Mapping[str, float] | None,
    item_sd: float,
    judge_bias_sd: float,
    noise_sd: float,
) -> PlanAssumptions:
    """The researcher's assumptions; without system means, the study's genuine systems spread
    evenly over one point (a moderate difference) so that the plan still has something to rank."""
    means = dict(system_means or {})
    if not means and study is not None:
        names = list(
            study.systems.exclude(kind__in=SystemKind.control_kinds()).order_by("name").values_list("name", flat=True)
        )
        if len(names) >= 2:
            means = {n: round(3.5 - i / (len(names) - 1), 3) for i, n in enumerate(names)}
    try:
        return PlanAssumptions(system_means=means, item_sd=item_sd, judge_bias_sd=judge_bias_sd, noise_sd=noise_sd)
    except ValueError as exc:
        raise ValidationError({"system_means": [str(exc)]}) from exc


def plan_params_clean(raw: Mapping[str, Any], *, study: Study | None = None) -> dict:
    """Check a plan request; returns clean parameters or raises ``ValidationError`` per field."""
    errors: dict[str, list[str]] = {}
    out: dict[str, Any] = {}
    design = design_for_study(study=study) if study is not None else None
    n_orig_default = study.originals.count() if study is not None else 50
    defaults = {
        "n_originals": n_orig_default or 50,
        "n_judges": 3,
        "judges_per_item": None,
        "n_simulations": 200,
        "level": 0.05,
        "delta": 0.3,
        "power": 0.8,
        "seed": 0,
        "source": "pilot",
        "item_sd": 0.7,
        "judge_bias_sd": 0.25,
        "noise_sd": 0.6,
        "system_means": None,
        "criterion": None,
    }
    if design is not None and design.judges_mode == JudgesMode.K_PER_ITEM and design.judges_per_item:
        defaults["judges_per_item"] = design.judges_per_item  # fully crossed designs: every judge (None)
    for key, default in defaults.items():
        value = raw.get(key, default)
        if value in ("", None):
            value = default
        try:
            if key in LIMITS and value is not None:
                value = int(value)
                lo, hi = LIMITS[key]
                if not lo <= value <= hi:
                    errors[key] = [f"between {lo} and {hi}"]
            elif key in ("level", "power"):
                value = float(value)
                if not 0 < value < 1:
                    errors[key] = ["strictly between 0 and 1"]
            elif key in ("delta", "item_sd", "judge_bias_sd", "noise_sd"):
                value = float(value)
                if not 0 <= value <= 100 or (key == "delta" and value == 0):
                    errors[key] = ["a number between 0 and 100" + (" (not 0)" if key == "delta" else "")]
            elif key == "seed":
                value = int(value)
            elif key == "criterion" and value is not None:
                value = str(value).strip() or None
            elif key == "source" and value not in ("pilot", "stated"):
                errors[key] = ["pilot or stated"]
            elif key == "system_means" and value is not None:
                if isinstance(value, str):
                    pairs = [p.split("=", 1) for p in value.replace("\n", ",").split(",") if p.strip()]
                    value = {a.strip(): float(b) for a, b in pairs}
                value = {str(k): float(v) for k, v in dict(value).items()}
        except (TypeError, ValueError):
            errors[key] = ["not a valid value" if key != "system_means" else "name=mean pairs, e.g. a=3.4, b=3.1"]
        out[key] = value
    if not errors and out["judges_per_item"] is not None and out["judges_per_item"] > out["n_judges"]:
        errors["judges_per_item"] = ["at most the number of judges"]
    if errors:
        raise ValidationError(errors)
    if out["source"] == "stated":  # the assumptions are known now (a pilot's: by plan_cost_check's caller)
        try:
            stated = _stated(study=study, params=out)
        except ValidationError:
            stated = None  # too few systems: said where the plan is computed (the CLI asks for them first)
        if stated is not None:
            plan_cost_check(params=out, assumptions=stated)
    return out


def _stated(*, study: Study | None, params: Mapping[str, Any]) -> PlanAssumptions:
    return stated_assumptions(
        study=study,
        system_means=params["system_means"],
        item_sd=params["item_sd"],
        judge_bias_sd=params["judge_bias_sd"],
        noise_sd=params["noise_sd"],
    )


def plan_cost_check(*, params: Mapping[str, Any], assumptions: PlanAssumptions) -> None:
    """Refuse a plan whose tables would cost more than :data:`MAX_CELLS` simulated judgments, or
    hold a simulated study larger than :data:`MAX_STUDY_CELLS`: ``ValidationError`` on the field
    to change, saying by how much. Every table is counted (:func:`metrics.core.planning.plan_cost`):
    the separation table grows as 1/δ² and the assumed spreads², so a small ``delta`` costs most."""
    cost = plan_cost(
        assumptions,
        n_originals=params["n_originals"],
        n_judges=params["n_judges"],
        judges_per_item=params["judges_per_item"],
        n_simulations=params["n_simulations"],
        delta=params["delta"],
        level=params["level"],
        power=params["power"],
    )
    errors: dict[str, list[str]] = {}
    if cost.largest_study > MAX_STUDY_CELLS:
        errors["n_judges"] = [
            f"too large a plan: one simulated study would draw {cost.largest_study:,} item × judge cells "
            f"(at most {MAX_STUDY_CELLS:,}); lower n_judges or n_originals"
            + (", or raise delta" if cost.separation else "")
        ]
    elif cost.total > MAX_CELLS and cost.separation > cost.ranking:
        errors["delta"] = [
            f"too large a plan: separating two systems {params['delta']:g} points apart needs "
            f"{cost.separation:,} simulated judgments (the whole plan {cost.total:,}; at most {MAX_CELLS:,}); "
            "raise delta (the originals needed grow as 1/delta²), or lower n_simulations"
        ]
    elif cost.total > MAX_CELLS:
        errors["n_simulations"] = [
            f"too large a plan: {cost.total:,} simulated judgments (at most {MAX_CELLS:,}); "
            "lower n_simulations, n_originals or n_judges"
        ]
    if errors:
        raise ValidationError(errors)


def study_plan(*, study: Study | None, params: Mapping[str, Any]) -> dict:
    """Compute one plan (pure computing, the worker's or the CLI's side); returns it as JSON."""
    p = dict(params)
    if p["source"] == "pilot" and study is not None:
        a = pilot_assumptions(study=study, criterion=p.get("criterion"))
    else:
        a = _stated(study=study, params=p)
    plan_cost_check(params=p, assumptions=a)  # the pilot may have grown since the request
    result = plan_study(
        a,
        n_originals=p["n_originals"],
        n_judges=p["n_judges"],
        judges_per_item=p["judges_per_item"],
        level=p["level"],
        n_simulations=p["n_simulations"],
        delta=p["delta"],
        power=p["power"],
        seed=p["seed"],
    )
    return jsonable({**result.to_dict(), "params": p})


def study_plan_claim(*, study: Study, request: str) -> bool:
    """Take the plan ``request`` for the message about to compute it; True if it may.

    Only while that request is still the study's plan, computing and not started: a request
    superseded by another (or finished) is left alone, and of two messages of one request (a
    resent one, a second delivery) only the first computes. Marks it ``started``, which the
    requeue pass reads (:func:`~.queueing.plans_requeue_stale`).
    """
    now = timezone.now()
    with transaction.atomic():
        row = Dashboard.objects.select_for_update().filter(study=study).values_list("pk", "plan").first()
        if row is None:
            return False
        pk, plan = row
        plan = plan or {}
        if plan.get("request") != request or plan.get("status") != "computing" or plan.get("started"):
            return False
        Dashboard.objects.filter(pk=pk).update(plan={**plan, "started": now.isoformat()}, plan_at=now, updated_at=now)
    return True


def study_plan_run(*, study: Study, params: Mapping[str, Any], request: str | None = None) -> Dashboard:
    """Compute the plan and store it on the dashboard (the worker's side of
    :func:`~.queueing.study_plan_request`); with ``request``, only while it is still the study's plan
    (a newer request replaced it: its answer is not overwritten with an older one)."""
    try:
        plan = {"status": "done", **study_plan(study=study, params=params)}
    except ValidationError as exc:
        plan = {"status": "failed", "error": "; ".join(exc.messages), "params": dict(params)}
    dashboard = dashboard_get_or_create(study=study)
    rows = Dashboard.objects.filter(pk=dashboard.pk)
    if request is not None:
        plan["request"] = request
        rows = rows.filter(plan__request=request)
    rows.update(plan=plan, plan_at=timezone.now(), updated_at=timezone.now())
    dashboard.refresh_from_db()
    return dashboard
