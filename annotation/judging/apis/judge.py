"""The judge's endpoints: the next item (the resume point), one item, the one before,
submitting (or revising) a judgment.

They answer only about the requesting judge's own assignment and expose items by
opaque tokens; a study the user does not judge is a 404. ``items/next`` and the
submit are the judge's hot path (:mod:`annotation.judging.selectors.hot_path`).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.enums import StudyStatus
from annotation.judging.selectors.hot_path import (
    assignment_done_count_fast,
    assignment_ready_for_judge,
    item_next_for_judge_fast,
    study_for_judge,
)
from annotation.judging.selectors.judge import JudgeItem, item_for_judge, item_previous_for_judge
from annotation.judging.services.assignments import assignment_ensure_for_judge
from annotation.judging.services.submission import KEY_MAX_LENGTH, KEY_MIN_LENGTH, judgment_submit
from annotation.models import Study
from annotation.selectors import ROLE_CONFLICT_HOLD_MESSAGE

from .. import screening
from ..enums import MAX_ITEM_SECONDS, JudgmentSource
from ..errors import JudgingError, JudgmentInvalid, OtherProtocol, StudyNotOpen
from ..protocols.absolute.unit import ABSOLUTE
from ..protocols.registry import protocol_for_study
from ..web import TAG_JUDGE, judging_error


def get_judged_study(request, study_id: int) -> Study:
    """The study, if the requesting user judges it; 404 otherwise (existence is not revealed)."""
    # One query on the judge's hot path: being a judge here, and (user_role_conflict's
    # rule) also being an annotator of the same study, which holds the account out.
    study = study_for_judge(study_id=study_id, judge=request.user)
    if study is None:
        raise NotFound("You are not a judge of this study.")
    if study.judge_also_annotates:  # type: ignore[attr-defined]  # annotated by selectors.study_for_judge
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
    context_before = serializers.ListField(
        child=serializers.CharField(), help_text="Sentences before the original in its document."
    )
    context_after = serializers.ListField(
        child=serializers.CharField(), help_text="Sentences after the original in its document."
    )


class JudgingNextSerializer(serializers.Serializer):
    finished = serializers.BooleanField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    item = JudgingItemSerializer(allow_null=True)


class JudgingSubmitInputSerializer(serializers.Serializer):
    item = serializers.CharField(max_length=64, help_text="The item's token.")
    key = serializers.CharField(
        min_length=KEY_MIN_LENGTH,
        max_length=KEY_MAX_LENGTH,
        help_text="Your idempotency key: a new random string per judgment, the same on a retry.",
    )
    scores = JudgingScoresSerializer()
    serve_stamp = serializers.CharField(max_length=400)
    active_seconds = serializers.FloatField(required=False, allow_null=True, min_value=0, max_value=MAX_ITEM_SECONDS)


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


def open_assignment_for_judge(request, study: Study):
    """The judge's assignment of an open study (built now if need be); StudyNotOpen otherwise."""
    if study.status != StudyStatus.OPEN:
        raise StudyNotOpen("This study is not open for judging.")
    # The common case in one query; otherwise the service decides (and may build it).
    assignment = assignment_ready_for_judge(study=study, judge=request.user) or assignment_ensure_for_judge(
        study=study, judge=request.user
    )
    if assignment is None:
        raise StudyNotOpen("This study is not open for judging yet.")
    return assignment


# --- judge endpoints ------------------------------------------------------------------------


class JudgingNextItemApi(APIView):
    @extend_schema(
        tags=TAG_JUDGE,
        responses={
            200: JudgingNextSerializer,
            404: OpenApiResponse(description="not your study"),
            409: OpenApiResponse(description="study not open"),
        },
        summary="Your next item to rate (the resume point)",
    )
    def get(self, request, study_id: int):
        study = get_judged_study(request, study_id)
        try:
            assignment = open_assignment_for_judge(request, study)
        except JudgingError as exc:
            return judging_error(exc)
        item = item_next_for_judge_fast(assignment=assignment)
        if item is None and not ABSOLUTE.is_protocol_of(study):  # not "finished": these are not its items
            unit = protocol_for_study(study=study)
            return judging_error(OtherProtocol(f"This study is judged by {unit.name}; use its own endpoints."))
        done = item.done if item else assignment_done_count_fast(assignment=assignment)
        try:  # screened out, training first, or an attention check waiting
            screening.judge_gate_raise(assignment=assignment, done=done)
        except JudgingError as exc:
            return judging_error(exc)
        return Response(
            JudgingNextSerializer(
                {"finished": item is None, "done": done, "total": assignment.n_items, "item": item}
            ).data
        )


