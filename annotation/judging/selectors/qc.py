"""Quality control per judge and the judgments' fingerprint (what reports compare to
know they are stale)."""

from __future__ import annotations

import hashlib
import json

from django.db.models import Count, Max

from annotation.models import Study
from metrics.core.stats.qc import judge_qc as _judge_qc
from metrics.core.stats.results import JudgeQC
from metrics.core.stats.zscores import JudgeScale, judge_scales

from .. import scales
from ..models import Assignment, ComparisonJudgment, EsaJudgment, JudgeExclusion, Judgment, RankingJudgment
from .design import design_for_study, study_control_expected, study_criteria, study_qc_tests
from .exclusions import judges_excluded, judges_screened_out_names
from .frame import judgments_frame

#: Straight-lining: one value for at least this share of a criterion's scores, among
#: judges with at least this many scores (the QC page and :func:`judge_qc` agree).
STRAIGHTLINE_THRESHOLD = 0.9
STRAIGHTLINE_MIN_SCORES = 10


def judgments_fingerprint(*, study: Study) -> str:
    """A short hash that changes whenever a judgment is added or revised, a judge is
    excluded or re-included, or the controls' expected scores change.

    Reports built from :func:`judgments_frame` store it and compare to know they are stale.
    """
    j = Judgment.objects.filter(study=study).aggregate(n=Count("id"), last=Max("id"))
    e = JudgeExclusion.objects.filter(study=study).aggregate(n=Count("id"), last=Max("id"))
    parts = {
        "judgments": [j["n"], j["last"]],
        "exclusions": [e["n"], e["last"]],
        "expected": study_control_expected(study=study),
    }
    c = ComparisonJudgment.objects.filter(study=study).aggregate(n=Count("id"), last=Max("id"))
    if c["n"]:  # only side-by-side studies: absolute studies keep their fingerprints
        parts["comparisons"] = [c["n"], c["last"]]
    es = EsaJudgment.objects.filter(study=study).aggregate(n=Count("id"), last=Max("id"))
    if es["n"]:  # only ESA studies, likewise
        parts["esa"] = [es["n"], es["last"]]
    r = RankingJudgment.objects.filter(study=study).aggregate(n=Count("id"), last=Max("id"))
    if r["n"]:  # only ranking studies, likewise
        parts["rankings"] = [r["n"], r["last"]]
    screened = sorted(judges_screened_out_names(study=study))
    if screened:  # only when there are some, so earlier fingerprints stay valid
        parts["screened_out"] = screened
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def judge_qc(*, study: Study) -> list[dict]:
    """Quality control per judge (``metrics.core.stats.qc.judge_qc``) with exclusion state.

    Every judge with an assignment appears, including excluded ones (so the
    researcher can re-include them). Returns dicts ``{"judge", "excluded", "qc",
    "screened_out", "z_basis"}`` where ``qc`` is a :class:`JudgeQC` or None for a judge
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
    return [
        {
            "judge": n,
            "excluded": n in excluded,
            "qc": results.get(n),
            "screened_out": screened.get(n),
            "z_basis": {c: bases.get((n, c)) for c in zscored},
        }
        for n in names
    ]
