"""ESA API: the judge's items (by opaque tokens), their spans and scores.

Same rules as the other protocols' APIs: a study the user does not judge is a 404; an item
carries only texts, spans, positions and tokens — never a system, a control flag or a
database id. Offsets are code points of the texts as sent, end exclusive.
"""

from __future__ import annotations

from dataclasses import asdict

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis import ImportErrorSerializer
from annotation.importing.reading import StudyImportError
from annotation.web import get_managed_study

from ...apis.protocol import (
    EntrySerializer,
    JudgeApiSpec,
    NextSerializer,
    SubmitInputSerializer,
    SubmitOutputSerializer,
    judge_api_views,
)
from ...models import JudgingDesign
from ...web import TAG_RESEARCHER
from . import services as esa
from .imports import esa_proposals_import_upload
from .unit import ESA


class EsaSpanSerializer(serializers.Serializer):
    side = serializers.ChoiceField(choices=["candidate", "original"])
    start = serializers.IntegerField(help_text="Code point offset of the first character.")
    end = serializers.IntegerField(help_text="Code point offset after the last character (end exclusive).")
    severity = serializers.ChoiceField(choices=["minor", "major"])
    category = serializers.CharField(allow_null=True, required=False)
    missing = serializers.BooleanField(required=False, help_text="The [missing] marker (start = end = 0).")
    proposed = serializers.BooleanField(required=False, help_text="A suggested span the judge kept.")


class EsaItemSerializer(EntrySerializer):
    original = serializers.CharField()
    candidate = serializers.CharField()
    spans = EsaSpanSerializer(many=True, help_text="Your latest spans, else the suggested ones (proposed: true).")
    score = serializers.FloatField(allow_null=True, help_text="Your latest score, if you annotated it before.")


class EsaNextSerializer(NextSerializer):
    categories = serializers.ListField(child=serializers.CharField())
    item = EsaItemSerializer(allow_null=True)


class EsaSubmitInputSerializer(SubmitInputSerializer):
    item = serializers.CharField(max_length=64, help_text="The item's token.")
    spans = serializers.JSONField(help_text="A list of spans (side, start, end, severity, category, missing).")
    score = serializers.JSONField(help_text="0–100.")


class EsaSubmitOutputSerializer(SubmitOutputSerializer):
    item = serializers.CharField()
    spans = EsaSpanSerializer(many=True)
    score = serializers.FloatField()


EsaNextItemApi, EsaItemDetailApi, EsaSubmitApi = judge_api_views(
    JudgeApiSpec(
        unit=ESA,
        not_protocol="This study is not an error span annotation study.",
        token_field="item",
        entry_serializer=EsaItemSerializer,
        next_serializer=EsaNextSerializer,
        submit_input=EsaSubmitInputSerializer,
        submit_output=EsaSubmitOutputSerializer,
        answer_sent=lambda v: {"spans": v["spans"], "score": v["score"]},
        answer=lambda study, judge, token, result: {"spans": result.judgment.spans, "score": result.judgment.score},
        next_extra=lambda study: {"categories": esa.categories_allowed(JudgingDesign.objects.get(study=study))},
        words={
            "wrong_study": "study not open or not ESA",
            "next": "Your next item to annotate with error spans (the resume point)",
            "detail": "One item of your assignment (to revise your spans or score)",
            "submit": "Submit (or revise) your error spans and 0–100 score for an item",
            "submit_description": "Idempotent on `key`. Offsets are code points, end exclusive; a span must "
            "start and end between whole characters (grapheme clusters).",
            "bad_request": "invalid spans, score or stamp",
            "not_yours": "not your item",
        },
    )
)


# --- the researcher's side --------------------------------------------------------------


class EsaProposalSummarySerializer(serializers.Serializer):
    candidates = serializers.IntegerField(help_text="Candidates with proposals in the file.")
    spans = serializers.IntegerField()
    replaced = serializers.IntegerField(help_text="Candidates whose earlier proposals the file replaced.")


class EsaProposalsImportApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    class EsaProposalsInputSerializer(serializers.Serializer):
        file = serializers.FileField()

    @extend_schema(
        tags=TAG_RESEARCHER,
        request={"multipart/form-data": EsaProposalsInputSerializer},
        responses={201: EsaProposalSummarySerializer, 400: ImportErrorSerializer},
        summary="Import the proposed (pre-filled) spans of an ESA study (all or nothing)",
        description="JSON Lines, one candidate per line keyed by original_id and system as the ESA export keys "
        "it, its proposals in error_spans (code-point offsets, end exclusive). Only for a design that "
        "pre-fills from an imported file, before opening; a new file replaces the earlier one. Errors "
        "name the file, line and column, and nothing is written.",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = self.EsaProposalsInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        try:
            summary = esa_proposals_import_upload(study=study, upload=upload)
        except StudyImportError as exc:
            return Response(
                {
                    "detail": exc.describe(),
                    "errors": [{"line": i.line, "column": i.column, "message": i.message} for i in exc.issues],
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        return Response(EsaProposalSummarySerializer(asdict(summary)).data, status=status.HTTP_201_CREATED)
