"""Quality control per judge and the judgments' fingerprint (what reports compare to
know they are stale)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from django.db.models import Count, Max

from annotation.models import Study
from metrics.core.stats.qc import judge_qc as _judge_qc
from metrics.core.stats.results import JudgeQC
from metrics.core.stats.zscores import JudgeScale, judge_scales
from metrics.reports.computed import ReportComputed

from .. import scales
from ..models import Assignment, JudgeExclusion
from ..protocols.absolute.frame import judgments_frame
from ..protocols.registry import protocol_for_study, protocols_all
from .design import design_for_study, study_control_expected, study_criteria, study_qc_tests
from .exclusions import judges_excluded, judges_screened_out_names

#: Straight-lining: one value for at least this share of a criterion's scores, among
#: judges with at least this many scores (the QC page and :func:`judge_qc` agree).
STRAIGHTLINE_THRESHOLD = 0.9
STRAIGHTLINE_MIN_SCORES = 10


def report_of_result(
    result_of: Callable[..., dict[str, Any]],
    *,
    study: Study,
    settings: Mapping[str, Any],
    rows: Callable[[Mapping], int],
) -> ReportComputed:
    """A report that is one result dict (side by side, ESA, ranking: no figures, no metric
    runs): the judgments' fingerprint, read *before* ``result_of(study=, settings=)`` reads the
    judgments so that late ones show as stale, and ``rows(result["summary"])`` judgment rows."""
    fingerprint = judgments_fingerprint(study=study)
    result = result_of(study=study, settings=settings)
    return ReportComputed.of_result(result, fingerprint=fingerprint, n_judgment_rows=rows(result["summary"]))


def answers_of_result(
    result_of: Callable[..., dict[str, Any]], *, study: Study, settings: Mapping[str, Any], none_yet: tuple[str, str]
) -> dict[str, Any]:
    """A one-result report's result for the dashboard's answers (``result_of(study=, settings=)``
    with the report's defaults), or the answer that it is not available: ``none_yet`` is (what
    the report's error says when there is nothing yet, what the dashboard says then); any other
    refusal is "not computable yet" with the report's reason."""
    try:
        return result_of(study=study, settings=settings)
    except ValueError as exc:
        empty, said = none_yet
        return {"available": False, "reason": said if empty in str(exc) else f"Not computable yet: {exc}."}


def answers_available(
    *,
    study: Study,
    settings: dict[str, Any],
    agreement: list[dict[str, Any]],
    measure: str,
    systems: list[dict[str, Any]],
    n_judgment_rows: int,
    note: str | None = None,
) -> dict[str, Any]:
    """The dashboard's answers of a protocol whose report runs no metric (side by side, ESA,
    ranking): its agreement rows (:func:`agreement_row`), its ranking by ``measure`` (rows of
    :func:`ranked_system`), and the fingerprint of the judgments they come from."""
    answers: dict[str, Any] = {
        "available": True,
        "fingerprint": judgments_fingerprint(study=study),
        "settings": settings,
        "agreement": agreement,
    }
    if note is not None:
        answers["note"] = note
    return answers | {
        "ranking": {"measure": measure, "systems": systems},
        "metrics": {"segment": [], "system": [], "runs": []},
        "n_judgment_rows": n_judgment_rows,
    }


def agreement_row(*, criterion: str, level: str, alpha, n_items, n_judges: int, note: str) -> dict[str, Any]:
    """One agreement row of the dashboard, without an interval (the statistic has none here),
    and ``note`` where the statistic is undefined."""
    return {
        "criterion": criterion,
        "level": level,
        "alpha": alpha,
        "ci_low": None,
        "ci_high": None,
        "n_items": n_items,
        "n_judges": n_judges,
        "note": None if alpha is not None else note,
    }


def ranked_system(rank: int, r: Mapping[str, Any], *, mean: str, cluster=None, pvalue_vs_next=None) -> dict[str, Any]:
    """One system of the dashboard's ranking from a report's row ``r`` (its ``system``, interval,
    and the statistic named ``mean``); no cluster or p-value where the report has none."""
    return {
        "rank": rank,
        "system": r["system"],
        "mean": r[mean],
        "ci_low": r["ci_low"],
        "ci_high": r["ci_high"],
        "cluster": cluster,
        "pvalue_vs_next": pvalue_vs_next,
    }


def judgments_fingerprint(*, study: Study) -> str:
    """A short hash that changes whenever a judgment is added or revised, a judge is
    excluded or re-included, or the controls' expected scores change.

    Reports built from :func:`judgments_frame` store it and compare to know they are stale.
    """
    e = JudgeExclusion.objects.filter(study=study).aggregate(n=Count("id"), last=Max("id"))
    parts: dict = {
        "exclusions": [e["n"], e["last"]],
        "expected": study_control_expected(study=study),
    }
    tables = set()
    for unit in protocols_all():
        if unit.judgment_model in tables:  # a unit that shares another's table adds nothing
            continue
        tables.add(unit.judgment_model)
        j = unit.judgments_of_study(study=study).aggregate(n=Count("id"), last=Max("id"))
        # Only a table that holds some, except the one that always counts (fingerprints stored
        # before a protocol existed stay valid).
        if j["n"] or unit.fingerprint_always:
            parts[unit.fingerprint_key or unit.slug] = [j["n"], j["last"]]
    screened = sorted(judges_screened_out_names(study=study))
    if screened:  # only when there are some, so earlier fingerprints stay valid
        parts["screened_out"] = screened
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def judge_qc(*, study: Study) -> list[dict]:
    """Quality control per judge (``metrics.core.stats.qc.judge_qc``) with exclusion state.

    Every judge with an assignment appears, including excluded ones (so the
    researcher can re-include them). Returns dicts ``{"judge", "excluded", "qc",
    "screened_out", "z_basis", "own_controls", "verdict", "flags"}`` (``verdict`` and
    ``flags``: see :func:`_verdict`, for every protocol; ``own_controls``: the controls the
    protocol's own QC table checked) where ``qc`` is a :class:`JudgeQC` or None for a judge
    who has rated nothing, and ``z_basis`` maps each z-scored criterion (the 0–100
    sliders, :func:`annotation.judging.scales.criteria_zscored`) to the judge's
    :class:`JudgeScale` there — mean and sample SD of their genuine items, the basis of
    their z-scores — or None when the judge has no genuine score on it.
    """
    design = design_for_study(study=study)
    alpha = design.qc_alpha if design else 0.05
    frame = judgments_frame(study=study, include_excluded_judges=True)
    results: dict[str, JudgeQC] = {}
    if len(frame):
        results = {
            r.judge: r
            for r in _judge_qc(
                frame,
                control_expected=study_control_expected(study=study),
                alpha=alpha,
                tests=study_qc_tests(study=study),
                straightline_threshold=STRAIGHTLINE_THRESHOLD,
                min_scores_for_straightlining=STRAIGHTLINE_MIN_SCORES,
            )
        }
    zscored = scales.criteria_zscored(study_criteria(study=study))
    bases: dict[tuple[str, str], JudgeScale] = {}
    if zscored and len(frame):
        bases = {
            (r.judge, r.criterion): JudgeScale(int(r.n), float(r.mu), float(r.sigma))
            for r in judge_scales(frame, criteria=zscored).itertuples()
        }
    excluded = judges_excluded(study=study)
    screened = {
        u: (rule, reason)
        for u, rule, reason in Assignment.objects.filter(study=study, screened_out_at__isnull=False).values_list(
            "judge__username", "screened_out_rule", "screened_out_reason"
        )
    }
    names = sorted(set(Assignment.objects.filter(study=study).values_list("judge__username", flat=True)) | set(results))
    unit = protocol_for_study(study=study)
    own = {r["judge"]: r for r in unit.qc_rows(study=study) or []}
    judged = set(unit.latest_by_judge(study=study))
    return [
        {
            "judge": n,
            "excluded": n in excluded,
            "qc": results.get(n),
            "screened_out": screened.get(n),
            "z_basis": {c: bases.get((n, c)) for c in zscored},
            "own_controls": (own.get(n) or {}).get("n", 0),
            **dict(zip(("verdict", "flags"), _verdict(results.get(n), own.get(n), n in judged), strict=True)),
        }
        for n in names
    ]


#: The flag of a judge who failed the control checks of their protocol's own QC table.
CONTROLS_FLAG = "control checks"


def _verdict(qc: JudgeQC | None, own: dict | None, judged: bool) -> tuple[str, list[str]]:
    """A judge's QC verdict from what their judgments show (exclusions and screen-outs are the
    caller's): the criteria QC of the judgments frame (absolute ratings), else the protocol's
    own QC row (its controls: ``passes``), else "not enough data" for a judge who has judged
    and "no data" for one who has not."""
    if qc is not None:
        if qc.flags:
            return "flagged", list(qc.flags)
        if any(t.passed is not None for t in qc.tests):
            return "pass", []
        return "not enough data", []
    if own is not None and own.get("n"):
        return ("pass", []) if own.get("passes") else ("flagged", [CONTROLS_FLAG])
    return ("not enough data" if judged else "no data"), []
