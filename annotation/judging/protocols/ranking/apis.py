"""Ranking API: the judge's sets (by opaque tokens) and orders.

Same rules as the other protocols' APIs: a study the user does not judge is a 404; a set
carries only texts, named by their place on the screen (1..k), positions and tokens —
never a system, a control flag or a database id. An order is sent as screen places, best
first, ties as lists (``[2, [1, 3], 4]``); scores as place → 0–100.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ...apis.judge import get_judged_study, next_entry_for_api
from ...enums import MAX_ITEM_SECONDS, JudgmentSource
from ...errors import JudgingError, OtherProtocol
from ...services.submission import KEY_MAX_LENGTH, KEY_MIN_LENGTH
from ...web import TAG_JUDGE, judging_error
from . import screening as rank_screening
from .unit import RANKING


class RankingCandidateSerializer(serializers.Serializer):
    place = serializers.IntegerField(help_text="Its place on the screen, 1..k: the name to use in an order.")
    text = serializers.CharField()


class RankingEntrySerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Opaque id of this set in your assignment.")
    position = serializers.IntegerField()
    total = serializers.IntegerField()
    done = serializers.IntegerField(help_text="Sets you have ranked so far.")
    original = serializers.CharField()
    candidates = serializers.SerializerMethodField()
    order = serializers.JSONField(allow_null=True, help_text="Your latest order (places best first, ties as lists).")
    scores = serializers.SerializerMethodField()
    asks_scores = serializers.BooleanField(help_text="Whether a 0–100 score is asked for each candidate.")
    revision = serializers.IntegerField()
    previous = serializers.CharField(allow_null=True, source="previous_token")
    serve_stamp = serializers.CharField()
    context_shown = serializers.BooleanField()
    context_before = serializers.ListField(child=serializers.CharField())
    context_after = serializers.ListField(child=serializers.CharField())

    def get_candidates(self, entry) -> list[dict]:
        return [{"place": p, "text": t} for p, t in zip(entry.places, entry.candidates)]

    def get_scores(self, entry) -> dict[str, float]:
        return {str(p): v for p, v in sorted(entry.scores.items())}


class RankingNextSerializer(serializers.Serializer):
    finished = serializers.BooleanField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    ranking = RankingEntrySerializer(allow_null=True)


class RankingSubmitInputSerializer(serializers.Serializer):
    ranking = serializers.CharField(max_length=64, help_text="The set's token.")
    key = serializers.CharField(min_length=KEY_MIN_LENGTH, max_length=KEY_MAX_LENGTH)
    order = serializers.JSONField(help_text="Screen places best first, ties as lists: [2, [1, 3], 4].")
    scores = serializers.JSONField(required=False, allow_null=True, help_text="Place → 0–100, when asked.")
    serve_stamp = serializers.CharField(max_length=400)
    active_seconds = serializers.FloatField(required=False, allow_null=True, min_value=0, max_value=MAX_ITEM_SECONDS)


class RankingSubmitOutputSerializer(serializers.Serializer):
    ranking = serializers.CharField()
    revision = serializers.IntegerField()
    created = serializers.BooleanField()
    order = serializers.JSONField()
    scores = serializers.JSONField()
    submitted_at = serializers.DateTimeField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()


def _ranking_study(request, study_id: int):
    study = get_judged_study(request, study_id)
    if not RANKING.is_protocol_of(study):
        raise OtherProtocol("This study is not a ranking study.")
    return study


class RankingNextApi(APIView):
    @extend_schema(
        tags=TAG_JUDGE,
        responses={
            200: RankingNextSerializer,
            404: OpenApiResponse(description="not your study"),
            409: OpenApiResponse(description="study not open or not a ranking study"),
        },
        summary="Your next set to rank (the resume point)",
    )
    def get(self, request, study_id: int):
        try:
            study = _ranking_study(request, study_id)
            entry, done, total = next_entry_for_api(request, study)
        except JudgingError as exc:
            return judging_error(exc)
        return Response(
            RankingNextSerializer({"finished": entry is None, "done": done, "total": total, "ranking": entry}).data
        )


class RankingDetailApi(APIView):
    @extend_schema(
        tags=TAG_JUDGE,
        responses={200: RankingEntrySerializer, 404: OpenApiResponse(description="not yours")},
        summary="One set of your assignment (to revise your order)",
    )
    def get(self, request, study_id: int, token: str):
        try:
            study = _ranking_study(request, study_id)
            entry = rank_screening.entry_for_judge(study=study, judge=request.user, token=token)
        except JudgingError as exc:
            return judging_error(exc)
        return Response(RankingEntrySerializer(entry).data)


class RankingSubmitApi(APIView):
    @extend_schema(
        tags=TAG_JUDGE,
        request=RankingSubmitInputSerializer,
        responses={
            201: RankingSubmitOutputSerializer,
            200: RankingSubmitOutputSerializer,
            400: OpenApiResponse(description="a bad order (a place missing, twice or unknown), bad scores or stamp"),
            404: OpenApiResponse(description="not your set"),
            409: OpenApiResponse(description="study not open, or key reused"),
        },
        summary="Submit (or revise) your order of a set: screen places best first, ties as lists",
        description="Idempotent on `key`, like the other protocols' judgments.",
    )
    def post(self, request, study_id: int):
        try:
            study = _ranking_study(request, study_id)
        except JudgingError as exc:
            return judging_error(exc)
        data = RankingSubmitInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        try:  # a set or an attention set: one path, one answer (rank_screening.answer_submit)
            result = rank_screening.answer_submit(
                study=study,
                judge=request.user,
                token=v["ranking"],
                key=v["key"],
                order=v["order"],
                scores=v.get("scores"),
                serve_stamp=v["serve_stamp"],
                active_seconds=v.get("active_seconds"),
                source=JudgmentSource.API,
            )
            entry = rank_screening.entry_for_judge(study=study, judge=request.user, token=v["ranking"])
        except JudgingError as exc:
            return judging_error(exc)
        judgment, created = result.judgment, result.created
        return Response(
            RankingSubmitOutputSerializer(
                {
                    "ranking": v["ranking"],
                    "revision": judgment.revision,
                    "created": created,
                    "order": entry.order,
                    "scores": {str(p): s for p, s in sorted(entry.scores.items())},
                    "submitted_at": judgment.submitted_at,
                    "done": entry.done,
                    "total": entry.total,
                }
            ).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )
