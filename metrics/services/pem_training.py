"""Training a PEM model on a study's judgments: the worker's side of :func:`~.pem_models.pem_model_create`
(:func:`pem_model_train`, and :func:`pem_model_fail` to record why it failed). The trained model file
becomes a ``pem_model`` resource (:mod:`.resources`) that ``pem`` runs on any study can use."""

from __future__ import annotations

import logging

from django.core.files import File
from django.db import transaction
from django.utils import timezone

from annotation.models import Candidate
from config.jobs.enums import JobStatus
from metrics.core.base.params import MetricError
from metrics.core.stats.results import jsonable
from metrics.enums import ResourceKind
from metrics.models import PemModel
from metrics.services._shared import finite_or_none, resource_paths
from metrics.services.resources import metric_resource_create

logger = logging.getLogger(__name__)


def pem_model_fail(*, pem_model_id: int, error: str) -> None:
    """Record ``error`` and end the training as failed (a finished one is left alone)."""
    PemModel.objects.filter(pk=pem_model_id, status__in=[JobStatus.QUEUED, JobStatus.RUNNING]).update(
        status=JobStatus.FAILED,
        phase="failed",
        error=error[:10_000],
        finished_at=timezone.now(),
        updated_at=timezone.now(),
    )


def _pem_update(pem_model_id: int, **fields) -> None:
    PemModel.objects.filter(pk=pem_model_id).update(**fields, updated_at=timezone.now())


def pem_model_train(*, pem_model_id: int) -> PemModel:
    """Train a queued PEM model (the worker's side); a finished one is returned as is.

    Targets (``selectors.pem_training_targets``): the judges' mean overall
    score per candidate, controls at their fixed expected overall score.
    Features: ``metrics.core.pem.pem_features`` (pivot F1, LM fluency, target
    F1) with the chosen phrase table and LM. ``metrics.core.pem.pem_train``
    splits train/test by original and picks C, γ, ε by grouped
    cross-validation. The model file becomes a ``pem_model`` resource that
    ``pem`` runs on any study can use. Bad data (too few originals, …) fails
    the training with its message.
    """
    import tempfile
    from pathlib import Path

    from metrics.core.pem.metric import pem_features
    from metrics.core.pem.training import pem_train

    from ..selectors import pem_training_targets

    model = PemModel.objects.select_related("study", "created_by").get(pk=pem_model_id)
    if model.is_finished:
        return model
    _pem_update(
        pem_model_id,
        status=JobStatus.RUNNING,
        phase="features",
        progress_done=0,
        started_at=model.started_at or timezone.now(),
        error="",
    )
    try:
        targets = pem_training_targets(study=model.study)
        if targets.empty:
            raise ValueError("the study has no overall judgments")
        texts = {
            str(pk): (orig, cand)
            for pk, orig, cand in Candidate.objects.filter(pk__in=[int(i) for i in targets["item"]]).values_list(
                "pk", "original__text", "text"
            )
        }
        targets = targets[targets["item"].isin(texts)].reset_index(drop=True)
        paths = resource_paths(model.feature_resources)
        features, signatures = pem_features(
            [texts[i][0] for i in targets["item"]],
            [texts[i][1] for i in targets["item"]],
            phrase_table=paths.get("phrase_table"),
            lm=paths.get("lm"),
        )
        _pem_update(pem_model_id, phase="training", progress_done=1)
        trained = pem_train(
            features,
            targets["target"].to_numpy(dtype=float),
            targets["original"].to_numpy(dtype=str),
            test_fraction=float(model.options.get("test_share", 0.2)),
            seed=int(model.options.get("seed", 0)),
            feature_signatures=signatures,
        )
    except (MetricError, ValueError) as exc:
        pem_model_fail(pem_model_id=pem_model_id, error=str(exc))
        return PemModel.objects.get(pk=pem_model_id)
    except Exception as exc:
        logger.exception("PEM model %s: training failed", pem_model_id)
        pem_model_fail(pem_model_id=pem_model_id, error=f"{type(exc).__name__}: {exc}")
        return PemModel.objects.get(pk=pem_model_id)

    _pem_update(pem_model_id, phase="saving", progress_done=2)
    r = trained.test_pearson
    with tempfile.TemporaryDirectory() as tmp:
        path = trained.save(Path(tmp) / f"pem-model-{pem_model_id}.npz")
        with transaction.atomic():
            locked = PemModel.objects.select_for_update().get(pk=pem_model_id)
            if locked.is_finished:
                return locked
            with open(path, "rb") as fh:
                resource = metric_resource_create(
                    name=f"PEM model: {model.name}",
                    kind=ResourceKind.PEM_MODEL,
                    file=File(fh, name=path.name),
                    owner=model.created_by,
                    study=model.study,
                    description=f"Trained on study {model.study.name!r}; {trained.signature}",
                )
            _pem_update(
                pem_model_id,
                status=JobStatus.SUCCEEDED,
                phase="done",
                progress_done=3,
                finished_at=timezone.now(),
                resource=resource,
                signature=trained.signature,
                test_pearson=finite_or_none(r.statistic) if r is not None else None,
                hyperparameters={k: jsonable(v) for k, v in trained.best_params.items()},
                n_train=trained.n_train,
                n_test=trained.n_test,
                summary={
                    "cv_mse": finite_or_none(trained.cv_mse),
                    "test_pvalue": finite_or_none(r.pvalue) if r is not None and r.pvalue is not None else None,
                    "test_n": r.n if r is not None else 0,
                    "n_items": int(len(targets)),
                    "n_controls": int(targets["is_control"].sum()),
                    "n_originals": int(targets["original"].nunique()),
                    "feature_signatures": list(signatures),
                },
            )
    return PemModel.objects.get(pk=pem_model_id)
