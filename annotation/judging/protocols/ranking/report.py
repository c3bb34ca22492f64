"""The report of a k-way ranking study: its build (worker side); its tables are :mod:`.tables`.

Built from the latest rankings (:func:`annotation.judging.protocols.ranking.selectors.ranking_records`),
judges excluded on the QC page left out: Plackett–Luce strengths with bootstrap intervals
and significance clusters (:func:`metrics.core.ranking.plackett_luce.plackett_luce`), win
rates per system and per pair (:mod:`metrics.core.ranking.win_rates`), the mean rank of
each system, Kendall's W between the judges of each set (:mod:`metrics.core.ranking.concordance`)
and the control checks of each judge (:mod:`metrics.core.ranking.controls`). Controls are
left out of everything but their checks. Whatever is too thin to compute is said so
("not enough data"), never NaN. Stored as ``{"protocol": "ranking", "plackett_luce": ...,
"systems": [...], "pairs": [...], "scores": {...} or None, "concordance": {...}, "controls": [...], "summary": {...},
"settings": {...}, "notes": {...}}``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from annotation.judging.enums import CONTROL_SYSTEM_PREFIX
from annotation.judging.models import JudgingDesign
from annotation.judging.selectors.exclusions import judges_excluded
from annotation.judging.selectors.qc import (
    agreement_row,
    answers_available,
    answers_of_result,
    ranked_system,
    report_of_result,
)
from metrics.core.ranking.concordance import ranking_concordance
from metrics.core.ranking.controls import ranking_control_checks
from metrics.core.ranking.orders import Ranking, midranks
from metrics.core.ranking.plackett_luce import plackett_luce
from metrics.core.ranking.scores import score_order_agreement, system_scores
from metrics.core.ranking.sets import set_key, set_key_split
from metrics.core.ranking.win_rates import pairwise_records, system_win_rates
from metrics.core.stats.results import jsonable
from metrics.reports.computed import ReportComputed
from metrics.reports.models import Report
from metrics.reports.services.report_settings import DEFAULT_SETTINGS

from . import selectors as judging_ranking

#: Bootstrap resamples of the Plackett–Luce intervals when the settings leave n_boot empty.
DEFAULT_PL_BOOT = 500
NOT_ENOUGH = "not enough data"


def _genuine(r: Ranking) -> Ranking | None:
    """The ranking without its controls (None when fewer than two systems are left)."""
    groups = tuple(g for g in (tuple(s for s in g if not s.startswith(CONTROL_SYSTEM_PREFIX)) for g in r.groups) if g)
    return Ranking(r.judge, r.original, groups) if sum(map(len, groups)) >= 2 else None


def _finite(x: Any) -> float | None:
    return float(x) if x is not None and math.isfinite(float(x)) else None


def ranking_result(*, study, settings: Mapping[str, Any]) -> dict:
    """Everything the report shows for a ranking study (JSON-able). ValueError without rankings."""
    design = JudgingDesign.objects.get(study=study)
    records = judging_ranking.ranking_records(study=study)
    if not records:
        raise ValueError("the study has no rankings")
    excluded = sorted(judges_excluded(study=study))
    kept = [r for r in records if r.judge not in excluded]
    genuine = [g for g in (_genuine(r) for r in kept) if g is not None]
    level = float(settings.get("confidence_level") or 0.95)
    seed = int(settings.get("seed") or 0)
    n_boot = int(settings.get("n_boot") or DEFAULT_PL_BOOT)
    notes: dict[str, str] = {}

    pl = None
    systems = sorted({s for r in genuine for s in r.systems})
    if len(systems) >= 2 and genuine:
        fit = plackett_luce(genuine, n_boot=n_boot, confidence_level=level, seed=seed)
        pl = fit.to_dict()
        if fit.n_originals < 2:
            notes["plackett_luce"] = f"{NOT_ENOUGH} for intervals: rankings of one original only"
    else:
        notes["plackett_luce"] = f"{NOT_ENOUGH}: fewer than two systems ranked"

    mean_rank: dict[str, list[float]] = defaultdict(list)
    for r in genuine:
        for s, rank in midranks(r.groups).items():
            mean_rank[s].append(rank)
    wins = {rec.system: rec for rec in system_win_rates(genuine)}
    system_rows = []
    for s in pl["systems"] if pl else []:
        name = s["system"]
        w = wins.get(name)
        ranks = mean_rank.get(name, [])
        system_rows.append(
            {
                "system": name,
                "strength": _finite(s["param"]),
                "probability": _finite(s["probability"]),
                "ci_low": _finite(s["low"]),
                "ci_high": _finite(s["high"]),
                "cluster": s["cluster"],
                "p_next": _finite(s["p_next"]) if s["p_next"] is not None else None,
                "n_rankings": len(ranks),
                "mean_rank": sum(ranks) / len(ranks) if ranks else None,
                "firsts": w.firsts if w else 0,
                "wins": w.wins if w else 0,
                "ties": w.ties if w else 0,
                "losses": w.losses if w else 0,
                "win_rate": _finite(w.win_rate) if w else None,
            }
        )
    pairs = [p.to_dict() for p in pairwise_records(genuine)]

    # The 0–100 scores, where the design asked for them: per system (raw and WMT z) and per
    # judge against their own order (issue 42: the report never used them).
    scores = None
    scored = [c for c in judging_ranking.ranking_scores(study=study) if c.judge not in excluded]
    if scored:
        table = system_scores(scored).to_dict("records")  # best z first
        scores = {
            "systems": [{**r, "raw": _finite(r["raw"]), "z": _finite(r["z"])} for r in table],
            "judges": [j.to_dict() for j in score_order_agreement(scored)],
        }
    elif design.ranking_scores:
        notes["scores"] = f"{NOT_ENOUGH}: no ranking carries scores"

    # Agreement: the unit is one set (an original and the systems shown together), ranked by
    # at least two judges; a judge's set is named by its original and its systems.
    by_set = [Ranking(r.judge, set_key(r.original, r.systems), r.groups) for r in genuine]
    concordance = jsonable(ranking_concordance(by_set))
    for o in concordance["originals"]:
        o["original"], shown = set_key_split(o["original"])
        o["systems"] = ", ".join(shown)
    if concordance["n_originals"] == 0:
        notes["concordance"] = f"{NOT_ENOUGH}: no set was ranked by two judges"

    checks = ranking_control_checks(kept, judging_ranking.control_kinds(study=study))
    qc = {r["judge"]: r for r in judging_ranking.ranking_qc(study=study)}
    controls = [
        {
            "judge": j,
            "n": r["n"],
            "correct": r["correct"],
            "accuracy": r["accuracy"],
            "pvalue": r["pvalue"],
            "passes": r["passes"],
        }
        for j, r in qc.items()
    ]
    if not checks:
        notes["controls"] = f"{NOT_ENOUGH}: no control was ranked"
    return jsonable(
        {
            "protocol": design.protocol,  # the study's stored protocol: this one
            "plackett_luce": pl,
            "systems": system_rows,
            "pairs": pairs,
            "scores": scores,
            "concordance": concordance,
            "controls": controls,
            "control_checks": [
                {
                    "judge": c.judge,
                    "original": c.original,
                    "system": c.system,
                    "kind": c.control_kind,
                    "group": c.group,
                    "n_groups": c.n_groups,
                    "passed": c.passed,
                }
                for c in checks
            ],
            "summary": {
                "n_rankings": len(genuine),
                "n_control_rankings": sum(r != g for r, g in zip(kept, map(_genuine, kept))),
                "n_judges": len({r.judge for r in kept}),
                "systems": systems,
                "k": design.ranking_k,
                "n_tied_rankings": sum(r.has_ties for r in genuine),
                "asks_scores": bool(design.ranking_scores),
            },
            "settings": {"confidence_level": level, "seed": seed, "n_boot": n_boot},
            "notes": notes,
            "excluded_judges": excluded,
        }
    )


def ranking_report_compute(*, report: Report, settings: Mapping[str, Any]) -> ReportComputed:
    """The report of a ranking study (the unit's ``report_compute``, which
    :func:`metrics.reports.services.build.report_build` runs)."""
    return report_of_result(ranking_result, study=report.study, settings=settings, rows=lambda s: s["n_rankings"])


def ranking_answers(study) -> dict:
    """Ranking: Kendall's W between judges (mean over the sets ranked by two judges or more) and
    the Plackett–Luce ranking with its bootstrap intervals and clusters, from the ranking report's
    own :func:`ranking_result` with the report's default settings (so the
    numbers equal a ranking report built at the same moment). W has no interval: those cells stay
    empty, never guessed."""
    settings = {k: DEFAULT_SETTINGS.get(k) for k in ("confidence_level", "seed", "n_boot")}
    result = answers_of_result(
        ranking_result, study=study, settings=settings, none_yet=("no rankings", "No rankings yet.")
    )
    if result.get("available") is False:
        return result
    conc = result["concordance"]
    return answers_available(
        study=study,
        settings={
            "criterion": "ranking",
            "n_boot": result["settings"]["n_boot"] or DEFAULT_PL_BOOT,
            "confidence_level": result["settings"]["confidence_level"],
            "significance_level": 0.05,
            "seed": result["settings"]["seed"],
        },
        agreement=[
            agreement_row(
                criterion="ranking",
                level="Kendall's W",
                alpha=conc.get("mean_w"),
                n_items=conc.get("n_originals"),
                n_judges=result["summary"]["n_judges"],
                note="too few sets ranked twice",
            )
        ],
        measure="Plackett–Luce log-strength β",
        systems=[
            ranked_system(i + 1, r, mean="strength", cluster=r["cluster"], pvalue_vs_next=r["p_next"])
            for i, r in enumerate(result["systems"])
        ],
        n_judgment_rows=result["summary"]["n_rankings"],
    )
