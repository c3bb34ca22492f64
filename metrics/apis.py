"""REST API of metric runs: one view per operation, explicit serializers.

Serializer class names are unique across the project (drf-spectacular names
schema components after them).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.text import slugify
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.web import get_managed_study
from config.parsers import upload_size_check
from metrics.services.pem_models import pem_model_create
from metrics.services.resources import RESOURCE_MAX_BYTES, metric_resource_create
from metrics.services.runs import metric_run_cancel, metric_run_create, metric_run_retry

from . import selectors
from .enums import Against, ResourceKind
from .exports import run_export_csv, run_export_json
from .models import MetricRun


def _drf_error(exc: DjangoValidationError) -> ValidationError:
    if hasattr(exc, "message_dict"):
        return ValidationError({("detail" if k == "__all__" else k): v for k, v in exc.message_dict.items()})
    return ValidationError({"detail": exc.messages})


# --------------------------------------------------------------------------- catalog


class MetricParamInfoSerializer(serializers.Serializer):
    name = serializers.CharField()
    type = serializers.CharField()
    default = serializers.JSONField(allow_null=True)
    help = serializers.CharField()
    choices = serializers.ListField(child=serializers.JSONField(), allow_null=True)
    minimum = serializers.FloatField(allow_null=True)
    maximum = serializers.FloatField(allow_null=True)
    nullable = serializers.BooleanField()


class MetricResourceInfoSerializer(serializers.Serializer):
    name = serializers.CharField()
    help = serializers.CharField()
    has_default = serializers.BooleanField()


class MetricCardSerializer(serializers.Serializer):
    """The metric's card (metrics.core.cards.MetricCard)."""

    measures = serializers.CharField()
    direction = serializers.ChoiceField(choices=["higher", "lower", "none"])
    range = serializers.CharField()
    needs = serializers.CharField()
    reference = serializers.CharField()
    caveats = serializers.CharField(allow_blank=True)
    prepare = serializers.CharField(allow_blank=True)


class MetricInfoSerializer(serializers.Serializer):
    slug = serializers.CharField()
    description = serializers.CharField()
    card = MetricCardSerializer(allow_null=True)
    higher_is_better = serializers.BooleanField()
    unavailable = serializers.CharField(
        allow_null=True,
        help_text="why the metric cannot run here and the command that installs what it needs; null when it can",
    )
    params = MetricParamInfoSerializer(many=True)
    resources = MetricResourceInfoSerializer(many=True)


class MetricListApi(APIView):
    @extend_schema(responses=MetricInfoSerializer(many=True), summary="Registered metrics with their parameters")
    def get(self, request):
        return Response(MetricInfoSerializer(selectors.metric_catalog(), many=True).data)


# --------------------------------------------------------------------------- runs


class MetricSystemScoreSerializer(serializers.Serializer):
    system = serializers.CharField()
    is_control = serializers.BooleanField()
    n = serializers.IntegerField()
    mean = serializers.FloatField(allow_null=True)
    corpus = serializers.FloatField(allow_null=True)


class MetricRunOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    study = serializers.IntegerField(source="study_id")
    metric = serializers.CharField()
    params = serializers.JSONField()
    resources = serializers.DictField(child=serializers.IntegerField())
    against = serializers.CharField()
    status = serializers.CharField()
    phase = serializers.CharField()
    percent = serializers.IntegerField()
    chunks_done = serializers.IntegerField(source="progress_done")
    chunks_total = serializers.IntegerField(source="progress_total")
    chunk_size = serializers.IntegerField()
    cancel_requested = serializers.BooleanField()
    error = serializers.CharField()
    signature = serializers.CharField()
    higher_is_better = serializers.BooleanField()
    corpus_score = serializers.FloatField(allow_null=True)
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    confidence = serializers.FloatField()
    n_resamples = serializers.IntegerField()
    n = serializers.IntegerField()
    corpus_n = serializers.IntegerField()
    systems = MetricSystemScoreSerializer(many=True, source="system_scores")
    compute_seconds = serializers.FloatField()
    created_by = serializers.CharField(source="created_by.username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


def _get_run(request, study_id: int, run_id: int) -> MetricRun:
    study = get_managed_study(request, study_id)
    return get_object_or_404(MetricRun.objects.select_related("created_by"), pk=run_id, study=study)


class MetricRunListApi(APIView):
    @extend_schema(responses=MetricRunOutputSerializer(many=True), summary="A study's metric runs, newest first")
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        runs = selectors.metric_runs_for_study(study=study)
        return Response(MetricRunOutputSerializer(runs, many=True).data)


class MetricRunCreateApi(APIView):
    class MetricRunCreateInputSerializer(serializers.Serializer):
        metric = serializers.CharField(max_length=64)
        params = serializers.DictField(child=serializers.JSONField(allow_null=True), required=False, default=dict)
        against = serializers.ChoiceField(choices=Against.choices, required=False, allow_null=True, default=None)
        resources = serializers.DictField(child=serializers.IntegerField(), required=False, default=dict)
        chunk_size = serializers.IntegerField(
            min_value=1, max_value=100_000, required=False, allow_null=True, default=None
        )

    @extend_schema(
        request=MetricRunCreateInputSerializer,
        responses={201: MetricRunOutputSerializer},
        summary="Start a metric run over every candidate of the study",
        description="`params` may give any of the metric's parameters (see GET /api/metrics/); the others keep "
        "their defaults. `resources` maps the metric's resource names to uploaded resource ids. An identical run "
        "still queued or running is returned instead of a new one.",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = self.MetricRunCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        args = data.validated_data
        usable = set(selectors.metric_resources_for_user(user=request.user).values_list("pk", flat=True))
        for name, pk in args["resources"].items():
            if pk not in usable:
                raise ValidationError({"resources": [f"resource #{pk} ({name}) does not exist or is not yours to use"]})
        try:
            run = metric_run_create(
                study=study,
                metric=args["metric"],
                params=args["params"],
                against=args["against"],
                resources=args["resources"],
                chunk_size=args["chunk_size"],
                created_by=request.user,
            )
        except DjangoValidationError as exc:
            raise _drf_error(exc) from None
        return Response(MetricRunOutputSerializer(run).data, status=status.HTTP_201_CREATED)


class MetricRunDetailApi(APIView):
    @extend_schema(responses=MetricRunOutputSerializer, summary="One metric run: status, progress, corpus score")
    def get(self, request, study_id: int, run_id: int):
        return Response(MetricRunOutputSerializer(_get_run(request, study_id, run_id)).data)


class MetricRunCancelApi(APIView):
    @extend_schema(request=None, responses=MetricRunOutputSerializer, summary="Cancel a queued or running run")
    def post(self, request, study_id: int, run_id: int):
        run = metric_run_cancel(run=_get_run(request, study_id, run_id))
        return Response(MetricRunOutputSerializer(run).data)


class MetricRunRetryApi(APIView):
    @extend_schema(request=None, responses=MetricRunOutputSerializer, summary="Queue a failed or cancelled run again")
    def post(self, request, study_id: int, run_id: int):
        try:
            run = metric_run_retry(run=_get_run(request, study_id, run_id))
        except DjangoValidationError as exc:
            raise _drf_error(exc) from None
        return Response(MetricRunOutputSerializer(run).data)


class MetricScoreOutputSerializer(serializers.Serializer):
    item = serializers.CharField(source="candidate_id")
    original = serializers.CharField(source="candidate.original.external_id")
    system = serializers.CharField(source="candidate.system.name")
    is_control = serializers.BooleanField(source="candidate.system.is_control")
    score = serializers.FloatField(allow_null=True)
    stats = serializers.ListField(child=serializers.FloatField())


class MetricScorePageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = MetricScoreOutputSerializer(many=True)


class MetricScorePagination(PageNumberPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 5000


class MetricScoreListApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("system", OpenApiTypes.STR, description="only this system's candidates"),
            OpenApiParameter("page", OpenApiTypes.INT),
            OpenApiParameter("page_size", OpenApiTypes.INT),
        ],
        responses=MetricScorePageSerializer,
        summary="Per-candidate scores of a run (paginated)",
    )
    def get(self, request, study_id: int, run_id: int):
        run = _get_run(request, study_id, run_id)
        qs = selectors.metric_scores_page(run=run, system=request.query_params.get("system") or None)
        paginator = MetricScorePagination()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(MetricScoreOutputSerializer(page, many=True).data)


class MetricRunExportApi(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("export_format", OpenApiTypes.STR, enum=["csv", "json"], default="csv")],
        responses={(200, "text/csv"): OpenApiTypes.STR, (200, "application/json"): OpenApiTypes.OBJECT},
        summary="Export a run's scores as CSV or JSON",
        description="CSV text cells starting with =, +, -, @ (or a tab or carriage return) get a leading ' so "
        "that spreadsheets do not run them as formulas.",
    )
    def get(self, request, study_id: int, run_id: int):
        run = _get_run(request, study_id, run_id)
        fmt = request.query_params.get("export_format", "csv")
        stem = f"{slugify(run.study.name) or 'study'}-{run.metric}-run{run.pk}"
        response: HttpResponse
        if fmt == "json":
            response = Response(run_export_json(run=run))
        elif fmt == "csv":
            response = HttpResponse(run_export_csv(run=run), content_type="text/csv; charset=utf-8")
        else:
            raise NotFound("export_format must be csv or json")
        response["Content-Disposition"] = f'attachment; filename="{stem}.{fmt}"'
        return response


