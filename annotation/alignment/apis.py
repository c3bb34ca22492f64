# Over 400 lines: this session's feature work (protocols, screening, field studies, speed) landed here; splitting it along its seams is issue 17's remaining step, done once so code moves only once.
"""REST API of the alignment app: one view per operation, explicit serializers.

Researchers (of the study) import pairs and system alignments, set k, hand out
pairs, export, and run scoring; annotators read their assignments, autosave
drafts and submit. The grid page itself uses the draft and submit endpoints.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.utils import translation
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis import get_managed_study
from annotation.importing import StudyImportError
from config.parsers import SafeJSONParser, read_upload
from annotation.selectors import ROLE_CONFLICT_HOLD_MESSAGE, user_role_conflict

from . import exports, selectors, services
from .enums import ALIGNMENT_FORMATS, ScoringKind
from .models import AlignmentAssignment, AlignmentSystem, ScoringRun


def _read(upload) -> bytes:
    """An uploaded file's bytes, refused (413) from its declared size before reading."""
    return read_upload(upload, settings.PARAEVAL_IMPORT_MAX_BYTES, "PARAEVAL_IMPORT_MAX_BYTES")


def _link_list(**kwargs):
    return serializers.ListField(child=serializers.ListField(child=serializers.IntegerField(min_value=0), min_length=2, max_length=2), **kwargs)


class AlignmentImportErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = serializers.ListField(child=serializers.DictField())


class AlignmentErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()


def _import_error(exc: StudyImportError) -> Response:
    return Response({
        "detail": exc.describe(),
        "errors": [{"line": i.line, "column": i.column, "message": i.message} for i in exc.issues],
    }, status=status.HTTP_400_BAD_REQUEST)


def _validation_error(exc: DjangoValidationError) -> Response:
    return Response({"detail": "; ".join(exc.messages)}, status=status.HTTP_400_BAD_REQUEST)


# ============================================================================ researchers: data

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
    @extend_schema(responses=AlignmentPairOutputSerializer(many=True), summary="The study's alignment pairs in task order")
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
            summary = services.pairs_import_file(
                study=study, data=_read(upload), filename=upload.name, fmt=data.validated_data.get("format"),
                pretokenized=data.validated_data["pretokenized"], replace=data.validated_data["replace"])
        except StudyImportError as exc:
            return _import_error(exc)
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
            system = services.system_alignments_import(
                study=study, name=data.validated_data["name"], data=_read(upload), filename=upload.name,
                fmt=data.validated_data["format"], replace=data.validated_data["replace"])
        except StudyImportError as exc:
            return _import_error(exc)
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
        prefill_system = serializers.CharField(required=False, allow_blank=True, allow_null=True,
                                               help_text="A system name; empty or null for no pre-fill.")

    @extend_schema(request=AlignmentConfigUpdateInputSerializer, responses={200: AlignmentConfigOutputSerializer,
                                                                            400: AlignmentErrorSerializer},
                   summary="Change k (annotators per pair) and the pre-fill system")
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
            config = services.alignment_config_update(study=study, **kwargs)
        except DjangoValidationError as exc:
            return _validation_error(exc)
        return Response(AlignmentConfigOutputSerializer(config).data)


class AlignmentAssignOutputSerializer(serializers.Serializer):
    created = serializers.IntegerField()
    pairs_short = serializers.IntegerField()
    annotators_per_pair = serializers.IntegerField()
    annotators = serializers.IntegerField()


class AlignmentAssignApi(APIView):
    @extend_schema(request=None, responses={200: AlignmentAssignOutputSerializer, 400: AlignmentErrorSerializer},
                   summary="Give every pair up to k of the study's annotators (idempotent)")
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        try:
            result = services.assignments_create(study=study)
        except DjangoValidationError as exc:
            return _validation_error(exc)
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
                study=study, source=request.query_params.get("source", "gold"),
                fmt=request.query_params.get("file_format", "pharaoh"))
        except exports.ExportError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        response = HttpResponse(text, content_type=ctype)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


# ============================================================================ researchers: scoring

class AlignmentScoringRunOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    label = serializers.CharField()
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
        return Response(AlignmentScoringRunOutputSerializer(selectors.scoring_runs_for_study(study=study), many=True).data)


