"""PEM scored out of fold on a study's own judgments (a meta-evaluation, e.g. ParaBank's leaderboard)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.models import Candidate, Study
from config.jobs.enums import JobStatus

from ..models import MetricRun, MetricScore
from ._shared import finite_or_none, run_update


def pem_out_of_fold_run_create(
    *,
    study: Study,
    criterion: str,
    folds: int = 5,
    param_grid: Mapping[str, Any] | None = None,
    created_by: User | None = None,
) -> MetricRun:
    """A finished ``pem`` run on ``study`` whose scores are out-of-fold predictions.

    For a meta-evaluation on the study's own judgments (ParaBank's leaderboard): PEM
    is trained on the mean human ``criterion`` score of each judged genuine candidate
    and every candidate is predicted by a model that never saw its original
    (:func:`metrics.core.pem_cv.pem_out_of_fold`, ``folds`` groups of originals). The
    three features are the study's latest succeeded runs of ``pivot-f1``,
    ``lm-fluency`` and ``target-f1`` with their default resources (run them first).
    The run's signature says ``pem-oof`` and names the folds, criterion, grid and the
    feature runs' signatures; its statistics are the predictions (PEM's own). Runs in
    this process; raises :class:`ValidationError` when a feature run or the
    judgments are missing.
    """
    from annotation.enums import SystemKind
    from annotation.judging.protocols.absolute.frame import judgments_frame
    from annotation.judging.selectors.design import study_criteria
    from metrics.core.pem.model import FEATURES
    from metrics.core.pem_cv import META_EVAL_GRID, pem_out_of_fold

    from ..selectors import metric_scores_frame, study_metric_runs

    runs = {}
    for run in study_metric_runs(study=study):
        if run.metric in FEATURES and not run.resources and run.metric not in runs:
            runs[run.metric] = run
    missing = [f for f in FEATURES if f not in runs]
    if missing:
        raise ValidationError(f"PEM out of fold needs finished runs of {', '.join(missing)} on this study first")
    scale = next((c["scale"] for c in study_criteria(study=study) if c["slug"] == criterion), None)
    if scale is None:
        raise ValidationError({"criterion": f"the study has no criterion {criterion!r}"})
    frame = judgments_frame(study=study)
    frame = frame.loc[(frame["criterion"] == criterion) & ~frame["is_control"].astype(bool)]
    if frame.empty:
        raise ValidationError(f"study {study.name!r} has no judgments on {criterion!r}; PEM trains on them")
    human = frame.groupby("item")["score"].mean()

    columns = [metric_scores_frame(run=runs[f]).set_index("item") for f in FEATURES]
    items = columns[0].index
    x = np.column_stack([c["score"].reindex(items).to_numpy(dtype=float) for c in columns])
    y = human.reindex(items).to_numpy(dtype=float)
    grid = dict(param_grid or META_EVAL_GRID)
    try:
        oof = pem_out_of_fold(
            x,
            y,
            columns[0]["original"].to_numpy(),
            folds=folds,
            param_grid=grid,
            target_range=(float(scale.get("min", 1)), float(scale.get("max", 5))),
        )
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    signature = (
        f"metric:pem-oof|folds:{folds}|criterion:{criterion}|grid:{json.dumps(grid, sort_keys=True)}"
        f"|data:{oof.digest}|" + "|".join(f"feature:{runs[f].signature}" for f in FEATURES)
    )
    controls = set(SystemKind.control_kinds())
    now = timezone.now()
    with transaction.atomic():
        run = MetricRun(
            study=study,
            metric="pem",
            params={},
            resources={},
            higher_is_better=True,
            n=len(items),
            chunk_size=max(len(items), 1),
            created_by=created_by,
            status=JobStatus.SUCCEEDED,
            phase="done",
            signature=signature,
            progress_total=1,
            progress_done=1,
            started_at=now,
            finished_at=now,
        )
        run.full_clean()
        run.save()
        MetricScore.objects.bulk_create(
            [
                MetricScore(
                    run=run,
                    candidate_id=int(item),
                    score=MetricScore.clean_score(s),
                    stats=[float(s), 1.0] if math.isfinite(s) else [0.0, 0.0],
                    created_at=now,
                    updated_at=now,
                )
                for item, s in zip(items, oof.scores)
            ],
            batch_size=1000,
        )
        kinds = dict(Candidate.objects.filter(original__study=study).values_list("pk", "system__kind"))
        genuine = np.asarray([kinds.get(int(i)) not in controls for i in items])
        finite = np.isfinite(oof.scores)
        per_system = []
        systems = columns[0]["system"].to_numpy()
        for name in sorted(set(systems.tolist())):
            mask = (systems == name) & finite
            per_system.append(
                {
                    "system": name,
                    "is_control": bool(not genuine[systems == name][0]),
                    "n": int((systems == name).sum()),
                    "mean": finite_or_none(oof.scores[mask].mean()) if mask.any() else None,
                    "corpus": None,
                }
            )
        use = finite & genuine
        run_update(
            run.pk,
            corpus_score=finite_or_none(oof.scores[use].mean()) if use.any() else None,
            corpus_n=int(use.sum()),
            system_scores=per_system,
        )
    return MetricRun.objects.get(pk=run.pk)
