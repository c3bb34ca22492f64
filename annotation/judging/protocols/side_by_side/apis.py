"""Side-by-side comparison API: the judge's pairs (by opaque tokens) and answers.

Same rules as the absolute protocol's API (:mod:`.apis`): a study the user does not
judge is a 404; a pair carries only texts ("a" is the one shown on the left, "b" on
the right), positions and tokens — never a system, a control flag or a database id.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ...apis.judge import get_judged_study, next_entry_for_api
from ...enums import COMPARISON_ANSWERS, MAX_ITEM_SECONDS, JudgmentSource
from ...errors import JudgingError, OtherProtocol
from ...selectors.judge import progress_among_checks
from ...services.submission import KEY_MAX_LENGTH, KEY_MIN_LENGTH
from ...web import TAG_JUDGE, judging_error
from . import screening as sbs_screening
from . import services as comparison
from .models import ComparisonItem
from .unit import SIDE_BY_SIDE


class ComparisonPairSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Opaque id of this pair in your assignment.")
    position = serializers.IntegerField()
    total = serializers.IntegerField()
    done = serializers.IntegerField(help_text="Pairs you have answered so far.")
    original = serializers.CharField()
    a = serializers.CharField(help_text="Paraphrase A (shown on the left).")
    b = serializers.CharField(help_text="Paraphrase B (shown on the right).")
    answers = serializers.DictField(
        child=serializers.ChoiceField(choices=COMPARISON_ANSWERS),
        allow_null=True,
        help_text="Your latest answers, if you answered it before.",
    )
    revision = serializers.IntegerField()
    previous = serializers.CharField(allow_null=True, source="previous_token")
    serve_stamp = serializers.CharField()
    context_shown = serializers.BooleanField()
    context_before = serializers.ListField(child=serializers.CharField())
    context_after = serializers.ListField(child=serializers.CharField())


class ComparisonQuestionSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    help = serializers.CharField(allow_blank=True)


class ComparisonNextSerializer(serializers.Serializer):
    finished = serializers.BooleanField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    questions = ComparisonQuestionSerializer(many=True)
    pair = ComparisonPairSerializer(allow_null=True)


class ComparisonSubmitInputSerializer(serializers.Serializer):
    pair = serializers.CharField(max_length=64, help_text="The pair's token.")
    key = serializers.CharField(min_length=KEY_MIN_LENGTH, max_length=KEY_MAX_LENGTH)
    answers = serializers.DictField(child=serializers.CharField(), help_text="Question slug → A, tie or B.")
    serve_stamp = serializers.CharField(max_length=400)
    active_seconds = serializers.FloatField(required=False, allow_null=True, min_value=0, max_value=MAX_ITEM_SECONDS)


class ComparisonSubmitOutputSerializer(serializers.Serializer):
    pair = serializers.CharField()
    revision = serializers.IntegerField()
    created = serializers.BooleanField()
    answers = serializers.DictField(child=serializers.CharField())
    submitted_at = serializers.DateTimeField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()


def _side_by_side_study(request, study_id: int):
    study = get_judged_study(request, study_id)
    if not SIDE_BY_SIDE.is_protocol_of(study):
        raise OtherProtocol("This study is not a side-by-side comparison.")
    return study


class ComparisonNextPairApi(APIView):
    @extend_schema(
        tags=TAG_JUDGE,
        responses={
            200: ComparisonNextSerializer,
            404: OpenApiResponse(description="not your study"),
            409: OpenApiResponse(description="study not open or not a comparison"),
        },
        summary="Your next pair to compare (the resume point)",
    )
    def get(self, request, study_id: int):
        try:
            study = _side_by_side_study(request, study_id)
            pair, done, total = next_entry_for_api(request, study)
        except JudgingError as exc:
            return judging_error(exc)
        return Response(
            ComparisonNextSerializer(
                {
                    "finished": pair is None,
                    "done": done,
                    "total": total,
                    "questions": comparison.questions(study.judging_design),
                    "pair": pair,
                }
            ).data
        )


class ComparisonPairDetailApi(APIView):
    @extend_schema(
        tags=TAG_JUDGE,
        responses={200: ComparisonPairSerializer, 404: OpenApiResponse(description="not yours")},
        summary="One pair of your assignment (to revise your answer)",
    )
    def get(self, request, study_id: int, token: str):
        try:
            study = _side_by_side_study(request, study_id)
            pair = SIDE_BY_SIDE.entry_for_token(study=study, judge=request.user, token=token)
        except JudgingError as exc:
            return judging_error(exc)
        return Response(ComparisonPairSerializer(pair).data)


class ComparisonSubmitApi(APIView):
    @extend_schema(
        tags=TAG_JUDGE,
        request=ComparisonSubmitInputSerializer,
        responses={
            201: ComparisonSubmitOutputSerializer,
            200: ComparisonSubmitOutputSerializer,
            400: OpenApiResponse(description="invalid answers or stamp"),
            404: OpenApiResponse(description="not your pair"),
            409: OpenApiResponse(description="study not open, or key reused"),
        },
        summary="Submit (or revise) your answers for a pair: A (left) better, tie, or B (right) better",
        description="Idempotent on `key`, like the absolute protocol's judgments.",
    )
    def post(self, request, study_id: int):
        try:  # who may answer first (404), then what they sent (400)
            study = _side_by_side_study(request, study_id)
        except JudgingError as exc:
            return judging_error(exc)
        data = ComparisonSubmitInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        try:  # a pair or an attention pair: one path, one answer (sbs_screening.answer_submit)
            result = sbs_screening.answer_submit(
                study=study,
                judge=request.user,
                token=v["pair"],
                key=v["key"],
                answers=dict(v["answers"]),
                serve_stamp=v["serve_stamp"],
                active_seconds=v.get("active_seconds"),
                source=JudgmentSource.API,
            )
        except JudgingError as exc:
            return judging_error(exc)
        judgment, created = result.judgment, result.created
        assignment = judgment.item.assignment
        done, total = progress_among_checks(
            assignment=assignment,
            done=ComparisonItem.objects.filter(assignment=assignment, done_at__isnull=False).count(),
        )
        return Response(
            ComparisonSubmitOutputSerializer(
                {
                    "pair": v["pair"],
                    "revision": judgment.revision,
                    "created": created,
                    "answers": judgment.values,
                    "submitted_at": judgment.submitted_at,
                    "done": done,
                    "total": total,
                }
            ).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )
