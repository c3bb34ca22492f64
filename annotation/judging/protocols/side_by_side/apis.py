"""Side-by-side comparison API: the judge's pairs (by opaque tokens) and answers.

Same rules as every protocol's judge API (:mod:`annotation.judging.apis.protocol`): a study the user does not
judge is a 404; a pair carries only texts ("a" is the one shown on the left, "b" on
the right), positions and tokens — never a system, a control flag or a database id.
"""

from __future__ import annotations

from rest_framework import serializers

from ...apis.protocol import JudgeApiSpec, judge_api_views
from ...enums import COMPARISON_ANSWERS, MAX_ITEM_SECONDS
from ...services.submission import KEY_MAX_LENGTH, KEY_MIN_LENGTH
from . import services as side_by_side
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


ComparisonNextPairApi, ComparisonPairDetailApi, ComparisonSubmitApi = judge_api_views(
    JudgeApiSpec(
        unit=SIDE_BY_SIDE,
        not_protocol="This study is not a side-by-side comparison.",
        token_field="pair",
        entry_field="pair",
        entry_serializer=ComparisonPairSerializer,
        next_serializer=ComparisonNextSerializer,
        submit_input=ComparisonSubmitInputSerializer,
        submit_output=ComparisonSubmitOutputSerializer,
        answer_sent=lambda v: {"answers": dict(v["answers"])},
        answer=lambda study, judge, token, result: {"answers": result.judgment.values},
        next_extra=lambda study: {"questions": side_by_side.questions(study.judging_design)},
        words={
            "wrong_study": "study not open or not a comparison",
            "next": "Your next pair to compare (the resume point)",
            "detail": "One pair of your assignment (to revise your answer)",
            "submit": "Submit (or revise) your answers for a pair: A (left) better, tie, or B (right) better",
            "submit_description": "Idempotent on `key`, like the absolute protocol's judgments.",
            "bad_request": "invalid answers or stamp",
            "not_yours": "not your pair",
        },
    )
)
