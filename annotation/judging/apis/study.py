"""The researcher's endpoints of a study's judging: the design, opening (with the
background job's progress), closing and progress. They need the study's researcher
role (403 otherwise)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.judging.selectors.progress import study_progress
from annotation.judging.services.design import design_get_or_create, design_update
from annotation.judging.services.opening import study_judging_close
from annotation.judging.services.queueing import study_judging_open_start
from annotation.web import get_managed_study
from config.jobs.enums import JobStatus
from metrics.core.controls import CONTROL_KINDS

from ..enums import EsaPrefill, JudgesMode
from ..errors import JudgingError
from ..models import OpenJob
from ..protocols.registry import protocol_choices
from ..web import TAG_RESEARCHER, judging_error, open_job_payload


class JudgingCriterionSerializer(serializers.Serializer):
    slug = serializers.CharField(max_length=40)
    name = serializers.CharField(max_length=60)
    help = serializers.CharField(max_length=600, allow_blank=True, required=False, default="")
    scale = serializers.JSONField(
        required=False,
        help_text='{"type": "points", "min": 1, "max": 5, "labels": [...]}, '
        '{"type": "slider", "min": 0, "max": 100, "anchors": {"low", "mid", "high"}} or '
        '{"type": "categorical", "categories": [...]}',
    )
    labels = serializers.ListField(
        child=serializers.CharField(max_length=60),
        required=False,
        write_only=True,
        help_text="Former shape: labels of a 1..k point scale (instead of scale).",
    )

    def validate(self, attrs):
        if "scale" not in attrs and "labels" not in attrs:
            raise serializers.ValidationError("give the criterion a scale")
        return attrs


class JudgingControlCountsSerializer(serializers.Serializer):
    identical = serializers.IntegerField(min_value=0, max_value=5)
    random = serializers.IntegerField(min_value=0, max_value=5)
    unigram = serializers.IntegerField(min_value=0, max_value=5)


class JudgingExpectedScoresSerializer(serializers.Serializer):
    """Per control kind: criterion → expected value on its scale (null: unknown)."""

    identical = serializers.DictField(child=serializers.JSONField(allow_null=True), required=False)
    random = serializers.DictField(child=serializers.JSONField(allow_null=True), required=False)
    unigram = serializers.DictField(child=serializers.JSONField(allow_null=True), required=False)


class JudgingDesignSerializer(serializers.Serializer):
    criteria = JudgingCriterionSerializer(many=True)
    judges_mode = serializers.ChoiceField(choices=JudgesMode.choices)
    judges_per_item = serializers.IntegerField(min_value=1)
    control_counts = JudgingControlCountsSerializer()
    expected_scores = JudgingExpectedScoresSerializer()
    seed = serializers.IntegerField(min_value=0)
    qc_alpha = serializers.FloatField(min_value=0.0001, max_value=0.5)
    show_context = serializers.BooleanField(required=False)
    protocol = serializers.ChoiceField(choices=protocol_choices(), required=False)
    comparison_per_criterion = serializers.BooleanField(required=False)
    pairs_per_original = serializers.IntegerField(min_value=1, allow_null=True, required=False)
    esa_categories = serializers.ListField(child=serializers.CharField(max_length=60), max_length=12, required=False)
    esa_prefill = serializers.ChoiceField(choices=EsaPrefill.choices, required=False)
    ranking_k = serializers.IntegerField(min_value=2, max_value=6, required=False)
    ranking_scores = serializers.BooleanField(required=False)
    frozen = serializers.BooleanField(read_only=True, source="is_frozen")
    opened_at = serializers.DateTimeField(read_only=True, allow_null=True)


class JudgingDesignApi(APIView):
    @extend_schema(tags=TAG_RESEARCHER, responses=JudgingDesignSerializer, summary="The study's judging design")
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        return Response(JudgingDesignSerializer(design_get_or_create(study=study)).data)


class JudgingDesignUpdateApi(APIView):
    @extend_schema(
        tags=TAG_RESEARCHER,
        request=JudgingDesignSerializer,
        responses={
            200: JudgingDesignSerializer,
            400: OpenApiResponse(description="invalid design"),
            409: OpenApiResponse(description="design frozen"),
        },
        summary="Change the judging design (partial)",
        description="Only the fields given change. Once the study is open, only `expected_scores` and `qc_alpha` may change.",
    )
    def patch(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = JudgingDesignSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        current = design_get_or_create(study=study)
        changes = {}
        for field, value in data.validated_data.items():
            # Nested objects merge into the current design, so a client can send
            # just {"expected_scores": {"identical": {"overall": 3}}}.
            if field == "criteria":
                value = [dict(c) for c in value]
            elif field == "control_counts":
                value = dict(current.control_counts) | {k: int(v) for k, v in value.items()}
            elif field == "expected_scores":
                value = {k: dict(current.expected_scores.get(k, {})) | dict(value.get(k, {})) for k in CONTROL_KINDS}
            changes[field] = value
        try:
            design = design_update(study=study, changes=changes)
        except JudgingError as exc:
            return judging_error(exc)
        return Response(JudgingDesignSerializer(design).data)


class JudgingOpenSummarySerializer(serializers.Serializer):
    controls_created = serializers.IntegerField()
    items = serializers.IntegerField()
    judges = serializers.IntegerField()
    assignment_items = serializers.IntegerField()


class JudgingOpenJobSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The opening job; poll GET open/<id>/ until it has finished.")
    status = serializers.ChoiceField(choices=["queued", "running", "succeeded", "failed"])
    phase = serializers.CharField()
    percent = serializers.IntegerField()
    done = serializers.IntegerField(help_text="Judges whose assignment is written.")
    total = serializers.IntegerField(help_text="Judges to assign.")
    error = serializers.CharField(help_text="Why it failed (nothing was opened), else empty.")
    summary = JudgingOpenSummarySerializer(allow_null=True, help_text="Once succeeded: what was built.")


class JudgingOpenApi(APIView):
    @extend_schema(
        tags=TAG_RESEARCHER,
        request=None,
        responses={
            201: JudgingOpenJobSerializer,
            202: JudgingOpenJobSerializer,
            409: OpenApiResponse(description="cannot open (the reason is in detail)"),
        },
        summary="Open the study: build controls and assignments",
        description="Small studies are opened at once (201, status succeeded, with the summary). Larger ones "
        "(more than PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS assignment items) are opened by a worker: "
        "202 with a queued job; poll GET open/<id>/ until its status is succeeded or failed. Judges "
        "see the study as not started until it has succeeded.",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        try:
            job = study_judging_open_start(study=study, user=request.user)
        except JudgingError as exc:
            return judging_error(exc)
        code = status.HTTP_201_CREATED if job.status == JobStatus.SUCCEEDED else status.HTTP_202_ACCEPTED
        return Response(JudgingOpenJobSerializer(open_job_payload(job)).data, status=code)


class JudgingOpenJobApi(APIView):
    @extend_schema(
        tags=TAG_RESEARCHER,
        responses={200: JudgingOpenJobSerializer, 404: OpenApiResponse(description="no such job")},
        summary="Progress and outcome of opening the study",
    )
    def get(self, request, study_id: int, open_job_id: int):
        study = get_managed_study(request, study_id)
        job = get_object_or_404(OpenJob, pk=open_job_id, study=study)
        return Response(JudgingOpenJobSerializer(open_job_payload(job)).data)


class JudgingStatusOutputSerializer(serializers.Serializer):
    status = serializers.CharField()


class JudgingCloseApi(APIView):
    @extend_schema(
        tags=TAG_RESEARCHER,
        request=None,
        responses={200: JudgingStatusOutputSerializer, 409: OpenApiResponse(description="not open")},
        summary="Close judging (no more judgments accepted)",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        try:
            study = study_judging_close(study=study)
        except JudgingError as exc:
            return judging_error(exc)
        return Response(JudgingStatusOutputSerializer({"status": study.status}).data)


class JudgingJudgeProgressSerializer(serializers.Serializer):
    judge = serializers.CharField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    percent = serializers.IntegerField()
    last_submitted_at = serializers.DateTimeField(allow_null=True)
    excluded = serializers.BooleanField()
    joined_late = serializers.BooleanField()


class JudgingSystemProgressSerializer(serializers.Serializer):
    system = serializers.CharField()
    kind = serializers.CharField()
    is_control = serializers.BooleanField()
    assigned = serializers.IntegerField()
    rated = serializers.IntegerField()


class JudgingProgressSerializer(serializers.Serializer):
    status = serializers.CharField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    judgments = serializers.IntegerField()
    revisions = serializers.IntegerField()
    judges = JudgingJudgeProgressSerializer(many=True)
    judges_without_assignment = serializers.ListField(child=serializers.CharField())
    systems = JudgingSystemProgressSerializer(many=True)


class JudgingProgressApi(APIView):
    @extend_schema(
        tags=TAG_RESEARCHER, responses=JudgingProgressSerializer, summary="Progress per judge and per system"
    )
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        return Response(JudgingProgressSerializer(study_progress(study=study)).data)
