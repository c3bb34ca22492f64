"""Side-by-side comparison API: the judge's pairs (by opaque tokens) and answers.

Same rules as every protocol's judge API (:mod:`annotation.judging.apis.protocol`): a study the user does not
judge is a 404; a pair carries only texts ("a" is the one shown on the left, "b" on
the right), positions and tokens — never a system, a control flag or a database id.
"""

from __future__ import annotations

from rest_framework import serializers

from ...apis.protocol import (
    EntrySerializer,
    JudgeApiSpec,
    NextSerializer,
    SubmitInputSerializer,
    SubmitOutputSerializer,
    judge_api_views,
)
from ...enums import COMPARISON_ANSWERS
from . import services as side_by_side
from .unit import SIDE_BY_SIDE


class ComparisonPairSerializer(EntrySerializer):
    original = serializers.CharField()
    a = serializers.CharField(help_text="Paraphrase A (shown on the left).")
    b = serializers.CharField(help_text="Paraphrase B (shown on the right).")
    answers = serializers.DictField(
        child=serializers.ChoiceField(choices=COMPARISON_ANSWERS),
        allow_null=True,
        help_text="Your latest answers, if you answered it before.",
    )


class ComparisonQuestionSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    help = serializers.CharField(allow_blank=True)


class ComparisonNextSerializer(NextSerializer):
    questions = ComparisonQuestionSerializer(many=True)
    pair = ComparisonPairSerializer(allow_null=True)


class ComparisonSubmitInputSerializer(SubmitInputSerializer):
    pair = serializers.CharField(max_length=64, help_text="The pair's token.")
    answers = serializers.DictField(child=serializers.CharField(), help_text="Question slug → A, tie or B.")


class ComparisonSubmitOutputSerializer(SubmitOutputSerializer):
    pair = serializers.CharField()
    answers = serializers.DictField(child=serializers.CharField())


ComparisonNextPairApi, ComparisonPairDetailApi, ComparisonSubmitApi = judge_api_views(
    JudgeApiSpec(
        unit=SIDE_BY_SIDE,
        not_protocol="This study is not a side-by-side comparison.",
        token_field="pair",
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
