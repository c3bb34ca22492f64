"""PEM models as people ask for them: queue the training of one on a study's judgments (the
worker's side is :mod:`.pem_training`) and run a trained one on a study.

The trained model file becomes a ``pem_model`` resource (:mod:`.resources`) that ``pem``
runs on any study can use.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.models import Study
from config.jobs.enums import JobStatus
from config.jobs.services import job_enqueue

from ..models import MetricResource, MetricRun, PemModel
from ..tasks import pem_model_train_task
from .runs import metric_run_create

#: Resources of the PEM feature metrics that a training may name (others are refused).
PEM_FEATURE_RESOURCES = ("phrase_table", "lm")


def pem_model_create(
    *,
    study: Study,
    name: str,
    created_by: User | None,
    feature_resources: Mapping[str, int] | None = None,
    test_share: float = 0.2,
    seed: int = 0,
    enqueue: bool = True,
) -> PemModel:
    """Queue the training of a PEM model on ``study``'s judgments.

    ``feature_resources`` maps ``phrase_table`` and/or ``lm`` to
    :class:`MetricResource` ids (absent ones: the feature metrics' defaults);
    the caller checks the user may use them. Raises :class:`ValidationError`
    when the study has no overall judgments yet or an argument is bad.
    """
    from ..selectors import pem_training_targets

    feature_resources = {str(k): int(v) for k, v in (feature_resources or {}).items()}
    unknown = sorted(set(feature_resources) - set(PEM_FEATURE_RESOURCES))
    if unknown:
        raise ValidationError({"feature_resources": f"unknown PEM feature resource(s): {', '.join(unknown)}"})
    missing = sorted(
        set(feature_resources.values())
        - set(MetricResource.objects.filter(pk__in=feature_resources.values()).values_list("pk", flat=True))
    )
    if missing:
        raise ValidationError({"feature_resources": f"no resource #{missing[0]}"})
    if not 0 < test_share < 1:
        raise ValidationError({"test_share": "the test share must lie strictly between 0 and 1"})
    if pem_training_targets(study=study).empty:
        raise ValidationError(f"study {study.name!r} has no overall judgments yet; PEM trains on them")
    with transaction.atomic():
        model = PemModel(
            study=study,
            name=name.strip(),
            created_by=created_by,
            feature_resources=feature_resources,
            options={"test_share": float(test_share), "seed": int(seed)},
            phase="queued",
            progress_total=3,
        )
        model.full_clean()
        model.save()
        if enqueue:
            pk = model.pk
            transaction.on_commit(lambda: job_enqueue(pem_model_train_task, pk))
    return model


def pem_model_run_create(
    *, pem_model: PemModel, study: Study, created_by: User | None, enqueue: bool = True
) -> MetricRun:
    """A ``pem`` run on ``study`` with a trained model and the resources it was trained with."""
    if pem_model.status != JobStatus.SUCCEEDED or pem_model.resource_id is None:
        raise ValidationError("this PEM model has not finished training")
    resources = {"model": pem_model.resource_id, **pem_model.feature_resources}
    return metric_run_create(study=study, metric="pem", resources=resources, created_by=created_by, enqueue=enqueue)
