"""One pure function that computes a study's whole statistics report as a JSON-able dict."""

from __future__ import annotations

import platform
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from importlib import metadata
from typing import Any

import pandas as pd
from threadpoolctl import threadpool_limits

from metrics.core.stats.agreement.criterion import criterion_agreement

from .data import DEFAULT_CONTROL_EXPECTED, rating_matrix, validate_judgments, validate_metric_scores
from .human_ceiling import human_ceiling, judge_pool_agreement
from .interjudge import interjudge_correlations, interjudge_summary
from .meta_eval import metric_meta_evaluation
from .metric_human import aligned_metrics, metric_human_correlations, metric_leaderboard
from .qc import DEFAULT_QC_TESTS, judge_qc
from .reference import DEFAULT_SUBSET_MIN, criterion_correlations, human_reference
from .results import jsonable
from .significance import system_ranking
from .warnings import report_warnings
from .zscores import MIN_GENUINE, judge_scales, system_zscores

__all__ = ["REPORT_SCHEMA", "ReportOptions", "auto_n_boot", "build_report"]

REPORT_SCHEMA = "paraeval.stats.report/1"

TABLE3_METHODS: tuple[str, ...] = ("pearson", "spearman", "kendall_b", "kendall_c", "accuracy", "accuracy_tc")
HUMAN_METHODS: tuple[str, ...] = ("pearson", "spearman", "kendall_b")


