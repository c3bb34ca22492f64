"""The researcher's data operations: pairs, systems, settings (k, pre-fill), handing pairs out, exports."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.alignment.services.assignments import alignment_config_update, assignments_create
from annotation.alignment.services.pairs import pairs_import_file
from annotation.alignment.services.systems import system_alignments_import
from annotation.importing.reading import StudyImportError
from annotation.web import get_managed_study

from .. import exports, selectors
from ..enums import ALIGNMENT_FORMATS
from ..models import AlignmentSystem
from ._shared import (
    AlignmentErrorSerializer,
    AlignmentImportErrorSerializer,
    import_error_response,
    upload_bytes,
    validation_error_response,
)


class AlignmentPairOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    pair_id = serializers.CharField(source="external_id")
    group_id = serializers.CharField(source="group.external_id")
    position = serializers.IntegerField()
    sentence1 = serializers.CharField(source="text1")
    sentence2 = serializers.CharField(source="text2")
    tokens1 = serializers.ListField(child=serializers.CharField())
    tokens2 = serializers.ListField(child=serializers.CharField())


class AlignmentPairListApi(APIView):
    @extend_schema(
        responses=AlignmentPairOutputSerializer(many=True), summary="The study's alignment pairs in task order"
    )
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        return Response(AlignmentPairOutputSerializer(selectors.pairs_for_study(study=study), many=True).data)


class AlignmentPairsImportOutputSerializer(serializers.Serializer):
    pairs_added = serializers.IntegerField()
    groups_added = serializers.IntegerField()
    replaced = serializers.BooleanField()
    format = serializers.CharField()


class AlignmentPairsImportApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    class AlignmentPairsImportInputSerializer(serializers.Serializer):
        file = serializers.FileField()
        format = serializers.ChoiceField(choices=["csv", "tsv", "jsonl"], required=False)
        pretokenized = serializers.BooleanField(required=False, default=False)
        replace = serializers.BooleanField(required=False, default=False)

    @extend_schema(
        request={"multipart/form-data": AlignmentPairsImportInputSerializer},
        responses={201: AlignmentPairsImportOutputSerializer, 400: AlignmentImportErrorSerializer},
        summary="Import alignment pairs or groups (all or nothing)",
        description="CSV/TSV with sentence1, sentence2 and optional pair_id, group_id; or JSONL of pairs or of "
        "groups {group_id, key, others}. Errors name the line and column; nothing is written.",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = self.AlignmentPairsImportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        try:
            summary = pairs_import_file(
                study=study,
                data=upload_bytes(upload),
                filename=upload.name,
                fmt=data.validated_data.get("format"),
                pretokenized=data.validated_data["pretokenized"],
                replace=data.validated_data["replace"],
            )
        except StudyImportError as exc:
            return import_error_response(exc)
        return Response(AlignmentPairsImportOutputSerializer(summary).data, status=status.HTTP_201_CREATED)


class AlignmentSystemOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    description = serializers.CharField()
    n_alignments = serializers.IntegerField()


class AlignmentSystemListApi(APIView):
    @extend_schema(responses=AlignmentSystemOutputSerializer(many=True), summary="The study's alignment systems")
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        return Response(AlignmentSystemOutputSerializer(selectors.systems_for_study(study=study), many=True).data)


class AlignmentSystemImportApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    class AlignmentSystemImportInputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        file = serializers.FileField()
        # A CharField, not a ChoiceField: another "format" enum (study imports) would collide in the schema.
        format = serializers.CharField(help_text="pharaoh, naacl, json, jsonl or csv")
        replace = serializers.BooleanField(required=False, default=False)

        def validate_format(self, value):
            if value not in ALIGNMENT_FORMATS:
                raise serializers.ValidationError(f"use one of {', '.join(ALIGNMENT_FORMATS)}")
            return value

    @extend_schema(
        request={"multipart/form-data": AlignmentSystemImportInputSerializer},
        responses={201: AlignmentSystemOutputSerializer, 400: AlignmentImportErrorSerializer},
        summary="Import an external aligner's alignments (Pharaoh, NAACL, JSON, JSONL or CSV)",
        description="Alignment k belongs to the study's k-th pair (task order). All or nothing; errors name the line.",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = self.AlignmentSystemImportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        try:
            system = system_alignments_import(
                study=study,
                name=data.validated_data["name"],
                data=upload_bytes(upload),
                filename=upload.name,
                fmt=data.validated_data["format"],
                replace=data.validated_data["replace"],
            )
        except StudyImportError as exc:
            return import_error_response(exc)
        system = selectors.systems_for_study(study=study).get(pk=system.pk)
        return Response(AlignmentSystemOutputSerializer(system).data, status=status.HTTP_201_CREATED)


class AlignmentConfigOutputSerializer(serializers.Serializer):
    annotators_per_pair = serializers.IntegerField()
    prefill_system = serializers.CharField(source="prefill_system.name", allow_null=True, default=None)


class AlignmentConfigDetailApi(APIView):
    @extend_schema(responses=AlignmentConfigOutputSerializer, summary="The study's alignment settings")
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        return Response(AlignmentConfigOutputSerializer(selectors.alignment_config_get(study=study)).data)


class AlignmentConfigUpdateApi(APIView):
    class AlignmentConfigUpdateInputSerializer(serializers.Serializer):
        annotators_per_pair = serializers.IntegerField(min_value=1, max_value=20, required=False)
        prefill_system = serializers.CharField(
            required=False, allow_blank=True, allow_null=True, help_text="A system name; empty or null for no pre-fill."
        )

    @extend_schema(
        request=AlignmentConfigUpdateInputSerializer,
        responses={200: AlignmentConfigOutputSerializer, 400: AlignmentErrorSerializer},
        summary="Change k (annotators per pair) and the pre-fill system",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = self.AlignmentConfigUpdateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        kwargs = {"annotators_per_pair": data.validated_data.get("annotators_per_pair")}
        if "prefill_system" in data.validated_data:
            name = data.validated_data["prefill_system"]
            if name:
                system = AlignmentSystem.objects.filter(study=study, name=name).first()
                if system is None:
                    return Response({"detail": f"no system '{name}' in this study"}, status=status.HTTP_400_BAD_REQUEST)
                kwargs["prefill_system"] = system
            else:
                kwargs["clear_prefill"] = True
        try:
            config = alignment_config_update(study=study, **kwargs)
        except DjangoValidationError as exc:
            return validation_error_response(exc)
        return Response(AlignmentConfigOutputSerializer(config).data)


class AlignmentAssignOutputSerializer(serializers.Serializer):
    created = serializers.IntegerField()
    pairs_short = serializers.IntegerField()
    annotators_per_pair = serializers.IntegerField()
    annotators = serializers.IntegerField()


class AlignmentAssignApi(APIView):
    @extend_schema(
        request=None,
        responses={200: AlignmentAssignOutputSerializer, 400: AlignmentErrorSerializer},
        summary="Give every pair up to k of the study's annotators (idempotent)",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        try:
            result = assignments_create(study=study)
        except DjangoValidationError as exc:
            return validation_error_response(exc)
        return Response(AlignmentAssignOutputSerializer(result).data)


class AlignmentExportApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("source", str, description="gold, system:<id> or annotator:<user id>", default="gold"),
            # Not "format": DRF reads ?format= to choose a renderer.
            OpenApiParameter("file_format", str, enum=list(ALIGNMENT_FORMATS), default="pharaoh"),
        ],
        responses={(200, "text/plain"): OpenApiTypes.STR, 400: AlignmentErrorSerializer},
        summary="Download alignments of every pair in one format",
    )
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        try:
            text, filename, ctype = exports.alignment_export(
                study=study,
                source=request.query_params.get("source", "gold"),
                fmt=request.query_params.get("file_format", "pharaoh"),
            )
        except exports.ExportError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        response = HttpResponse(text, content_type=ctype)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