# --------------------------------------------------------------------------- resources


class MetricResourceOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    filename = serializers.CharField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    description = serializers.CharField()
    study = serializers.IntegerField(source="study_id", allow_null=True)
    owner = serializers.CharField(source="owner.username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()


class MetricResourceListApi(APIView):
    @extend_schema(responses=MetricResourceOutputSerializer(many=True), summary="Metric resources you may use")
    def get(self, request):
        return Response(
            MetricResourceOutputSerializer(selectors.metric_resources_for_user(user=request.user), many=True).data
        )


class MetricResourceUploadApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    class MetricResourceUploadInputSerializer(serializers.Serializer):
        file = serializers.FileField()
        kind = serializers.ChoiceField(choices=ResourceKind.choices)
        name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
        description = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema(
        request={"multipart/form-data": MetricResourceUploadInputSerializer},
        responses={201: MetricResourceOutputSerializer},
        summary="Upload a metric resource (phrase table, LM, vectors, PEM model) for a study",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = self.MetricResourceUploadInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload_size_check(data.validated_data["file"], RESOURCE_MAX_BYTES, "PARAEVAL_RESOURCE_MAX_BYTES")
        try:
            res = metric_resource_create(owner=request.user, study=study, **data.validated_data)
        except DjangoValidationError as exc:
            raise _drf_error(exc) from None
        return Response(MetricResourceOutputSerializer(res).data, status=status.HTTP_201_CREATED)


# --------------------------------------------------------------------------- PEM models


class PemModelOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    study = serializers.IntegerField(source="study_id")
    status = serializers.CharField()
    phase = serializers.CharField()
    error = serializers.CharField()
    resource = serializers.IntegerField(source="resource_id", allow_null=True)
    feature_resources = serializers.DictField(child=serializers.IntegerField())
    options = serializers.JSONField()
    signature = serializers.CharField()
    test_pearson = serializers.FloatField(allow_null=True)
    hyperparameters = serializers.JSONField()
    n_train = serializers.IntegerField()
    n_test = serializers.IntegerField()
    summary = serializers.JSONField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class PemModelListApi(APIView):
    @extend_schema(responses=PemModelOutputSerializer(many=True), summary="PEM models you may use")
    def get(self, request):
        return Response(PemModelOutputSerializer(selectors.pem_models_for_user(user=request.user), many=True).data)


class PemModelTrainApi(APIView):
    class PemModelTrainInputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        feature_resources = serializers.DictField(child=serializers.IntegerField(), required=False, default=dict)
        test_share = serializers.FloatField(min_value=0.05, max_value=0.5, required=False, default=0.2)
        seed = serializers.IntegerField(min_value=0, required=False, default=0)

    @extend_schema(
        request=PemModelTrainInputSerializer,
        responses={201: PemModelOutputSerializer},
        summary="Train a PEM model on the study's judgments (in a worker)",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = self.PemModelTrainInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        usable = set(selectors.metric_resources_for_user(user=request.user).values_list("pk", flat=True))
        for name, pk in data.validated_data["feature_resources"].items():
            if pk not in usable:
                raise ValidationError({"feature_resources": [f"resource #{pk} ({name}) is not yours to use"]})
        try:
            model = pem_model_create(study=study, created_by=request.user, **data.validated_data)
        except DjangoValidationError as exc:
            raise _drf_error(exc) from None
        return Response(PemModelOutputSerializer(model).data, status=status.HTTP_201_CREATED)