class JudgingItemDetailApi(APIView):
    @extend_schema(
        tags=TAG_JUDGE,
        responses={200: JudgingItemSerializer, 404: OpenApiResponse(description="not in your assignment")},
        summary="One item of your assignment (to revise it)",
    )
    def get(self, request, study_id: int, token: str):
        study = get_judged_study(request, study_id)
        try:
            return Response(_item_payload(item_for_judge(study=study, judge=request.user, token=token)))
        except JudgingError as exc:
            return judging_error(exc)


class JudgingItemPreviousApi(APIView):
    @extend_schema(
        tags=TAG_JUDGE,
        responses={200: JudgingItemSerializer, 404: OpenApiResponse(description="no previous item")},
        summary="The item before the given one (to go back and revise it)",
    )
    def get(self, request, study_id: int, token: str):
        study = get_judged_study(request, study_id)
        try:
            item = item_previous_for_judge(study=study, judge=request.user, token=token)
        except JudgingError as exc:
            return judging_error(exc)
        if item is None:
            return Response(
                {"detail": "This is the first item; there is none before it."}, status=status.HTTP_404_NOT_FOUND
            )
        return Response(_item_payload(item))


class JudgingLastItemApi(APIView):
    @extend_schema(
        tags=TAG_JUDGE,
        responses={200: JudgingItemSerializer, 404: OpenApiResponse(description="nothing rated yet")},
        summary="The item before your resume point (the last one you rated)",
    )
    def get(self, request, study_id: int):
        study = get_judged_study(request, study_id)
        try:
            item = item_previous_for_judge(study=study, judge=request.user)
        except JudgingError as exc:
            return judging_error(exc)
        if item is None:
            return Response({"detail": "You have not rated any item yet."}, status=status.HTTP_404_NOT_FOUND)
        return Response(_item_payload(item))


class JudgingSubmitApi(APIView):
    @extend_schema(
        tags=TAG_JUDGE,
        request=JudgingSubmitInputSerializer,
        responses={
            201: JudgingSubmitOutputSerializer,
            200: JudgingSubmitOutputSerializer,
            400: OpenApiResponse(description="invalid scores or stamp"),
            404: OpenApiResponse(description="not your item"),
            409: OpenApiResponse(description="study not open, or key reused for another submission"),
        },
        summary="Submit (or revise) your values (one per criterion of the design) for an item",
        description="Idempotent on `key`: sending the same key again returns the stored judgment with 200. "
        "Rating an item again stores a new revision; the latest counts.",
    )
    def post(self, request, study_id: int):
        study = get_judged_study(request, study_id)
        data = JudgingSubmitInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        try:
            result = judgment_submit(
                study=study,
                judge=request.user,
                token=v["item"],
                key=v["key"],
                scores=dict(v["scores"]),
                serve_stamp=v["serve_stamp"],
                active_seconds=v.get("active_seconds"),
                source=JudgmentSource.API,
            )
        except JudgmentInvalid as exc:
            # Problems with values are reported under "scores", per criterion, as a
            # serializer would; problems with the key or the stamp under their own names.
            body: dict[str, Any] = {"detail": exc.message}
            per_field = {k: v for k, v in exc.field_errors.items() if k in ("key", "serve_stamp", "active_seconds")}
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
        payload = {
            "item": v["item"],
            "revision": j.revision,
            "created": result.created,
            "scores": j.scores,
            "submitted_at": j.submitted_at,
            "seconds": j.seconds,
            "done": assignment_done_count_fast(assignment=assignment),
            "total": assignment.n_items,
        }
        return Response(
            JudgingSubmitOutputSerializer(payload).data,
            status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
        )
