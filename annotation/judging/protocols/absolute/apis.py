"""The absolute protocol's judge endpoints: the next item (the resume point), one item, the one
before, the last one rated, and submitting (or revising) a judgment.

They answer only about the requesting judge's own assignment and expose items by opaque
tokens; a study the user does not judge is a 404. ``items/next`` and the submit are the
judge's hot path (:mod:`.hot_path`).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ... import screening
from ...apis.judge import get_judged_study, open_assignment_for_judge
from ...apis.protocol import EntrySerializer, NextSerializer, SubmitInputSerializer, SubmitOutputSerializer
from ...enums import JudgmentSource
from ...errors import JudgingError, JudgmentInvalid, OtherProtocol
from ...web import TAG_JUDGE, judging_error
from ..registry import protocol_for_study
from .hot_path import assignment_done_count_fast, item_next_for_judge_fast
from .selectors import JudgeItem, item_for_judge, item_previous_for_judge
from .services import judgment_submit
from .unit import ABSOLUTE

# --- serializers ----------------------------------------------------------------------------


class JudgingScoresSerializer(serializers.DictField):
    """Criterion slug → value on that criterion's scale (the study's design says which
    criteria and scales; the judging service checks the values and names each problem)."""

    child = serializers.JSONField()


class JudgingItemSerializer(EntrySerializer):
    original = serializers.CharField()
    paraphrase = serializers.CharField()
    scores = JudgingScoresSerializer(allow_null=True, help_text="Your latest values, if you rated it before.")


class JudgingNextSerializer(NextSerializer):
    item = JudgingItemSerializer(allow_null=True)


class JudgingSubmitInputSerializer(SubmitInputSerializer):
    item = serializers.CharField(max_length=64, help_text="The item's token.")
    scores = JudgingScoresSerializer()


class JudgingSubmitOutputSerializer(SubmitOutputSerializer):
    item = serializers.CharField()
    scores = JudgingScoresSerializer()
    seconds = serializers.FloatField()


def _item_payload(item: JudgeItem) -> dict:
    return JudgingItemSerializer(item).data


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
