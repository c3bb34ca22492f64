"""The researcher's scoring runs: list, queue (a worker computes), poll."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.alignment.services.queueing import scoring_run_create
from annotation.importing.reading import StudyImportError
from annotation.web import get_managed_study
from config.parsers import SafeJSONParser

from .. import selectors
from ..enums import ScoringKind
from ..models import AlignmentSystem, ScoringRun
from ._shared import AlignmentImportErrorSerializer, import_error_response, upload_bytes


class AlignmentScoringRunOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # the API's documented field; DRF's stubs type Field.label as its caption
    status = serializers.CharField()
    phase = serializers.CharField()
    percent = serializers.IntegerField()
    parameters = serializers.JSONField()
    signature = serializers.CharField()
    error = serializers.CharField()
    results = serializers.JSONField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class AlignmentScoringRunListApi(APIView):
    @extend_schema(responses=AlignmentScoringRunOutputSerializer(many=True), summary="The study's recent scoring runs")
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        return Response(
            AlignmentScoringRunOutputSerializer(selectors.scoring_runs_for_study(study=study), many=True).data
        )


class AlignmentScoringRunCreateApi(APIView):
    parser_classes = [MultiPartParser, FormParser, SafeJSONParser]

    class AlignmentScoringRunCreateInputSerializer(serializers.Serializer):
        kind = serializers.ChoiceField(choices=ScoringKind.choices)
        system = serializers.CharField(required=False, help_text="The system's name (kind system).")
        table = serializers.FileField(
            required=False, help_text="phrase<TAB>paraphrase[<TAB>probability] (kind paraphrases)."
        )
        max_len = serializers.IntegerField(min_value=1, max_value=10, default=5)
        min_prob = serializers.FloatField(min_value=0.0, max_value=1.0, default=0.0)
        use_possible = serializers.BooleanField(default=True)

    @extend_schema(
        request={"multipart/form-data": AlignmentScoringRunCreateInputSerializer},
        responses={202: AlignmentScoringRunOutputSerializer, 400: AlignmentImportErrorSerializer},
        summary="Queue a scoring run (a worker computes it; poll the run)",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = self.AlignmentScoringRunCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        kwargs = {"max_len": v["max_len"], "min_prob": v["min_prob"], "use_possible": v["use_possible"]}
        if v["kind"] == ScoringKind.SYSTEM:
            system = AlignmentSystem.objects.filter(study=study, name=v.get("system", "")).first()
            if system is None:
                return Response(
                    {"detail": f"no system '{v.get('system', '')}' in this study", "errors": []},
                    status=status.HTTP_400_BAD_REQUEST,
                )
            kwargs["system"] = system
        if v["kind"] == ScoringKind.PARAPHRASES and v.get("table") is not None:
            kwargs["table_data"] = upload_bytes(v["table"])
            kwargs["table_filename"] = v["table"].name
        try:
            run = scoring_run_create(study=study, user=request.user, kind=v["kind"], **kwargs)
        except StudyImportError as exc:
            return import_error_response(exc)
        except DjangoValidationError as exc:
            return Response({"detail": "; ".join(exc.messages), "errors": []}, status=status.HTTP_400_BAD_REQUEST)
        return Response(AlignmentScoringRunOutputSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class AlignmentScoringRunDetailApi(APIView):
    @extend_schema(responses=AlignmentScoringRunOutputSerializer, summary="Progress and results of a scoring run")
    def get(self, request, study_id: int, run_id: int):
        study = get_managed_study(request, study_id)
        run = get_object_or_404(ScoringRun, pk=run_id, study=study)
        return Response(AlignmentScoringRunOutputSerializer(run).data)
