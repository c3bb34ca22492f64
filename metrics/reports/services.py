# Over 400 lines: this session's feature work (protocols, screening, field studies, speed) landed here; splitting it along its seams is issue 17's remaining step, done once so code moves only once.
"""Writes for reports: create a report, build it (the worker's side), fill a study with
simulated judges.

Views, APIs, the task and the management commands call these. Statistics come from
``metrics.core.stats.build_report``; this module only gathers the study's data, calls
it, draws the figures and stores the result.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from importlib import metadata
from typing import Any, SupportsFloat, SupportsIndex

import numpy as np
import pandas as pd
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, InterfaceError, OperationalError, transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from annotation.enums import JobStatus, Role, StudyStatus
from annotation.judging import services as judging_services
from annotation.judging.defaults import default_criteria
from annotation.judging.enums import CONTROL_KIND_OF_SYSTEM_KIND, CRITERIA, JudgmentSource
from annotation.judging.selectors import study_criteria
from annotation.judging.models import AssignmentItem, JudgingDesign, Judgment
from annotation.models import Candidate, Original, Study
from annotation.services import job_enqueue, study_member_add
from metrics.core.stats import DEFAULT_SYSTEMS, build_report, human_reference, simulate_judgments
from metrics.core.stats.data import validate_judgments, validate_metric_scores

from . import selectors
from .models import Report, ReportPlot

logger = logging.getLogger(__name__)

# --- settings -------------------------------------------------------------------------

DEFAULT_SETTINGS: dict[str, Any] = {
    "criterion": "overall",
    "normalize": None,
    "include_controls_in_mean": True,
    "confidence_level": 0.95,
    "significance_level": 0.05,
    "seed": 0,
    "n_boot": None,
    "subset_min": {"adequacy": 4, "fluency": 4},
    "include_metrics": True,
    "min_shared": 30,
}
MIN_SHARED_MIN, MIN_SHARED_MAX = 4, 100_000
N_BOOT_MIN, N_BOOT_MAX = 50, 20_000
PHASES = ("reading judgments", "reading metric scores", "agreement and correlations", "plots", "saving")


def _as_bool(value: object, name: str, errors: dict) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in {"true", "1", "yes", "on", "false", "0", "no", "off"}:
        return value.lower() in {"true", "1", "yes", "on"}
    errors.setdefault(name, []).append("must be true or false")
    return False


def _as_number(value: object, name: str, errors: dict, *, low: float, high: float, integer: bool = False,
               low_open: bool = False, high_open: bool = False):
    try:
        if isinstance(value, bool) or not isinstance(value, (str, bytes, SupportsFloat, SupportsIndex)):
            raise TypeError
        number = float(value)
        if integer and (not math.isfinite(number) or number != int(number)):
            raise ValueError
    except (TypeError, ValueError):
        errors.setdefault(name, []).append("must be a whole number" if integer else "must be a number")
        return None
    if not math.isfinite(number) or number < low or number > high or (low_open and number == low) or (
            high_open and number == high):
        lo = "(" if low_open else "["
        hi = ")" if high_open else "]"
        errors.setdefault(name, []).append(f"must be in {lo}{low:g}, {high:g}{hi}")
        return None
    return int(number) if integer else number


def _criterion_bounds(c: Mapping) -> tuple[float, float]:
    scale = c["scale"]
    if scale["type"] == "categorical":
        return 0, len(scale["categories"]) - 1
    return scale.get("min", 0), scale.get("max", 100)


def _shared_points_scale(criteria: list[dict]) -> range | None:
    """The values of the one labelled-point scale every criterion shares (PEM's 1–5),
    for weighted κ and the score-distribution axes; None when the criteria's scales
    differ or are not points (then the values observed are used)."""
    spans = {(c["scale"].get("min"), c["scale"].get("max")) if c["scale"]["type"] == "points" else None
             for c in criteria}
    if len(spans) != 1 or None in spans:
        return None
    span = spans.pop()
    if span is None:
        return None
    lo, hi = span
    if lo is None or hi is None:
        return None
    return range(int(lo), int(hi) + 1)


def report_settings_clean(raw: Mapping[str, Any] | None, *, criteria: list[dict] | None = None) -> dict[str, Any]:
    """Fill in defaults and check a report's settings; ``ValidationError`` per field otherwise.

    Keys (all optional): ``criterion`` (target criterion, default ``overall``),
    ``normalize`` (None or ``"z"``: per-judge z-scores), ``include_controls_in_mean``
    (controls at their expected scores in the human reference), ``confidence_level``
    (0.5–0.999), ``significance_level`` (0–0.5], ``seed``, ``n_boot`` (None = automatic:
    1000 resamples, 500 above 50,000 items; else 50–20,000), ``subset_min`` (PEM Table
    2's subset, e.g. ``{"adequacy": 4, "fluency": 4}``; empty for none),
    ``include_metrics`` (correlate the study's metric runs), ``min_shared`` (items two
    judges must share for their pair to enter the inter-judge summary, and items every
    judge must have rated for an ICC; default 30, at least 4).
    ``include_metrics`` (correlate the study's metric runs).

    ``criteria`` are the study's criteria with their scales (PEM's four on 1–5 when not
    given): the target must be one of them (default ``overall``, else the study's first
    criterion), and the default subset keeps only the criteria the study has.
    """
    raw = dict(raw or {})
    criteria = criteria if criteria is not None else default_criteria()
    slugs = [c["slug"] for c in criteria]
    bounds = {c["slug"]: _criterion_bounds(c) for c in criteria}
    errors: dict[str, list[str]] = {}
    unknown = sorted(set(raw) - set(DEFAULT_SETTINGS))
    if unknown:
        errors["__all__"] = [f"unknown report setting(s): {', '.join(unknown)}"]
    defaults = dict(DEFAULT_SETTINGS)
    if defaults["criterion"] not in slugs:
        defaults["criterion"] = slugs[0]
    if "subset_min" not in raw:
        kept = {c: v for c, v in (defaults["subset_min"] or {}).items() if c in slugs}
        defaults["subset_min"] = kept if len(kept) == len(defaults["subset_min"] or {}) else None
    s = {**defaults, **{k: v for k, v in raw.items() if k in DEFAULT_SETTINGS}}
    out: dict[str, Any] = {}
    out["criterion"] = s["criterion"]
    if s["criterion"] not in slugs:
        errors.setdefault("criterion", []).append(f"must be one of {', '.join(slugs)}")
    normalize = s["normalize"]
    if normalize in (None, "", "none", "raw"):
        out["normalize"] = None
    elif normalize == "z":
        out["normalize"] = "z"
    else:
        errors.setdefault("normalize", []).append("must be empty (raw scores) or 'z' (per-judge z-scores)")
    out["include_controls_in_mean"] = _as_bool(s["include_controls_in_mean"], "include_controls_in_mean", errors)
    out["include_metrics"] = _as_bool(s["include_metrics"], "include_metrics", errors)
    out["confidence_level"] = _as_number(s["confidence_level"], "confidence_level", errors, low=0.5, high=0.999)
    out["significance_level"] = _as_number(s["significance_level"], "significance_level", errors, low=0.0,
                                           high=0.5, low_open=True)
    out["seed"] = _as_number(s["seed"], "seed", errors, low=0, high=2**32 - 1, integer=True)
    if s["n_boot"] in (None, ""):
        out["n_boot"] = None
    else:
        out["n_boot"] = _as_number(s["n_boot"], "n_boot", errors, low=N_BOOT_MIN, high=N_BOOT_MAX, integer=True)
    out["min_shared"] = _as_number(s["min_shared"], "min_shared", errors, low=MIN_SHARED_MIN, high=MIN_SHARED_MAX,
                                   integer=True)
    subset = s["subset_min"]
    if subset in (None, "", {}):
        out["subset_min"] = None
    elif not isinstance(subset, Mapping):
        errors.setdefault("subset_min", []).append("must map criteria to minimum mean scores, e.g. {\"adequacy\": 4}")
    else:
        clean = {}
        for crit, value in subset.items():
            if crit not in slugs:
                errors.setdefault("subset_min", []).append(f"unknown criterion {crit!r}")
                continue
            if value in (None, ""):
                continue
            low, high = bounds[crit]
            number = _as_number(value, "subset_min", errors, low=low, high=high)
            if number is not None:
                clean[str(crit)] = int(number) if float(number).is_integer() else number
        out["subset_min"] = clean or None
    if errors:
        raise ValidationError(errors)
    return out


# --- create and build ---------------------------------------------------------------

def _enqueue_build(report_id: int) -> None:
    from .tasks import report_build_task

    job_enqueue(report_build_task, report_id)


@transaction.atomic
def report_create(*, study: Study, created_by: User | None = None, settings: Mapping[str, Any] | None = None,
                  enqueue: bool = True) -> Report:
    """Queue a report of ``study`` with ``settings`` (see :func:`report_settings_clean`).

    Refused (``ValidationError``) when the study has no judgments yet. A report with
    the same settings still queued or running is returned instead of a second one.
    With ``enqueue`` the build task is sent after the transaction commits; without
    it the caller runs :func:`report_build` (the ``report`` command does).
    """
    clean = report_settings_clean(settings, criteria=study_criteria(study=study))
    if not selectors.study_has_judgments(study=study):
        raise ValidationError("This study has no judgments yet: open judging and let the judges rate (or fill "
                              "the study with simulated judges) before building a report.")
    for active in Report.objects.filter(study=study, status__in=[JobStatus.QUEUED, JobStatus.RUNNING]):
        if active.settings == clean:
            return active
    report = Report(study=study, created_by=created_by, settings=clean, progress_total=len(PHASES))
    report.full_clean()
    report.save()
    if enqueue:
        transaction.on_commit(lambda: _enqueue_build(report.pk))
    return report


def _update(report_id: int, **fields) -> int:
    return Report.objects.filter(pk=report_id).update(**fields, updated_at=timezone.now())


def _phase(report_id: int, index: int) -> None:
    _update(report_id, phase=PHASES[index], progress_done=index)


def report_fail(*, report_id: int, error: str) -> None:
    """Mark a report failed with a message the researcher can act on."""
    _update(report_id, status=JobStatus.FAILED, phase="failed", error=error[:5000], finished_at=timezone.now())


def _versions() -> dict[str, str]:
    out = {}
    for pkg in ("django", "matplotlib", "celery"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "unknown"
    return out


def _subset_in_criteria_order(subset: Mapping[str, float] | None,
                              criteria: Sequence[str] = CRITERIA) -> dict[str, float] | None:
    # PostgreSQL's jsonb does not keep key order; the subset's label ("adequacy>=4,fluency>=4")
    # follows the order given, so restore the criteria's own order.
    if not subset:
        return None
    return {c: subset[c] for c in criteria if c in subset}


def report_build(*, report_id: int) -> Report:
    """Build a queued report (the worker's side; the ``report`` command calls it directly).

    Reads the judgments (every judge; the excluded ones are left out of the tables
    but kept in judge QC) and the metric runs, calls ``build_report`` with the
    report's settings and the design's expected control scores and QC level, draws
    the figures and stores everything at once. A finished report is left alone, so
    a task delivered twice leaves the same rows. Data problems (e.g. every judge
    excluded) fail the report with their message; transient database errors
    propagate so the task can retry.
    """
    report = Report.objects.select_related("study").get(pk=report_id)
    if report.is_finished:
        return report
    started = time.monotonic()
    cpu = time.process_time()
    _update(report_id, status=JobStatus.RUNNING, started_at=timezone.now(), error="", progress_done=0,
            progress_total=len(PHASES), phase=PHASES[0])
    s = {**DEFAULT_SETTINGS, **(report.settings or {})}
    if JudgingDesign.objects.filter(study=report.study, protocol="comparison").exists():
        from .comparison import comparison_report_build  # side-by-side studies: their own tables

        return comparison_report_build(report_id=report_id, settings=s)
    try:
        judged = selectors.report_judgment_inputs(study=report.study)
        if judged.frame.empty:
            raise ValueError("the study has no judgments")
        # Validate once: build_report and the figures take the validated copy as it is
        # (it carries validate_judgments' marker), and the database frame is let go
        # instead of living on beside one validated copy per consumer.
        judged = replace(judged, frame=validate_judgments(judged.frame))
        _phase(report_id, 1)
        metric_inputs = selectors.MetricInputs()
        if s.get("include_metrics", True):
            metric_inputs = selectors.report_metric_inputs(study=report.study, judged_items=set(judged.frame["item"]))
        _phase(report_id, 2)
        criteria_used = [c for c in study_criteria(study=report.study) if c["slug"] in judged.criteria]
        result = build_report(
            judged.frame,
            metric_inputs.scores or None,
            excluded_judges=judged.excluded,
            control_expected=judged.control_expected,
            criterion=s["criterion"],
            criteria=judged.criteria,
            normalize=s["normalize"],
            include_controls_in_mean=s["include_controls_in_mean"],
            subset_min=_subset_in_criteria_order(s["subset_min"], judged.criteria),
            n_boot=s["n_boot"],
            confidence_level=s["confidence_level"],
            significance_level=s["significance_level"],
            seed=s["seed"],
            qc_alpha=judged.qc_alpha,
            min_shared=s.get("min_shared") or DEFAULT_SETTINGS["min_shared"],
            metric_runs=metric_inputs.runs,
            scale=_shared_points_scale(criteria_used),
            scales={c["slug"]: c["scale"]["type"] for c in criteria_used},
        )
        _phase(report_id, 3)
        from .plots import report_plots  # matplotlib: only where figures are drawn

        frame = judged.frame  # validated above
        ref = human_reference(frame, control_expected=judged.control_expected, normalize=s["normalize"],
                              excluded_judges=judged.excluded)
        wide = None
        if metric_inputs.scores:
            long = validate_metric_scores(metric_inputs.scores)
            wide = long.loc[long["item"].isin(ref.index)].pivot(index="item", columns="metric", values="score")
        plots = report_plots(frame=frame, ref=ref, metric_wide=wide, result=result, excluded=judged.excluded,
                             target=s["criterion"], include_controls=False,  # as Table 3's headline
                             normalized=s["normalize"] == "z", seed=s["seed"],
                             scale=_shared_points_scale([c for c in criteria_used if c["slug"] == s["criterion"]]))
        _phase(report_id, 4)
    except (OperationalError, InterfaceError):
        raise
    except ValueError as exc:
        report_fail(report_id=report_id, error=f"The report could not be built: {exc}.")
        return Report.objects.get(pk=report_id)
    except Exception as exc:  # anything else is a bug, but the researcher must see the run end
        logger.exception("report %s failed", report_id)
        report_fail(report_id=report_id, error=f"Unexpected error while building the report: {exc!r}")
        return Report.objects.get(pk=report_id)
    build_info = {
        "versions": {**result.get("versions", {}), **_versions()},
        "wall_seconds": round(time.monotonic() - started, 3),
        "n_judgment_rows": int(len(judged.frame)),
    }
    with transaction.atomic():
        locked = Report.objects.select_for_update().get(pk=report_id)
        if locked.status == JobStatus.SUCCEEDED:
            return locked  # another delivery of the task finished first
        ReportPlot.objects.filter(report_id=report_id).delete()
        ReportPlot.objects.bulk_create([
            ReportPlot(report_id=report_id, slug=p.slug, title=p.title, caption=p.caption, position=i, svg=p.svg)
            for i, p in enumerate(plots)])
        _update(report_id, status=JobStatus.SUCCEEDED, phase="done", progress_done=len(PHASES), result=result,
                fingerprint=judged.fingerprint, excluded_judges=judged.excluded, metric_runs=metric_inputs.runs,
                build_info=build_info, compute_seconds=round(time.process_time() - cpu, 3),
                finished_at=timezone.now())
    return Report.objects.get(pk=report_id)


def report_rebuild(*, report: Report, created_by: User | None = None, enqueue: bool = True) -> Report:
    """A new report of the same study with the same settings (the "refresh" of a stale one)."""
    return report_create(study=report.study, created_by=created_by, settings=report.settings, enqueue=enqueue)


def reports_requeue_stale(*, stale_after=None, queued_after=None) -> int:
    """Send the build task again for every queued report (after a broker outage) and, with
    ``stale_after``, for every running one whose heartbeat stopped that long ago (its
    worker died). Each is a resent message: it runs only if it can claim the report
    (``config.recovery``). Returns how many were sent."""
    from config.recovery import job_resend, jobs_to_resend

    from .tasks import report_build_task

    return sum(job_resend(report_build_task, report_id, stale_after=stale_after)
               for report_id in jobs_to_resend(Report, stale_after=stale_after, queued_after=queued_after))


# --- the judge simulator ------------------------------------------------------------

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


def _latent_profiles(systems: list[str], given: dict[str, dict[str, float]] | None = None) -> dict[str, dict[str, float]]:
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
        action = ("reopen it on its Judging progress page" if study.status == StudyStatus.CLOSED
                  else "open judging on its Judging design page")
        raise ValidationError(f"Study '{study.name}' is not open for judging (it is {state}); {action} first, "
                              "then run the simulator.")
    if [c["slug"] for c in design.criteria] != list(CRITERIA) or any(
            c["scale"].get("type") != "points" or (c["scale"]["min"], c["scale"]["max"]) != (1, 5)
            for c in design.criteria):
        raise ValidationError("The simulator simulates PEM's four criteria on 1–5 points; this study's design "
                              "has other criteria or scales.")
    rng = np.random.default_rng(seed)

    judges = [_simulated_judge(i + 1) for i in range(n_judges)]
    for user in judges:
        study_member_add(study=study, user=user, role=Role.JUDGE)
        if judging_services.assignment_ensure_for_judge(study=study, judge=user) is None:
            raise ValidationError(f"no assignment could be built for {user.username}")
    clickers = tuple(u.username for u in judges[n_judges - n_random_clickers:]) if n_random_clickers else ()

    # The study's items: originals (import order) × systems, controls by kind and copy.
    originals = list(Original.objects.filter(study=study).order_by("position", "external_id")
                     .values_list("external_id", flat=True))
    cands = list(Candidate.objects.filter(original__study=study)
                 .values_list("pk", "original__external_id", "system__name", "system__kind"))
    genuine_systems = sorted({name for _, _, name, kind in cands if kind not in CONTROL_KIND_OF_SYSTEM_KIND})
    control_kinds = sorted({CONTROL_KIND_OF_SYSTEM_KIND[kind] for *_, kind in cands
                            if kind in CONTROL_KIND_OF_SYSTEM_KIND})
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
            n_judges=n_judges, criteria=CRITERIA, controls=tuple(control_kinds), control_expected=expected,
            item_sd=item_sd, judge_bias_sd=judge_bias_sd, noise_sd=noise_sd, n_random_clickers=n_random_clickers,
            control_slip=control_slip, seed=seed + copy)
        wide = sim.pivot_table(index=["judge", "original", "system"], columns="criterion", values="score",
                               aggfunc="first").reset_index()
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
    items = list(AssignmentItem.objects.filter(assignment__study=study, assignment__judge__in=judges)
                 .values_list("pk", "assignment__judge_id", "candidate_id", "token", "position", "done_at"))
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
            judgment = Judgment(study=study, item_id=item_pk, judge_id=judge_pk, key=f"sim-{token}", revision=1,
                                is_latest=True, served_at=served, submitted_at=clock, seconds=seconds,
                                source=JudgmentSource.API, values=dict(zip(CRITERIA, values)))
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
        assignment__study=study, assignment__judge__in=judges, done_at__isnull=True, judgments__is_latest=True,
    ).update(done_at=Subquery(Judgment.objects.filter(item=OuterRef("pk"), is_latest=True)
                              .values("submitted_at")[:1]), updated_at=now)
    n_items = len({row[2] for row in items})
    return SimulationSummary(
        judges=tuple(u.username for u in judges), random_clickers=clickers, judgments_created=created,
        items_already_rated=already, items=n_items, judges_per_item=judges_per_item)
