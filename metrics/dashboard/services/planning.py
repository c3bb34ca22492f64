"""The planner's Django side: assumptions from the study's pilot (its first judgments, imported
ones included) or from the researcher, one plan computed by :mod:`metrics.core.planning`, kept
on the study's dashboard (the design page and the dashboard show it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.utils import timezone

from annotation.enums import SystemKind
from annotation.judging.enums import JudgesMode
from annotation.judging.selectors.design import design_for_study
from annotation.judging.selectors.frame import judgments_frame
from annotation.models import Study
from metrics.core.planning import PlanAssumptions, assumptions_from_pilot, plan_study
from metrics.core.stats.results import jsonable

from ..models import Dashboard
from .snapshot import dashboard_get_or_create

#: The planner's inputs and their bounds (what the form, the API and the CLI accept).
LIMITS = {"n_originals": (2, 20_000), "n_judges": (1, 500), "judges_per_item": (1, 500), "n_simulations": (10, 2_000)}
MAX_CELLS = 5_000_000  # originals × systems × judges × simulations: what one plan may cost the worker


def pilot_assumptions(*, study: Study) -> PlanAssumptions:
    """Assumptions estimated from the study's judgments; ``ValidationError`` when there are too few."""
    frame = judgments_frame(study=study)
    try:
        return assumptions_from_pilot(frame)
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
    if not errors:
        n_sys = max(2, len(out["system_means"] or {}) or (study.systems.count() if study is not None else 2))
        cells = out["n_originals"] * n_sys * (out["judges_per_item"] or out["n_judges"]) * out["n_simulations"]
        if cells > MAX_CELLS:
            errors["n_simulations"] = [f"too large a plan ({cells:,} simulated judgments; at most {MAX_CELLS:,})"]
    if errors:
        raise ValidationError(errors)
    return out


def study_plan(*, study: Study | None, params: Mapping[str, Any]) -> dict:
    """Compute one plan (pure computing, the worker's or the CLI's side); returns it as JSON."""
    p = dict(params)
    if p["source"] == "pilot" and study is not None:
        a = pilot_assumptions(study=study)
    else:
        a = stated_assumptions(
            study=study,
            system_means=p["system_means"],
            item_sd=p["item_sd"],
            judge_bias_sd=p["judge_bias_sd"],
            noise_sd=p["noise_sd"],
        )
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


def study_plan_run(*, study: Study, params: Mapping[str, Any]) -> Dashboard:
    """Compute the plan and store it on the dashboard (the worker's side of :func:`~.queueing.study_plan_request`)."""
    try:
        plan = {"status": "done", **study_plan(study=study, params=params)}
    except ValidationError as exc:
        plan = {"status": "failed", "error": "; ".join(exc.messages), "params": dict(params)}
    dashboard = dashboard_get_or_create(study=study)
    Dashboard.objects.filter(pk=dashboard.pk).update(plan=plan, plan_at=timezone.now(), updated_at=timezone.now())
    dashboard.refresh_from_db()
    return dashboard
