"""Reads for metric runs, scores, resources and PEM models.

``metric_scores_frame`` and ``study_metric_runs`` are the entry points the
reports app uses to correlate metrics with human judgments.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd
from django.contrib.auth.models import User
from django.db.models import Q, QuerySet

from annotation.enums import Role, SystemKind
from annotation.models import Study
from config.jobs.enums import JobStatus
from metrics.core.base.metric import Metric
from metrics.core.base.resources import ResourceSpec
from metrics.core.cards import card_rows
from metrics.core.registry import available_metrics, get_metric

from .models import MetricResource, MetricRun, MetricScore, PemModel

#: Columns of :func:`metric_scores_frame`, in order.
SCORE_FRAME_COLUMNS = ["item", "original", "system", "is_control", "score"]


def metric_runs_for_study(*, study: Study) -> QuerySet[MetricRun]:
    """Every run of the study, newest first."""
    return MetricRun.objects.filter(study=study).select_related("created_by").order_by("-created_at", "-pk")


def metric_run_get(*, study: Study, run_id: int) -> MetricRun:
    """The run ``run_id`` of ``study`` (``MetricRun.DoesNotExist`` otherwise)."""
    return MetricRun.objects.select_related("study", "created_by").get(pk=run_id, study=study)


def study_metric_runs(*, study: Study) -> list[MetricRun]:
    """The latest succeeded run per (metric slug, signature) of ``study``.

    Sorted by slug, then newest first. Two runs with the same signature
    computed the same numbers (same metric, parameters, resource hashes and
    versions) unless the study's data changed in between, so the newest wins.
    """
    latest: dict[tuple[str, str], MetricRun] = {}
    runs = MetricRun.objects.filter(study=study, status=JobStatus.SUCCEEDED).order_by("-finished_at", "-pk")
    for run in runs:
        latest.setdefault((run.metric, run.signature), run)
    return sorted(latest.values(), key=lambda r: (r.metric, -(r.finished_at.timestamp() if r.finished_at else 0)))


def metric_scores_frame(*, run: MetricRun) -> pd.DataFrame:
    """One row per scored candidate of ``run``.

    Columns: ``item`` (``str(candidate.pk)``, the same key as the judging
    app's judgments frame), ``original`` (the original's external id),
    ``system`` (system name), ``is_control`` (bool), ``score`` (float; NaN
    where the sentence score is undefined). Ordered by the originals' import
    order, then system name.
    """
    rows = (
        MetricScore.objects.filter(run=run)
        .order_by("candidate__original__position", "candidate__original__external_id", "candidate__system__name")
        .values_list(
            "candidate_id",
            "candidate__original__external_id",
            "candidate__system__name",
            "candidate__system__kind",
            "score",
        )
    )
    controls = set(SystemKind.control_kinds())
    data = [
        (str(pk), ext, system, kind in controls, math.nan if score is None else float(score))
        for pk, ext, system, kind, score in rows
    ]
    frame = pd.DataFrame(data, columns=SCORE_FRAME_COLUMNS)
    return frame.astype({"item": str, "original": str, "system": str, "is_control": bool, "score": float})


def metric_scores_page(*, run: MetricRun, system: str | None = None) -> QuerySet[MetricScore]:
    """Scores of a run with their candidate, original and system (for pages and the API)."""
    qs = MetricScore.objects.filter(run=run).select_related("candidate__original", "candidate__system")
    if system:
        qs = qs.filter(candidate__system__name=system)
    return qs.order_by("candidate__original__position", "candidate__original__external_id", "candidate__system__name")


def metric_export_rows(*, run: MetricRun) -> list[dict[str, Any]]:
    """Rows of the score export: ids, system, texts, score and the statistics vector."""
    out = []
    for s in metric_scores_page(run=run):
        c = s.candidate
        out.append(
            {
                "item": str(c.pk),
                "original_id": c.original.external_id,
                "system": c.system.name,
                "is_control": c.system.is_control,
                "original": c.original.text,
                "candidate": c.text,
                "score": s.score,
                "stats": s.stats,
            }
        )
    return out


# --------------------------------------------------------------------------- registry


def _param_info(spec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "type": spec.type.__name__,
        "default": spec.default,
        "help": spec.help,
        "choices": list(spec.choices) if spec.choices is not None else None,
        "minimum": spec.minimum,
        "maximum": spec.maximum,
        "nullable": spec.nullable,
    }


def _resource_info(spec: ResourceSpec) -> dict[str, Any]:
    try:
        path = spec.default_path()
    except Exception:  # a default that cannot even be located is simply "no default"
        path = None
    return {"name": spec.name, "help": spec.help, "has_default": bool(path is not None and path.exists())}


def metric_unavailable_reason(cls: type[Metric]) -> str | None:
    """Why ``cls`` cannot run on this machine (a missing optional dependency and its install command), else ``None``."""
    reason = getattr(cls, "unavailable_reason", None)
    return reason() if callable(reason) else None


def metric_info(cls: type[Metric]) -> dict[str, Any]:
    """A registry entry as plain data: slug, description, card, availability, parameters, resources.

    ``card`` is the metric's :class:`~metrics.core.cards.MetricCard` as a dict plus
    ``rows`` (its (label, text) pairs as every page shows them), or None.
    """
    card = None
    if cls.card is not None:
        card = asdict(cls.card) | {"rows": card_rows(cls.card)}
    return {
        "slug": cls.slug,
        "description": cls.description,
        "card": card,
        "unavailable": metric_unavailable_reason(cls),
        "higher_is_better": bool(cls.higher_is_better),
        "params": [_param_info(p) for p in cls.params.values()],
        "resources": [_resource_info(r) for r in cls.resources.values()],
    }


def metric_catalog() -> list[dict[str, Any]]:
    """Every registered metric (see :func:`metric_info`), sorted by slug."""
    return [metric_info(cls) for cls in available_metrics()]


def metric_catalog_entry(slug: str) -> dict[str, Any]:
    """One registry entry; raises ``UnknownMetric``."""
    return metric_info(get_metric(slug))


# --------------------------------------------------------------------------- resources and PEM models


def _managed_study_ids(user: User) -> QuerySet:
    return Study.objects.filter(Q(owner=user) | Q(memberships__user=user, memberships__role=Role.RESEARCHER)).values(
        "pk"
    )


def metric_resources_for_user(*, user: User) -> QuerySet[MetricResource]:
    """Resources ``user`` may use: their own, and those of studies they manage (all for superusers)."""
    qs = MetricResource.objects.all()
    if not user.is_superuser:
        qs = qs.filter(Q(owner=user) | Q(study__in=_managed_study_ids(user)))
    return qs.select_related("owner", "study").order_by("-created_at")


def pem_models_for_user(*, user: User) -> QuerySet[PemModel]:
    """PEM models ``user`` may see and reuse: trained on a study they manage, or by them."""
    qs = PemModel.objects.all()
    if not user.is_superuser:
        qs = qs.filter(Q(created_by=user) | Q(study__in=_managed_study_ids(user)))
    return qs.select_related("study", "resource").order_by("-created_at")


def pem_models_for_study(*, study: Study) -> QuerySet[PemModel]:
    """PEM models trained on ``study``, newest first."""
    return PemModel.objects.filter(study=study).select_related("resource").order_by("-created_at")


#: Columns of :func:`pem_training_targets`, in order.
PEM_TARGET_COLUMNS = ["item", "original", "is_control", "control_kind", "n_judgments", "target"]


def pem_training_targets(*, study: Study) -> pd.DataFrame:
    """The human overall score PEM trains on, one row per judged candidate.

    From the judging app's ``judgments_frame`` (excluded judges left out):
    ``target`` is the mean overall score of the candidate's judges, except for
    controls, whose target is their kind's fixed expected overall score
    (``study_control_expected``; PEM §5.1: the human reference is the judges'
    mean plus the controls' fixed scores). ``original`` is the original's
    external id, the group that train and test are split by.
    """
    from annotation.judging.protocols.absolute.frame import judgments_frame
    from annotation.judging.selectors.design import study_control_expected

    frame = judgments_frame(study=study, include_excluded_judges=False)
    if frame is None or frame.empty:
        return pd.DataFrame(columns=PEM_TARGET_COLUMNS)
    overall = frame[frame["criterion"] == "overall"]
    if overall.empty:
        return pd.DataFrame(columns=PEM_TARGET_COLUMNS)
    grouped = (
        overall.groupby("item", sort=True)
        .agg(
            original=("original", "first"),
            is_control=("is_control", "first"),
            control_kind=("control_kind", "first"),
            n_judgments=("score", "size"),
            target=("score", "mean"),
        )
        .reset_index()
    )
    expected = study_control_expected(study=study) or {}
    for i in grouped.index[grouped["is_control"].astype(bool)]:
        kind = grouped.at[i, "control_kind"]
        fixed = (expected.get(kind) or {}).get("overall")
        if fixed is None:
            raise ValueError(f"no expected overall score for controls of kind {kind!r}")
        grouped.at[i, "target"] = float(fixed)
    grouped["item"] = grouped["item"].astype(str)
    grouped["original"] = grouped["original"].astype(str)
    grouped["is_control"] = grouped["is_control"].astype(bool)
    grouped["target"] = grouped["target"].astype(float)
    return grouped[PEM_TARGET_COLUMNS]


def metric_resources_by_id(*, ids) -> dict[int, MetricResource]:
    """Resources by primary key (to show what a run used, whoever uploaded it)."""
    return {r.pk: r for r in MetricResource.objects.filter(pk__in=list(ids))}


def metric_run_paired_stats(*, run: MetricRun) -> tuple[list[str], dict[str, np.ndarray]]:
    """The stored sufficient statistics of ``run``, aligned for paired tests.

    Returns ``(originals, {system: (n, k) float64 array})``: the external ids of
    the originals that every non-control system of the run has a score for (in
    import order) and, per system (sorted by name), its statistics rows in that
    order — the input of ``metrics.core.stats.metric_pairwise_tests``, read
    from ``MetricScore.stats`` without re-scoring any text. Controls are left
    out (they are paraeval's own sentences, not systems under comparison).
    """
    import numpy as np

    rows = (
        MetricScore.objects.filter(run=run)
        .exclude(candidate__system__kind__in=SystemKind.control_kinds())
        .order_by("candidate__original__position", "candidate__original__external_id", "candidate__system__name")
        .values_list("candidate__original__external_id", "candidate__system__name", "stats")
    )
    by_original: dict[str, dict[str, list[float]]] = {}
    systems: set[str] = set()
    for original, system, stats in rows.iterator(chunk_size=5000):
        by_original.setdefault(original, {})[system] = stats
        systems.add(system)
    names = sorted(systems)
    complete = [o for o, per in by_original.items() if len(per) == len(names)]
    out = {
        s: np.asarray([by_original[o][s] for o in complete], dtype=np.float64).reshape(len(complete), -1) for s in names
    }
    return complete, out
