"""REST API for studies and imports: one view per operation, explicit serializers."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from config.parsers import read_upload

from . import selectors, services
from .importing import FORMATS, StudyImportError
from .models import ImportJob, Study


def get_managed_study(request, study_id: int) -> Study:
    """The study, if the requesting user is one of its researchers; 404/403 otherwise."""
    study = get_object_or_404(Study, pk=study_id)
    if not selectors.user_can_manage_study(study=study, user=request.user):
        raise PermissionDenied("Only this study's researchers may do this.")
    return study


class SystemCountSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    n_candidates = serializers.IntegerField()


class StudyOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    description = serializers.CharField()
    status = serializers.CharField()
    owner = serializers.CharField(source="owner.username")
    created_at = serializers.DateTimeField()


class StudyDetailOutputSerializer(StudyOutputSerializer):
    originals = serializers.IntegerField()
    candidates = serializers.IntegerField()
    systems = SystemCountSerializer(many=True)


class StudyListApi(APIView):
    @extend_schema(responses=StudyOutputSerializer(many=True), summary="Studies you manage")
    def get(self, request):
        studies = selectors.study_list_for_researcher(request.user)
        return Response(StudyOutputSerializer(studies, many=True).data)


class StudyCreateApi(APIView):
    class StudyCreateInputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        description = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema(request=StudyCreateInputSerializer, responses={201: StudyOutputSerializer}, summary="Create a study")
    def post(self, request):
        if not selectors.user_is_researcher(request.user):
            raise PermissionDenied("Only researchers may create studies.")
        data = self.StudyCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            study = services.study_create(owner=request.user, **data.validated_data)
        except (DjangoValidationError, IntegrityError) as exc:
            raise serializers.ValidationError({"name": getattr(exc, "messages", ["A study with this name exists."])})
        return Response(StudyOutputSerializer(study).data, status=status.HTTP_201_CREATED)


class StudyDetailApi(APIView):
    @extend_schema(responses=StudyDetailOutputSerializer, summary="A study with its counts per system")
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        counts = selectors.study_counts(study=study)
        payload = {f: getattr(study, f) for f in ("id", "name", "description", "status", "owner", "created_at")}
        payload |= {"originals": counts["originals"], "candidates": counts["candidates"], "systems": counts["per_system"]}
        return Response(StudyDetailOutputSerializer(payload).data)


class ImportJobOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    phase = serializers.CharField()
    percent = serializers.IntegerField()
    progress_done = serializers.IntegerField()
    progress_total = serializers.IntegerField()
    filename = serializers.CharField()
    format = serializers.CharField()
    row_count = serializers.IntegerField()
    summary = serializers.JSONField()
    error = serializers.CharField()


class ImportErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = serializers.ListField(child=serializers.DictField())


class StudyImportApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    class StudyImportInputSerializer(serializers.Serializer):
        file = serializers.FileField()
        format = serializers.ChoiceField(choices=FORMATS, required=False)
        replace = serializers.BooleanField(required=False, default=False)

    @extend_schema(
        request={"multipart/form-data": StudyImportInputSerializer},
        responses={201: ImportJobOutputSerializer, 202: ImportJobOutputSerializer, 400: ImportErrorSerializer},
        summary="Import originals and candidates (all or nothing)",
        description="Small files are imported at once (201). Large files are imported by a worker (202); "
        "poll the job. Errors name the file, line and column, and nothing is written.",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = self.StudyImportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        try:
            job = services.study_import_file(
                study=study, data=read_upload(upload, settings.PARAEVAL_IMPORT_MAX_BYTES, "PARAEVAL_IMPORT_MAX_BYTES"),
                filename=upload.name, fmt=data.validated_data.get("format"),
                replace=data.validated_data["replace"], user=request.user)
        except StudyImportError as exc:
            return Response({
                "detail": exc.describe(),
                "errors": [{"line": i.line, "column": i.column, "message": i.message} for i in exc.issues],
            }, status=status.HTTP_400_BAD_REQUEST)
        code = status.HTTP_201_CREATED if job.is_finished else status.HTTP_202_ACCEPTED
        return Response(_job_payload(job), status=code)


def _job_payload(job: ImportJob) -> dict:
    return ImportJobOutputSerializer({
        "id": job.pk, "status": job.status, "phase": job.phase, "percent": job.percent,
        "progress_done": job.progress_done, "progress_total": job.progress_total, "filename": job.filename,
        "format": job.format, "row_count": job.row_count, "summary": job.summary, "error": job.error,
    }).data


class ImportJobDetailApi(APIView):
    @extend_schema(responses=ImportJobOutputSerializer, summary="Progress and result of an import")
    def get(self, request, study_id: int, job_id: int):
        study = get_managed_study(request, study_id)
        job = get_object_or_404(ImportJob, pk=job_id, study=study)
        return Response(_job_payload(job))
