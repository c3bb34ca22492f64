"""The researcher's endpoints on the judgments: judge QC, excluding and re-including
judges, the CSV exports and importing judgments collected elsewhere."""

from __future__ import annotations

import json
import math
from dataclasses import asdict

from django.contrib.auth.models import User
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis import ImportErrorSerializer, ImportJobOutputSerializer, import_job_payload
from annotation.importing.reading import FORMATS, StudyImportError
from annotation.judging.selectors.design import design_for_study
from annotation.judging.selectors.export_rows import export_tidy_rows, export_wide_rows
from annotation.judging.selectors.qc import judge_qc, judgments_fingerprint
from annotation.judging.services.exclusions import judge_exclusion_set
from annotation.judging.services.queueing import judgments_import_start
from annotation.models import ImportJob
from annotation.web import csv_response, get_managed_study

from ..enums import ImportMode
from ..errors import JudgingError
from ..web import TAG_RESEARCHER, export_filename, judging_error


class JudgingControlTestSerializer(serializers.Serializer):
    name = serializers.CharField()
    criterion = serializers.CharField()
    control_kinds = serializers.ListField(child=serializers.CharField())
    statistic = serializers.FloatField(allow_null=True)
    pvalue = serializers.FloatField(allow_null=True)
    n_control = serializers.IntegerField()
    n_genuine = serializers.IntegerField()
    passed = serializers.BooleanField(allow_null=True)


class JudgingZBasisSerializer(serializers.Serializer):
    n = serializers.IntegerField(help_text="The judge's genuine scores on the criterion.")
    mu = serializers.FloatField(help_text="Their mean.")
    sigma = serializers.FloatField(
        allow_null=True, help_text="Their sample standard deviation (n − 1); null when n < 2."
    )
    defined = serializers.BooleanField(help_text="Whether the judge's z-scores are defined (n ≥ 2 and σ > 0).")


class JudgingJudgeQCSerializer(serializers.Serializer):
    judge = serializers.CharField()
    excluded = serializers.BooleanField()
    screened_out = serializers.CharField(
        allow_null=True,
        required=False,
        help_text="The screening rule that screened the judge out (training, attention, qc), or null.",
    )
    rated = serializers.BooleanField(help_text="False for a judge who has rated nothing (no statistics).")
    passed = serializers.BooleanField(allow_null=True)
    flags = serializers.ListField(child=serializers.CharField())
    n_items = serializers.IntegerField()
    n_controls = serializers.IntegerField()
    control_mad = serializers.DictField(child=serializers.FloatField())
    tests = JudgingControlTestSerializer(many=True)
    median_seconds = serializers.FloatField(allow_null=True)
    straightlining = serializers.DictField(child=serializers.FloatField())
    z_basis = serializers.DictField(
        child=JudgingZBasisSerializer(allow_null=True),
        required=False,
        help_text="Per 0–100 criterion: the basis of the judge's WMT z-scores (mean and sample SD of their genuine "
        "items, controls left out), or null without a genuine score there.",
    )


class JudgingQCOutputSerializer(serializers.Serializer):
    alpha = serializers.FloatField()
    fingerprint = serializers.CharField()
    judges = JudgingJudgeQCSerializer(many=True)


class JudgingQCApi(APIView):
    @extend_schema(tags=TAG_RESEARCHER, responses=JudgingQCOutputSerializer, summary="Judge quality control")
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        design = design_for_study(study=study)
        judges = []
        for row in judge_qc(study=study):
            qc = row["qc"]
            base = {
                "judge": row["judge"],
                "excluded": row["excluded"],
                "screened_out": row["screened_out"][0] if row.get("screened_out") else None,
                "z_basis": {
                    c: None
                    if b is None
                    else {
                        "n": b.n,
                        "mu": b.mu,
                        "defined": b.defined,
                        "sigma": b.sigma if math.isfinite(b.sigma) else None,
                    }
                    for c, b in (row.get("z_basis") or {}).items()
                },
            }
            if qc is None:
                judges.append(
                    base
                    | {
                        "rated": False,
                        "passed": None,
                        "flags": [],
                        "n_items": 0,
                        "n_controls": 0,
                        "control_mad": {},
                        "tests": [],
                        "median_seconds": None,
                        "straightlining": {},
                    }
                )
            else:
                d = qc.to_dict()
                judges.append(
                    base
                    | {
                        "rated": True,
                        "passed": d["passed"],
                        "flags": d["flags"],
                        "n_items": d["n_items"],
                        "n_controls": d["n_controls"],
                        "control_mad": d["control_mad"],
                        "tests": d["tests"],
                        "median_seconds": d["median_seconds"],
                        "straightlining": d["straightlining"],
                    }
                )
        return Response(
            JudgingQCOutputSerializer(
                {
                    "alpha": design.qc_alpha if design else 0.05,
                    "fingerprint": judgments_fingerprint(study=study),
                    "judges": judges,
                }
            ).data
        )


class JudgingExclusionInputSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class JudgingExclusionOutputSerializer(serializers.Serializer):
    judge = serializers.CharField()
    excluded = serializers.BooleanField()
    changed = serializers.BooleanField(help_text="False when the judge was already in that state.")
    fingerprint = serializers.CharField()