def auto_n_boot(n_items: int) -> int:
    """Default bootstrap resamples: 1000 (the usual percentile-CI choice, Efron &
    Tibshirani 1993) up to 50,000 items, 500 above — at that size the sampling error
    of the interval ends is already far below the interval's width."""
    return 1000 if n_items <= 50_000 else 500


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("numpy", "pandas", "scipy", "statsmodels", "krippendorff"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "unknown"
    return out


@dataclass(frozen=True)
class ReportOptions:
    """What :func:`build_report` computes and how, besides the data: every field has the
    default a study's report starts from. A study's settings become these in one place
    (``annotation.judging.protocols.absolute.report.absolute_report_options``), for the report and the
    live dashboard alike."""

    #: Judges left out of every table (still in ``judge_qc``, marked excluded).
    excluded_judges: Sequence[str] = ()
    #: Expected score of each control kind per criterion.
    control_expected: Mapping[str, Mapping[str, float]] = field(default_factory=lambda: DEFAULT_CONTROL_EXPECTED)
    #: The target criterion, and the criteria in order (None: every criterion judged, sorted).
    criterion: str = "overall"
    criteria: Sequence[str] | None = None
    normalize: str | None = None
    include_controls_in_mean: bool = True
    subset_min: Mapping[str, float] | None = field(default_factory=lambda: DEFAULT_SUBSET_MIN)
    accuracy_groups: str | None = "original"
    #: Bootstrap resamples (None: :func:`auto_n_boot`), interval and test levels, and the seed.
    n_boot: int | None = None
    confidence_level: float = 0.95
    significance_level: float = 0.05
    seed: int = 0
    #: Judge QC: its level, its tests, and the optional flags' thresholds.
    qc_alpha: float = 0.05
    qc_tests: Sequence[tuple[str, str, Sequence[str]]] | None = None
    straightline_threshold: float = 0.9
    min_median_seconds: float | None = None
    max_control_mad: float | None = None
    #: Fewest shared items for a pairwise correlation (at least 4).
    min_shared: int = 30
    #: The metric runs' records (LLM judges' pools are read from them).
    metric_runs: Sequence[Mapping[str, Any]] = ()
    #: The shared points scale, and each criterion's scale type (agreement follows it).
    scale: Sequence[float] | None = None
    scales: Mapping[str, str] | None = None
    baseline_metric: str | None = "chrf"
    zscore_criteria: Sequence[str] = ()
    #: Only these sections (None: all), and whether agreement has its pairwise detail and ICC.
    sections: Collection[str] | None = None
    agreement_detail: bool = True


def build_report(
    judgments: pd.DataFrame,
    metric_scores: pd.DataFrame | Mapping[str, pd.DataFrame] | None = None,
    *,
    options: ReportOptions | None = None,
    **changes: Any,
) -> dict[str, Any]:
    """Compute the study report (PEM Tables 1–3, agreement, QC, rankings) as a dict.

    ``judgments`` is the canonical tidy frame (:mod:`metrics.core.stats.data`);
    ``metric_scores`` optional metric scores (a frame with ``item``, ``system``,
    ``score`` and optionally ``metric``, or ``{name: frame}``).  Judges in
    ``excluded_judges`` are left out of every table but still appear in ``judge_qc``
    (with ``"excluded": true``).  ``criterion`` is the target ("overall") criterion.
    Pure: no I/O, deterministic for a given ``seed``; the result is JSON-serialisable
    (NaN → null).  How it is computed is ``options`` (:class:`ReportOptions`), with any of
    its fields changed by name (``build_report(frame, criterion="meaning")``; an unknown
    name is a ``TypeError``).  Keys:

    * ``summary`` — counts, judges, systems, criteria.
    * ``table1`` — inter-judge correlation on ``criterion``, controls excluded, per
      judge pair at ``sentence`` and ``system`` level (PEM Table 1).
    * ``table2`` — each criterion vs ``criterion`` on the human reference, both levels,
      on all items and on the ``subset_min`` subset (PEM Table 2).
    * ``table3`` — each metric vs the mean and each judge, both levels, Pearson,
      Spearman, Kendall τ-b/τ-c, pairwise accuracy (PEM Table 3); null without metrics.
    * ``agreement`` — per criterion: Krippendorff's α (nominal/ordinal/interval) with
      bootstrap CIs, Fleiss' κ (or the reason it is missing), ICCs, pairwise Cohen's κ
      and Pearson (controls excluded).
    * ``judge_qc`` — :func:`~metrics.core.stats.qc.judge_qc` for every judge, with ``qc_tests``
      (the design's control tests; PEM's three when not given).
    * ``system_ranking`` — genuine systems by mean human ``criterion`` with bootstrap
      CIs and significance clusters.
    * ``metric_leaderboard`` — per level, metrics by Pearson with the mean human
      reference, with Williams-test p-values against the best; null without metrics.
    * ``metric_meta_evaluation`` — per level (genuine items), every metric by Pearson,
      Spearman, Kendall τ-b and pairwise accuracy (within originals at segment level),
      Williams tests against the best, against ``baseline_metric`` (chrF by default,
      when it was run) and the full matrix
      (:func:`~metrics.core.stats.meta_eval.metric_meta_evaluation`); soft pairwise accuracy at
      system level; ``segment.human_ceiling``, one judge against the others and each metric
      as one more judge (:func:`~metrics.core.stats.human_ceiling.human_ceiling`); and
      ``llm_judge_pool``, α of the humans and apart of the humans plus each LLM judge
      (``metric_runs`` entries with a ``judge_criterion``); null without metrics.
    * ``system_scores`` — for each criterion of ``zscore_criteria`` (the 0–100 ones) that
      was judged: per genuine system its mean raw score and mean WMT z-score
      (:func:`~metrics.core.stats.zscores.system_zscores`: per-judge z over genuine items,
      sample SD; mean over an original's judgments, then over originals) and the judges
      whose z is undefined there; null when no criterion is z-scored.
    * ``settings``, ``versions`` — everything needed to reproduce the numbers.

    ``scales`` maps criteria to their scale type (``points``, ``slider``,
    ``categorical``) so that agreement follows the scale
    (:func:`~metrics.core.stats.agreement.criterion_agreement`); without it every
    coefficient is computed, as before.

    ``sections`` (the keys above) computes only those, each exactly as in a full report, and
    leaves the others null, without ``warnings`` (which read every section): the live
    dashboard asks for its three (agreement, ranking, leaderboard) instead of paying for
    per-pair tables it does not show. ``agreement_detail=False`` leaves out the pairwise
    figures and the ICC of ``agreement`` (α and Fleiss' κ stay, equal to a full report's).
    """
    chosen = replace(options or ReportOptions(), **changes)
    # One BLAS thread: the report makes thousands of small matrix products, for which
    # thread start-up and contention with other worker processes cost more than they
    # save (measured: 25x slower dot products on a loaded 2-core machine).
    with threadpool_limits(limits=1, user_api="blas"):
        return _build_report(
            judgments, metric_scores, **{f.name: getattr(chosen, f.name) for f in fields(ReportOptions)}
        )


#: The sections of a report that :func:`build_report` can compute alone (``summary``,
#: ``settings`` and ``versions`` always come).
REPORT_SECTIONS = frozenset(
    {
        "table1",
        "table2",
        "table3",
        "agreement",
        "judge_qc",
        "system_ranking",
        "metric_leaderboard",
        "metric_leaderboard_with_controls",
        "metric_meta_evaluation",
        "system_scores",
    }
)


def _build_report(
    judgments,
    metric_scores,
    *,
    excluded_judges,
    control_expected,
    criterion,
    criteria,
    normalize,
    include_controls_in_mean,
    subset_min,
    accuracy_groups,
    n_boot,
    confidence_level,
    significance_level,
    seed,
    qc_alpha,
    qc_tests,
    straightline_threshold,
    min_median_seconds,
    max_control_mad,
    min_shared,
    metric_runs,
    scale,
    scales=None,
    baseline_metric=None,
    zscore_criteria=(),
    sections=None,
    agreement_detail=True,
) -> dict[str, Any]:
    unknown_sections = set(sections or ()) - REPORT_SECTIONS
    if unknown_sections:
        raise ValueError(f"unknown report section(s): {', '.join(sorted(unknown_sections))}")

    def want(section: str) -> bool:
        return sections is None or section in sections

    if int(min_shared) < 4:
        raise ValueError("min_shared must be at least 4 (a correlation on 3 items has no Fisher-z weight)")
    min_shared = int(min_shared)
    full = validate_judgments(judgments)
    excluded = sorted({str(j) for j in excluded_judges})
    unknown = sorted(set(excluded) - set(full["judge"].unique()))
    if unknown:
        raise ValueError(f"excluded judge(s) not in the judgments: {', '.join(unknown)}")
    frame = full.loc[~full["judge"].isin(excluded)].reset_index(drop=True) if excluded else full
    frame.attrs["paraeval_validated_rows"] = len(frame)
    if frame.empty:
        raise ValueError("no judgments left after excluding judges")
    crit_names = list(criteria) if criteria is not None else sorted(frame["criterion"].unique())
    if criterion not in frame["criterion"].unique():
        raise ValueError(f"no judgments on the target criterion {criterion!r}")

    genuine_items = frame.loc[~frame["is_control"], "item"].nunique()
    boots = auto_n_boot(genuine_items) if n_boot is None else int(n_boot)

    summary = {
        "n_judgments": int(len(frame)),
        "n_judges": int(frame["judge"].nunique()),
        "judges": sorted(frame["judge"].unique().tolist()),
        "n_items": int(frame["item"].nunique()),
        "n_genuine_items": int(genuine_items),
        "n_control_items": int(frame.loc[frame["is_control"], "item"].nunique()),
        "n_originals": int(frame["original"].nunique()),
        "systems": sorted(frame.loc[~frame["is_control"], "system"].unique().tolist()),
        "control_kinds": sorted(frame.loc[frame["is_control"], "control_kind"].dropna().unique().tolist()),
        "criteria": crit_names,
        "excluded_judges": excluded,
    }

    table1 = None
    if want("table1"):
        pairs = interjudge_correlations(frame, criterion=criterion, methods=HUMAN_METHODS)
        pair_summary, pair_flags = interjudge_summary(pairs, min_shared=min_shared)
        table1 = {
            "criterion": criterion,
            "controls": "excluded",
            "min_shared": min_shared,
            "pairs": [{**p.to_dict(), **flag} for p, flag in zip(pairs, pair_flags)],
            # The headline: Fisher-z mean weighted by n - 3 over pairs sharing >= min_shared
            # items (see interjudge_summary); no longer the plain mean of every pair.
            "mean_pearson": {level: pair_summary[level]["statistic"] for level in ("sentence", "system")},
            "summary": pair_summary,
        }

    ref = human_reference(frame, control_expected=control_expected, normalize=normalize)
    table2 = None
    if want("table2"):
        table2 = {
            "target": criterion,
            "include_controls": include_controls_in_mean,
            "rows": [
                r.to_dict()
                for r in criterion_correlations(
                    ref,
                    target=criterion,
                    criteria=[c for c in crit_names if c != criterion],
                    methods=HUMAN_METHODS,
                    include_controls=include_controls_in_mean,
                    subset_min=subset_min,
                )
            ],
        }

    agreement = None
    if want("agreement"):
        agreement = {
            c: criterion_agreement(
                rating_matrix(frame, c, include_controls=False),
                c,
                n_boot=boots,
                confidence_level=confidence_level,
                seed=seed,
                pairwise=agreement_detail,
                with_icc=agreement_detail,
                min_shared=min_shared,
                scale=scale,
                scale_type=(scales or {}).get(c),
            ).to_dict()
            for c in crit_names
        }

    judge_qc_rows = None
    if want("judge_qc"):
        qc = judge_qc(
            full,
            control_expected=control_expected,
            alpha=qc_alpha,
            tests=DEFAULT_QC_TESTS if qc_tests is None else qc_tests,
            straightline_threshold=straightline_threshold,
            min_median_seconds=min_median_seconds,
            max_control_mad=max_control_mad,
        )
        judge_qc_rows = [{**q.to_dict(), "excluded": q.judge in excluded} for q in qc]

    genuine_ref = ref.loc[~ref["is_control"].astype(bool)]
    ranking = None
    if want("system_ranking"):
        ranking = system_ranking(
            genuine_ref.reset_index(),
            score_col=criterion,
            n_boot=boots,
            significance_level=significance_level,
            confidence_level=confidence_level,
            seed=seed,
        )

    table3 = leaderboard = leaderboard_controls = meta_evaluation = None
    if metric_scores is not None:
        metrics_long = validate_metric_scores(metric_scores)
        # Headline: genuine items only (controls are easy and extreme and would inflate
        # any correlation).  Second column: PEM §5.2's convention, the controls at their
        # expected scores in the human reference, labelled as such.
        if want("table3"):
            rows = metric_human_correlations(
                frame,
                metrics_long,
                criterion=criterion,
                methods=TABLE3_METHODS,
                include_controls_in_mean=False,
                accuracy_groups=accuracy_groups,
                reference=ref,
            )
            rows_controls = metric_human_correlations(
                frame,
                metrics_long,
                criterion=criterion,
                methods=TABLE3_METHODS,
                include_controls_in_mean=True,
                per_judge=False,
                accuracy_groups=accuracy_groups,
                reference=ref,
            )
            table3 = {
                "criterion": criterion,
                "controls_in_mean": False,
                "accuracy_groups": accuracy_groups,
                "rows": [r.to_dict() for r in rows],
                "rows_with_controls": [r.to_dict() for r in rows_controls],
            }
        if want("metric_leaderboard"):
            leaderboard = _leaderboards(metrics_long, ref, genuine_ref, criterion, significance_level)
        if want("metric_leaderboard_with_controls"):
            leaderboard_controls = _leaderboards(metrics_long, ref, ref, criterion, significance_level)
        if want("metric_meta_evaluation"):
            meta_evaluation = _meta_evaluation(
                metrics_long, ref, genuine_ref, criterion, significance_level, baseline_metric, accuracy_groups
            )
            meta_evaluation["segment"]["human_ceiling"] = human_ceiling(
                frame,
                aligned_metrics(metrics_long, ref).reindex(genuine_ref.index),
                criterion=criterion,
                min_shared=min_shared,
                n_boot=boots,
                confidence_level=confidence_level,
                seed=seed,
            )
            meta_evaluation["llm_judge_pool"] = _llm_judge_pools(
                frame, metrics_long, metric_runs, crit_names, scales, boots, confidence_level, seed
            )

    settings = {
        "criterion": criterion,
        "criteria": crit_names,
        "excluded_judges": excluded,
        "control_expected": {k: dict(v) for k, v in control_expected.items()},
        "normalize": normalize,
        "include_controls_in_mean": include_controls_in_mean,
        "subset_min": dict(subset_min) if subset_min else None,
        "accuracy_groups": accuracy_groups,
        "n_boot": boots,
        "bootstrap": "percentile, resampling items (agreement) or originals (ranking)",
        "confidence_level": confidence_level,
        "significance_level": significance_level,
        "seed": seed,
        "qc_alpha": qc_alpha,
        "straightline_threshold": straightline_threshold,
        "min_median_seconds": min_median_seconds,
        "max_control_mad": max_control_mad,
        "agreement_controls": "excluded",
        "min_shared": min_shared,
        "scale": list(scale) if scale is not None else None,
        "metric_controls": "headline on genuine items; controls in the human reference (PEM 5.2) as a second column",
        "scales": dict(scales) if scales else None,
        "baseline_metric": baseline_metric,
        "zscore_criteria": [c for c in zscore_criteria if c in crit_names],
    }
    report = jsonable(
        {
            "schema": REPORT_SCHEMA,
            "summary": summary,
            "table1": table1,
            "table2": table2,
            "table3": table3,
            "agreement": agreement,
            "judge_qc": judge_qc_rows,
            "system_ranking": None
            if ranking is None
            else {"criterion": criterion, "systems": [r.to_dict() for r in ranking]},
            "metric_leaderboard": leaderboard,
            "metric_leaderboard_with_controls": leaderboard_controls,
            "metric_meta_evaluation": meta_evaluation,
            "system_scores": _system_scores(frame, [c for c in zscore_criteria if c in crit_names])
            if want("system_scores")
            else None,
            "settings": settings,
            "versions": _versions(),
        }
    )
    if sections is None:
        report["warnings"] = report_warnings(report, frame=full, metric_runs=metric_runs)
    else:
        report["sections"] = sorted(sections)
    return report


def _system_scores(frame: pd.DataFrame, criteria: Sequence[str]) -> dict[str, Any] | None:
    """Per z-scored criterion: each genuine system's mean raw score and mean z, and the
    judges whose z is undefined there (named, so the tables can say so)."""
    if not criteria:
        return None
    table = system_zscores(frame, criteria=criteria)
    scales = judge_scales(frame, criteria=criteria)
    defined = {(r.judge, r.criterion) for r in scales.itertuples() if r.defined}
    blocks = []
    for c in criteria:
        judges = sorted(frame.loc[frame["criterion"] == c, "judge"].unique().tolist())
        rows = table.loc[table["criterion"] == c].drop(columns="criterion")
        blocks.append(
            {
                "criterion": c,
                "undefined_judges": [j for j in judges if (j, c) not in defined],
                "systems": rows.to_dict(orient="records"),
            }
        )
    return {
        "formula": "z = (x − μ_j) / σ_j per judge j and criterion; μ_j, σ_j over j's genuine items",
        "ddof": 1,
        "min_genuine": MIN_GENUINE,
        "controls": "left out of μ_j and σ_j and of the system means",
        "criteria": blocks,
    }


def _leaderboards(metrics_long, ref, mean_ref, criterion, significance_level) -> dict[str, list[dict]]:
    wide = aligned_metrics(metrics_long, ref).reindex(mean_ref.index)
    return {
        level: [
            r.to_dict()
            for r in metric_leaderboard(
                mean_ref[criterion].to_numpy(dtype=float),
                wide,
                systems=mean_ref["system"].to_numpy(),
                level=level,
                method="pearson",
                significance_level=significance_level,
            )
        ]
        for level in ("segment", "system")
    }


def _llm_judge_pools(frame, metrics_long, metric_runs, crit_names, scales, boots, confidence_level, seed):
    # LLM judges (runs that rated a criterion of the rubric) added to that criterion's
    # judge pool, one at a time, apart from the humans' own agreement.
    by_criterion: dict[str, dict[str, pd.Series]] = {}
    for run in metric_runs:
        crit, name = run.get("judge_criterion"), run.get("name")
        if run.get("used") and crit in crit_names and name in set(metrics_long["metric"]):
            rows = metrics_long.loc[metrics_long["metric"] == name]
            by_criterion.setdefault(crit, {})[name] = rows.set_index("item")["score"]
    return [
        judge_pool_agreement(
            frame,
            judges,
            criterion=c,
            scale_type=(scales or {}).get(c),
            n_boot=boots,
            confidence_level=confidence_level,
            seed=seed,
        )
        for c, judges in by_criterion.items()
    ]


def _meta_evaluation(metrics_long, ref, mean_ref, criterion, significance_level, baseline, accuracy_groups):
    wide = aligned_metrics(metrics_long, ref).reindex(mean_ref.index)
    human = mean_ref[criterion].to_numpy(dtype=float)
    return {
        level: metric_meta_evaluation(
            human,
            wide,
            level=level,
            systems=mean_ref["system"].to_numpy(),
            groups=mean_ref[accuracy_groups].to_numpy() if accuracy_groups and level == "segment" else None,
            baseline=baseline,
            significance_level=significance_level,
            # Soft pairwise accuracy's permutation tests pair systems on the same originals.
            segments=mean_ref["original"].to_numpy() if level == "system" else None,
        )
        for level in ("segment", "system")
    }