class AlignmentScoringRunCreateApi(APIView):
    parser_classes = [MultiPartParser, FormParser, SafeJSONParser]

    class AlignmentScoringRunCreateInputSerializer(serializers.Serializer):
        kind = serializers.ChoiceField(choices=ScoringKind.choices)
        system = serializers.CharField(required=False, help_text="The system's name (kind system).")
        table = serializers.FileField(required=False, help_text="phrase<TAB>paraphrase[<TAB>probability] (kind paraphrases).")
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
                return Response({"detail": f"no system '{v.get('system', '')}' in this study", "errors": []},
                                status=status.HTTP_400_BAD_REQUEST)
            kwargs["system"] = system
        if v["kind"] == ScoringKind.PARAPHRASES and v.get("table") is not None:
            kwargs["table_data"] = _read(v["table"])
            kwargs["table_filename"] = v["table"].name
        try:
            run = services.scoring_run_create(study=study, user=request.user, kind=v["kind"], **kwargs)
        except StudyImportError as exc:
            return _import_error(exc)
        except DjangoValidationError as exc:
            return Response({"detail": "; ".join(exc.messages), "errors": []}, status=status.HTTP_400_BAD_REQUEST)
        return Response(AlignmentScoringRunOutputSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class AlignmentScoringRunDetailApi(APIView):
    @extend_schema(responses=AlignmentScoringRunOutputSerializer, summary="Progress and results of a scoring run")
    def get(self, request, study_id: int, run_id: int):
        study = get_managed_study(request, study_id)
        run = get_object_or_404(ScoringRun, pk=run_id, study=study)
        return Response(AlignmentScoringRunOutputSerializer(run).data)


# ============================================================================ annotators

def get_own_assignment(request, assignment_id: int) -> AlignmentAssignment:
    """The assignment if it belongs to the requesting annotator (404 if absent, 403 if someone else's)."""
    found = get_object_or_404(AlignmentAssignment.objects.select_related("pair"), pk=assignment_id)
    assignment = selectors.assignment_for_annotator(assignment_id=assignment_id, user=request.user)
    if assignment is None:
        if found.annotator_id == request.user.pk and user_role_conflict(study=found.pair.study_id, user=request.user):
            raise PermissionDenied(ROLE_CONFLICT_HOLD_MESSAGE)
        raise PermissionDenied("This pair is assigned to someone else.")
    return assignment


class AlignmentAssignmentOutputSerializer(serializers.Serializer):
    """One of the annotator's pairs. Never the study's name or the researcher's pair id
    (either may say where a sentence comes from): the study's participant title and
    the pair's number in the annotator's own list instead."""

    id = serializers.IntegerField()
    study_title = serializers.CharField(source="pair.study.participant_title")
    pair_number = serializers.SerializerMethodField()
    tokens1 = serializers.ListField(child=serializers.CharField(), source="pair.tokens1")
    tokens2 = serializers.ListField(child=serializers.CharField(), source="pair.tokens2")
    status = serializers.CharField()
    revision = serializers.IntegerField()
    sure = _link_list()
    possible = _link_list()
    active_seconds = serializers.FloatField()
    server_seconds = serializers.FloatField(allow_null=True)
    submitted_at = serializers.DateTimeField(allow_null=True)

    def get_pair_number(self, assignment) -> int | None:
        numbers = self.context.get("numbers")
        if numbers is None:
            numbers = self.context["numbers"] = selectors.pair_numbers_for_annotator(user=assignment.annotator)
        return numbers.get(assignment.pk)


class AlignmentAssignmentListApi(APIView):
    @extend_schema(responses=AlignmentAssignmentOutputSerializer(many=True), summary="Your assigned pairs")
    def get(self, request):
        return Response(AlignmentAssignmentOutputSerializer(selectors.assignments_for_annotator(user=request.user), many=True).data)


class AlignmentAssignmentDetailApi(APIView):
    @extend_schema(responses=AlignmentAssignmentOutputSerializer, summary="One of your pairs with its current links")
    def get(self, request, assignment_id: int):
        return Response(AlignmentAssignmentOutputSerializer(get_own_assignment(request, assignment_id)).data)


class AlignmentLinksInputSerializer(serializers.Serializer):
    sure = _link_list(default=list)
    possible = _link_list(default=list)
    revision = serializers.IntegerField(min_value=0, help_text="The revision these links were based on.")
    active_seconds = serializers.FloatField(min_value=0, default=0.0)


class AlignmentDraftOutputSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    status = serializers.CharField()
    saved_at = serializers.DateTimeField()


class AlignmentConflictSerializer(serializers.Serializer):
    detail = serializers.CharField()
    revision = serializers.IntegerField()


def _save(request, assignment_id: int, service):
    assignment = get_own_assignment(request, assignment_id)
    # Count before the serializer walks every coordinate: validating a million
    # links field by field costs seconds of CPU per request.
    raw = request.data
    counted = [raw.get(k) for k in ("sure", "possible")] if hasattr(raw, "get") else []
    try:
        services.links_count_check(assignment.pair, sum(len(v) for v in counted if isinstance(v, list)))
    except DjangoValidationError as exc:
        return None, _validation_error(exc)
    data = AlignmentLinksInputSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    # The grid shows the refusal's detail to the annotator: in their study's language.
    with translation.override(assignment.pair.study.language):
        return _save_validated(assignment, service, data.validated_data)


def _save_validated(assignment, service, validated: dict):
    try:
        return service(assignment=assignment, **validated), None
    except services.AssignmentConflict as exc:
        return None, Response({"detail": str(exc), "revision": exc.current_revision}, status=status.HTTP_409_CONFLICT)
    except services.AssignmentClosed as exc:
        return None, Response({"detail": str(exc), "revision": assignment.revision}, status=status.HTTP_409_CONFLICT)
    except DjangoValidationError as exc:
        return None, _validation_error(exc)


class AlignmentDraftSaveApi(APIView):
    @extend_schema(request=AlignmentLinksInputSerializer,
                   responses={200: AlignmentDraftOutputSerializer, 400: AlignmentErrorSerializer, 409: AlignmentConflictSerializer},
                   summary="Autosave the draft links of one of your pairs",
                   description="Refused with 409 when `revision` is not the stored one (another tab saved) or the pair is submitted.")
    def put(self, request, assignment_id: int):
        assignment, error = _save(request, assignment_id, services.assignment_draft_save)
        if error is not None:
            return error
        return Response(AlignmentDraftOutputSerializer(
            {"revision": assignment.revision, "status": assignment.status, "saved_at": assignment.draft_saved_at}).data)


class AlignmentSubmitOutputSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    status = serializers.CharField()
    submitted_at = serializers.DateTimeField()
    server_seconds = serializers.FloatField()
    active_seconds = serializers.FloatField()
    next_url = serializers.CharField()


class AlignmentSubmitApi(APIView):
    @extend_schema(request=AlignmentLinksInputSerializer,
                   responses={200: AlignmentSubmitOutputSerializer, 400: AlignmentErrorSerializer, 409: AlignmentConflictSerializer},
                   summary="Submit the final links of one of your pairs")
    def post(self, request, assignment_id: int):
        from django.urls import reverse

        assignment, error = _save(request, assignment_id, services.assignment_submit)
        if error is not None:
            return error
        nxt = selectors.assignment_next_for_annotator(user=request.user, after=assignment)
        next_url = reverse("alignment:grid", kwargs={"assignment_id": nxt.pk}) if nxt else reverse("alignment:home")
        if isinstance(request.successful_authenticator, SessionAuthentication):
            # The grid page moves on to next_url: confirm there that the pair was submitted.
            # Shown on the annotator's next page, so in their study's language.
            with translation.override(assignment.pair.study.language):
                messages.success(request._request, (
                    _("Alignment of pair “%(pair)s” submitted.") % {"pair": assignment.pair.external_id} + " "
                    + (_("Here is your next pair.") if nxt else _("You have submitted every pair assigned to you."))))
        return Response(AlignmentSubmitOutputSerializer({
            "revision": assignment.revision, "status": assignment.status, "submitted_at": assignment.submitted_at,
            "server_seconds": assignment.server_seconds, "active_seconds": assignment.active_seconds, "next_url": next_url,
        }).data)