class _JudgeExclusionBase(APIView):
    excluded: bool

    def post(self, request, study_id: int, username: str):
        study = get_managed_study(request, study_id)
        judge = get_object_or_404(User, username=username)
        data = JudgingExclusionInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            row = judge_exclusion_set(
                study=study,
                judge=judge,
                excluded=self.excluded,
                decided_by=request.user,
                reason=data.validated_data["reason"],
            )
        except JudgingError as exc:
            return judging_error(exc)
        return Response(
            JudgingExclusionOutputSerializer(
                {
                    "judge": judge.username,
                    "excluded": self.excluded,
                    "changed": row is not None,
                    "fingerprint": judgments_fingerprint(study=study),
                }
            ).data
        )


class JudgingJudgeExcludeApi(_JudgeExclusionBase):
    excluded = True

    @extend_schema(
        tags=TAG_RESEARCHER,
        request=JudgingExclusionInputSerializer,
        responses=JudgingExclusionOutputSerializer,
        summary="Exclude a judge from every statistic of the study (recorded, reversible)",
    )
    def post(self, request, study_id: int, username: str):
        return super().post(request, study_id, username)


class JudgingJudgeIncludeApi(_JudgeExclusionBase):
    excluded = False

    @extend_schema(
        tags=TAG_RESEARCHER,
        request=JudgingExclusionInputSerializer,
        responses=JudgingExclusionOutputSerializer,
        summary="Include an excluded judge again",
    )
    def post(self, request, study_id: int, username: str):
        return super().post(request, study_id, username)


class CSVRenderer(BaseRenderer):
    """Lets clients ask for ``Accept: text/csv``; the export views stream the CSV themselves
    and only error bodies (dicts) pass through here."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, (bytes, str)):
            return data
        return json.dumps(data)


class JudgingExportTidyApi(APIView):
    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(
        tags=TAG_RESEARCHER,
        responses={(200, "text/csv"): OpenApiTypes.STR},
        summary="Judgments as tidy CSV (one row per judge × item × criterion)",
    )
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        return csv_response(export_tidy_rows(study=study), export_filename(study, "tidy"))


class JudgingExportWideApi(APIView):
    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(
        tags=TAG_RESEARCHER,
        responses={(200, "text/csv"): OpenApiTypes.STR},
        summary="Judgments as wide CSV (one row per item, a column per judge × criterion)",
    )
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        return csv_response(export_wide_rows(study=study), export_filename(study, "wide"))


class JudgingImportSummarySerializer(serializers.Serializer):
    rows = serializers.IntegerField()
    judgments = serializers.IntegerField()
    revisions = serializers.IntegerField(help_text="Judgments that revise an earlier one of the same judge and item.")
    judges_created = serializers.IntegerField(help_text="Imported participants created for unknown judge names.")
    judges = serializers.IntegerField()
    candidates_created = serializers.IntegerField()
    systems_created = serializers.IntegerField()
    mode = serializers.CharField(help_text="The import mode used: refuse, add or replace.")
    skipped = serializers.IntegerField(help_text="Values left out because the judge already had one (mode add).")
    replaced = serializers.IntegerField(help_text="Values that replaced an earlier latest value (mode replace).")


class JudgingImportApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    class InputSerializer(serializers.Serializer):
        file = serializers.FileField()
        format = serializers.ChoiceField(choices=FORMATS, required=False)
        mode = serializers.ChoiceField(
            choices=ImportMode.choices,
            required=False,
            default=ImportMode.REFUSE,
            help_text="Where a judge already has a value for an item and criterion: refuse the file (default), "
            "add only the new values, or replace (the file's value becomes the latest; history kept).",
        )

    @extend_schema(
        tags=TAG_RESEARCHER,
        request={"multipart/form-data": InputSerializer},
        responses={201: JudgingImportSummarySerializer, 202: ImportJobOutputSerializer, 400: ImportErrorSerializer},
        summary="Import judgments collected elsewhere (all or nothing)",
        description="Long format: judge, original_id, system (or systems, space-separated, or candidate text), "
        "criterion, value, optional seconds; values on the scales of the study's design. Errors name "
        "the file, line and column, and nothing is written. A small file is imported at once (201, the "
        "summary); a file of more lines than PARAEVAL_IMPORT_BACKGROUND_ROWS is imported by a worker (202, "
        "the job: poll /api/studies/<id>/imports/<job id>/ for its status, summary or errors).",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        try:
            summary = judgments_import_start(
                study=study,
                data=upload.read(),
                filename=upload.name,
                fmt=data.validated_data.get("format"),
                mode=data.validated_data["mode"],
                user=request.user,
            )
        except StudyImportError as exc:
            return Response(
                {
                    "detail": exc.describe(),
                    "errors": [{"line": i.line, "column": i.column, "message": i.message} for i in exc.issues],
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        if isinstance(summary, ImportJob):
            return Response(import_job_payload(summary), status=status.HTTP_202_ACCEPTED)
        return Response(JudgingImportSummarySerializer(asdict(summary)).data, status=status.HTTP_201_CREATED)
