# Over 400 lines: this session's feature work (protocols, screening, field studies, speed) landed here; splitting it along its seams is issue 17's remaining step, done once so code moves only once.
"""Judging REST API: one view per operation, explicit serializers.

Judge endpoints answer only about the requesting judge's own assignment and expose
items by opaque tokens; a study the user does not judge is a 404. Researcher
endpoints need the study's researcher role (403 otherwise).
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from dataclasses import asdict

from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis import ImportErrorSerializer, get_managed_study
from annotation.importing import FORMATS, StudyImportError
from annotation.enums import JobStatus, StudyStatus
from annotation.models import Study
from annotation.selectors import ROLE_CONFLICT_HOLD_MESSAGE
from metrics.core.controls import CONTROL_KINDS

from . import screening, selectors, services
from .enums import JudgesMode, JudgmentSource, Protocol
from .errors import JudgingError, JudgmentInvalid, StudyNotOpen
from .selectors import JudgeItem
from .models import OpenJob
from .views import csv_response, export_filename, open_job_payload

TAG_JUDGE = ["judging (judge)"]
TAG_RESEARCHER = ["judging (researcher)"]


def judging_error(exc: JudgingError) -> Response:
    body = {"detail": exc.message}
    if exc.field_errors:
        body["errors"] = exc.field_errors
    return Response(body, status=exc.status_code)


def get_judged_study(request, study_id: int) -> Study:
    """The study, if the requesting user judges it; 404 otherwise (existence is not revealed)."""
    # One query on the judge's hot path: being a judge here, and (user_role_conflict's
    # rule) also being an annotator of the same study, which holds the account out.
    study = selectors.study_for_judge(study_id=study_id, judge=request.user)
    if study is None:
        raise NotFound("You are not a judge of this study.")
    if study.judge_also_annotates:
        raise PermissionDenied(ROLE_CONFLICT_HOLD_MESSAGE)
    return study


# --- serializers ----------------------------------------------------------------------------

class JudgingScoresSerializer(serializers.DictField):
    """Criterion slug → value on that criterion's scale (the study's design says which
    criteria and scales; the judging service checks the values and names each problem)."""

    child = serializers.JSONField()


class JudgingItemSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Opaque id of this item in your assignment.")
    position = serializers.IntegerField(help_text="1-based place in your order.")
    total = serializers.IntegerField()
    done = serializers.IntegerField(help_text="Items you have rated so far.")
    original = serializers.CharField()
    paraphrase = serializers.CharField()
    scores = JudgingScoresSerializer(allow_null=True, help_text="Your latest values, if you rated it before.")
    revision = serializers.IntegerField(help_text="How many times you rated it (0: not yet).")
    previous = serializers.CharField(allow_null=True, source="previous_token", help_text="Token of the item before it.")
    serve_stamp = serializers.CharField(help_text="Send it back with your judgment: the server times you with it.")
    context_shown = serializers.BooleanField(help_text="Whether this study shows document context.")
    context_before = serializers.ListField(child=serializers.CharField(),
                                          help_text="Sentences before the original in its document.")
    context_after = serializers.ListField(child=serializers.CharField(),
                                         help_text="Sentences after the original in its document.")


class JudgingNextSerializer(serializers.Serializer):
    finished = serializers.BooleanField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    item = JudgingItemSerializer(allow_null=True)


class JudgingSubmitInputSerializer(serializers.Serializer):
    item = serializers.CharField(max_length=64, help_text="The item's token.")
    key = serializers.CharField(
        min_length=services.KEY_MIN_LENGTH, max_length=services.KEY_MAX_LENGTH,
        help_text="Your idempotency key: a new random string per judgment, the same on a retry.")
    scores = JudgingScoresSerializer()
    serve_stamp = serializers.CharField(max_length=400)
    active_seconds = serializers.FloatField(required=False, allow_null=True, min_value=0)


class JudgingSubmitOutputSerializer(serializers.Serializer):
    item = serializers.CharField()
    revision = serializers.IntegerField()
    created = serializers.BooleanField(help_text="False when this key was already stored (a retry).")
    scores = JudgingScoresSerializer()
    submitted_at = serializers.DateTimeField()
    seconds = serializers.FloatField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()


def _item_payload(item: JudgeItem) -> dict:
    return JudgingItemSerializer(item).data


def _judge_assignment(request, study: Study):
    if study.status != StudyStatus.OPEN:
        raise StudyNotOpen("This study is not open for judging.")
    # The common case in one query; otherwise the service decides (and may build it).
    assignment = (selectors.assignment_ready_for_judge(study=study, judge=request.user)
                  or services.assignment_ensure_for_judge(study=study, judge=request.user))
    if assignment is None:
        raise StudyNotOpen("This study is not open for judging yet.")
    return assignment


# --- judge endpoints ------------------------------------------------------------------------

class JudgingNextItemApi(APIView):
    @extend_schema(tags=TAG_JUDGE, responses={200: JudgingNextSerializer, 404: OpenApiResponse(description="not your study"),
                                              409: OpenApiResponse(description="study not open")},
                   summary="Your next item to rate (the resume point)")
    def get(self, request, study_id: int):
        study = get_judged_study(request, study_id)
        try:
            assignment = _judge_assignment(request, study)
        except JudgingError as exc:
            return judging_error(exc)
        item = selectors.item_next_for_judge_fast(assignment=assignment)
        done = item.done if item else selectors.assignment_done_count_fast(assignment=assignment)
        try:  # screened out, training first, or an attention check waiting
            screening.judge_gate_raise(assignment=assignment, done=done)
        except JudgingError as exc:
            return judging_error(exc)
        return Response(JudgingNextSerializer(
            {"finished": item is None, "done": done, "total": assignment.n_items, "item": item}).data)


class JudgingItemDetailApi(APIView):
    @extend_schema(tags=TAG_JUDGE, responses={200: JudgingItemSerializer, 404: OpenApiResponse(description="not in your assignment")},
                   summary="One item of your assignment (to revise it)")
    def get(self, request, study_id: int, token: str):
        study = get_judged_study(request, study_id)
        try:
            return Response(_item_payload(selectors.item_for_judge(study=study, judge=request.user, token=token)))
        except JudgingError as exc:
            return judging_error(exc)


class JudgingItemPreviousApi(APIView):
    @extend_schema(tags=TAG_JUDGE, responses={200: JudgingItemSerializer, 404: OpenApiResponse(description="no previous item")},
                   summary="The item before the given one (to go back and revise it)")
    def get(self, request, study_id: int, token: str):
        study = get_judged_study(request, study_id)
        try:
            item = selectors.item_previous_for_judge(study=study, judge=request.user, token=token)
        except JudgingError as exc:
            return judging_error(exc)
        if item is None:
            return Response({"detail": "This is the first item; there is none before it."}, status=status.HTTP_404_NOT_FOUND)
        return Response(_item_payload(item))


class JudgingLastItemApi(APIView):
    @extend_schema(tags=TAG_JUDGE, responses={200: JudgingItemSerializer, 404: OpenApiResponse(description="nothing rated yet")},
                   summary="The item before your resume point (the last one you rated)")
    def get(self, request, study_id: int):
        study = get_judged_study(request, study_id)
        try:
            item = selectors.item_previous_for_judge(study=study, judge=request.user)
        except JudgingError as exc:
            return judging_error(exc)
        if item is None:
            return Response({"detail": "You have not rated any item yet."}, status=status.HTTP_404_NOT_FOUND)
        return Response(_item_payload(item))


class JudgingSubmitApi(APIView):
    @extend_schema(
        tags=TAG_JUDGE, request=JudgingSubmitInputSerializer,
        responses={201: JudgingSubmitOutputSerializer, 200: JudgingSubmitOutputSerializer,
                   400: OpenApiResponse(description="invalid scores or stamp"), 404: OpenApiResponse(description="not your item"),
                   409: OpenApiResponse(description="study not open, or key reused for another submission")},
        summary="Submit (or revise) your values (one per criterion of the design) for an item",
        description="Idempotent on `key`: sending the same key again returns the stored judgment with 200. "
                    "Rating an item again stores a new revision; the latest counts.")
    def post(self, request, study_id: int):
        study = get_judged_study(request, study_id)
        data = JudgingSubmitInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        try:
            result = services.judgment_submit(
                study=study, judge=request.user, token=v["item"], key=v["key"], scores=dict(v["scores"]),
                serve_stamp=v["serve_stamp"], active_seconds=v.get("active_seconds"), source=JudgmentSource.API)
        except JudgmentInvalid as exc:
            # Problems with values are reported under "scores", per criterion, as a
            # serializer would; problems with the key or the stamp under their own names.
            body = {"detail": exc.message}
            per_field = {k: v for k, v in exc.field_errors.items() if k in ("key", "serve_stamp")}
            per_criterion = {k: v for k, v in exc.field_errors.items() if k not in per_field}
            if per_criterion:
                body["scores"] = per_criterion
            if per_field:
                body["errors"] = per_field
            return Response(body, status=exc.status_code)
        except JudgingError as exc:
            return judging_error(exc)
        j = result.judgment
        assignment = j.item.assignment
        if result.created:
            screening.after_judgment(assignment=assignment)
        payload = {"item": v["item"], "revision": j.revision, "created": result.created, "scores": j.scores,
                   "submitted_at": j.submitted_at, "seconds": j.seconds,
                   "done": selectors.assignment_done_count_fast(assignment=assignment), "total": assignment.n_items}
        return Response(JudgingSubmitOutputSerializer(payload).data,
                        status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)


# --- researcher endpoints ---------------------------------------------------------------------

class JudgingCriterionSerializer(serializers.Serializer):
    slug = serializers.CharField(max_length=40)
    name = serializers.CharField(max_length=60)
    help = serializers.CharField(max_length=600, allow_blank=True, required=False, default="")
    scale = serializers.JSONField(
        required=False,
        help_text='{"type": "points", "min": 1, "max": 5, "labels": [...]}, '
                  '{"type": "slider", "min": 0, "max": 100, "anchors": {"low", "mid", "high"}} or '
                  '{"type": "categorical", "categories": [...]}')
    labels = serializers.ListField(child=serializers.CharField(max_length=60), required=False, write_only=True,
                                   help_text="Former shape: labels of a 1..k point scale (instead of scale).")

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
    protocol = serializers.ChoiceField(choices=Protocol.choices, required=False)
    comparison_per_criterion = serializers.BooleanField(required=False)
    pairs_per_original = serializers.IntegerField(min_value=1, allow_null=True, required=False)
    frozen = serializers.BooleanField(read_only=True, source="is_frozen")
    opened_at = serializers.DateTimeField(read_only=True, allow_null=True)


class JudgingDesignApi(APIView):
    @extend_schema(tags=TAG_RESEARCHER, responses=JudgingDesignSerializer, summary="The study's judging design")
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        return Response(JudgingDesignSerializer(services.design_get_or_create(study=study)).data)


class JudgingDesignUpdateApi(APIView):
    @extend_schema(tags=TAG_RESEARCHER, request=JudgingDesignSerializer, responses={
        200: JudgingDesignSerializer, 400: OpenApiResponse(description="invalid design"),
        409: OpenApiResponse(description="design frozen")},
        summary="Change the judging design (partial)",
        description="Only the fields given change. Once the study is open, only `expected_scores` and `qc_alpha` may change.")
    def patch(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = JudgingDesignSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        current = services.design_get_or_create(study=study)
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
            design = services.design_update(study=study, changes=changes)
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
        tags=TAG_RESEARCHER, request=None,
        responses={201: JudgingOpenJobSerializer, 202: JudgingOpenJobSerializer,
                   409: OpenApiResponse(description="cannot open (the reason is in detail)")},
        summary="Open the study: build controls and assignments",
        description="Small studies are opened at once (201, status succeeded, with the summary). Larger ones "
                    "(more than PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS assignment items) are opened by a worker: "
                    "202 with a queued job; poll GET open/<id>/ until its status is succeeded or failed. Judges "
                    "see the study as not started until it has succeeded.")
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        try:
            job = services.study_judging_open_start(study=study, user=request.user)
        except JudgingError as exc:
            return judging_error(exc)
        code = status.HTTP_201_CREATED if job.status == JobStatus.SUCCEEDED else status.HTTP_202_ACCEPTED
        return Response(JudgingOpenJobSerializer(open_job_payload(job)).data, status=code)


class JudgingOpenJobApi(APIView):
    @extend_schema(tags=TAG_RESEARCHER, responses={200: JudgingOpenJobSerializer, 404: OpenApiResponse(description="no such job")},
                   summary="Progress and outcome of opening the study")
    def get(self, request, study_id: int, open_job_id: int):
        study = get_managed_study(request, study_id)
        job = get_object_or_404(OpenJob, pk=open_job_id, study=study)
        return Response(JudgingOpenJobSerializer(open_job_payload(job)).data)


class JudgingStatusOutputSerializer(serializers.Serializer):
    status = serializers.CharField()


class JudgingCloseApi(APIView):
    @extend_schema(tags=TAG_RESEARCHER, request=None, responses={200: JudgingStatusOutputSerializer, 409: OpenApiResponse(description="not open")},
                   summary="Close judging (no more judgments accepted)")
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        try:
            study = services.study_judging_close(study=study)
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
    @extend_schema(tags=TAG_RESEARCHER, responses=JudgingProgressSerializer, summary="Progress per judge and per system")
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        return Response(JudgingProgressSerializer(selectors.study_progress(study=study)).data)


class JudgingControlTestSerializer(serializers.Serializer):
    name = serializers.CharField()
    criterion = serializers.CharField()
    control_kinds = serializers.ListField(child=serializers.CharField())
    statistic = serializers.FloatField(allow_null=True)
    pvalue = serializers.FloatField(allow_null=True)
    n_control = serializers.IntegerField()
    n_genuine = serializers.IntegerField()
    passed = serializers.BooleanField(allow_null=True)


class JudgingJudgeQCSerializer(serializers.Serializer):
    judge = serializers.CharField()
    excluded = serializers.BooleanField()
    screened_out = serializers.CharField(allow_null=True, required=False,
                                         help_text="The screening rule that screened the judge out (training, "
                                                   "attention, qc), or null.")
    rated = serializers.BooleanField(help_text="False for a judge who has rated nothing (no statistics).")
    passed = serializers.BooleanField(allow_null=True)
    flags = serializers.ListField(child=serializers.CharField())
    n_items = serializers.IntegerField()
    n_controls = serializers.IntegerField()
    control_mad = serializers.DictField(child=serializers.FloatField())
    tests = JudgingControlTestSerializer(many=True)
    median_seconds = serializers.FloatField(allow_null=True)
    straightlining = serializers.DictField(child=serializers.FloatField())


class JudgingQCOutputSerializer(serializers.Serializer):
    alpha = serializers.FloatField()
    fingerprint = serializers.CharField()
    judges = JudgingJudgeQCSerializer(many=True)


class JudgingQCApi(APIView):
    @extend_schema(tags=TAG_RESEARCHER, responses=JudgingQCOutputSerializer, summary="Judge quality control")
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        design = selectors.design_for_study(study=study)
        judges = []
        for row in selectors.judge_qc(study=study):
            qc = row["qc"]
            base = {"judge": row["judge"], "excluded": row["excluded"],
                    "screened_out": row["screened_out"][0] if row.get("screened_out") else None}
            if qc is None:
                judges.append(base | {"rated": False, "passed": None, "flags": [], "n_items": 0, "n_controls": 0,
                                      "control_mad": {}, "tests": [], "median_seconds": None, "straightlining": {}})
            else:
                d = qc.to_dict()
                judges.append(base | {"rated": True, "passed": d["passed"], "flags": d["flags"], "n_items": d["n_items"],
                                      "n_controls": d["n_controls"], "control_mad": d["control_mad"], "tests": d["tests"],
                                      "median_seconds": d["median_seconds"], "straightlining": d["straightlining"]})
        return Response(JudgingQCOutputSerializer({
            "alpha": design.qc_alpha if design else 0.05, "fingerprint": selectors.judgments_fingerprint(study=study),
            "judges": judges}).data)


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
            row = services.judge_exclusion_set(study=study, judge=judge, excluded=self.excluded, decided_by=request.user,
                                               reason=data.validated_data["reason"])
        except JudgingError as exc:
            return judging_error(exc)
        return Response(JudgingExclusionOutputSerializer({
            "judge": judge.username, "excluded": self.excluded, "changed": row is not None,
            "fingerprint": selectors.judgments_fingerprint(study=study)}).data)


class JudgingJudgeExcludeApi(_JudgeExclusionBase):
    excluded = True

    @extend_schema(tags=TAG_RESEARCHER, request=JudgingExclusionInputSerializer, responses=JudgingExclusionOutputSerializer,
                   summary="Exclude a judge from every statistic of the study (recorded, reversible)")
    def post(self, request, study_id: int, username: str):
        return super().post(request, study_id, username)


class JudgingJudgeIncludeApi(_JudgeExclusionBase):
    excluded = False

    @extend_schema(tags=TAG_RESEARCHER, request=JudgingExclusionInputSerializer, responses=JudgingExclusionOutputSerializer,
                   summary="Include an excluded judge again")
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
        import json

        return json.dumps(data)


class JudgingExportTidyApi(APIView):
    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(tags=TAG_RESEARCHER, responses={(200, "text/csv"): OpenApiTypes.STR},
                   summary="Judgments as tidy CSV (one row per judge × item × criterion)")
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        return csv_response(selectors.export_tidy_rows(study=study), export_filename(study, "tidy"))


class JudgingExportWideApi(APIView):
    renderer_classes = [JSONRenderer, CSVRenderer]

    @extend_schema(tags=TAG_RESEARCHER, responses={(200, "text/csv"): OpenApiTypes.STR},
                   summary="Judgments as wide CSV (one row per item, a column per judge × criterion)")
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        return csv_response(selectors.export_wide_rows(study=study), export_filename(study, "wide"))



class JudgingImportSummarySerializer(serializers.Serializer):
    rows = serializers.IntegerField()
    judgments = serializers.IntegerField()
    revisions = serializers.IntegerField(help_text="Judgments that revise an earlier one of the same judge and item.")
    judges_created = serializers.IntegerField(help_text="Imported participants created for unknown judge names.")
    judges = serializers.IntegerField()
    candidates_created = serializers.IntegerField()
    systems_created = serializers.IntegerField()


class JudgingImportApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    class InputSerializer(serializers.Serializer):
        file = serializers.FileField()
        format = serializers.ChoiceField(choices=FORMATS, required=False)

    @extend_schema(
        tags=TAG_RESEARCHER, request={"multipart/form-data": InputSerializer},
        responses={201: JudgingImportSummarySerializer, 400: ImportErrorSerializer},
        summary="Import judgments collected elsewhere (all or nothing)",
        description="Long format: judge, original_id, system (or systems, space-separated, or candidate text), "
                    "criterion, value, optional seconds; values on the scales of the study's design. Errors name "
                    "the file, line and column, and nothing is written.")
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        try:
            summary = services.judgments_import_file(study=study, data=upload.read(), filename=upload.name,
                                                     fmt=data.validated_data.get("format"))
        except StudyImportError as exc:
            return Response({
                "detail": exc.describe(),
                "errors": [{"line": i.line, "column": i.column, "message": i.message} for i in exc.issues],
            }, status=status.HTTP_400_BAD_REQUEST)
        return Response(JudgingImportSummarySerializer(asdict(summary)).data, status=status.HTTP_201_CREATED)
