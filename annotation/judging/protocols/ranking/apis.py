"""Ranking API: the judge's sets (by opaque tokens) and orders.

Same rules as the other protocols' APIs: a study the user does not judge is a 404; a set
carries only texts, named by their place on the screen (1..k), positions and tokens —
never a system, a control flag or a database id. An order is sent as screen places, best
first, ties as lists (``[2, [1, 3], 4]``); scores as place → 0–100.
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
from . import screening as rank_screening
from .unit import RANKING


class RankingCandidateSerializer(serializers.Serializer):
    place = serializers.IntegerField(help_text="Its place on the screen, 1..k: the name to use in an order.")
    text = serializers.CharField()


class RankingEntrySerializer(EntrySerializer):
    original = serializers.CharField()
    candidates = serializers.SerializerMethodField()
    order = serializers.JSONField(allow_null=True, help_text="Your latest order (places best first, ties as lists).")
    scores = serializers.SerializerMethodField()
    asks_scores = serializers.BooleanField(help_text="Whether a 0–100 score is asked for each candidate.")

    def get_candidates(self, entry) -> list[dict]:
        return [{"place": p, "text": t} for p, t in zip(entry.places, entry.candidates)]

    def get_scores(self, entry) -> dict[str, float]:
        return {str(p): v for p, v in sorted(entry.scores.items())}


class RankingNextSerializer(NextSerializer):
    ranking = RankingEntrySerializer(allow_null=True)


class RankingSubmitInputSerializer(SubmitInputSerializer):
    ranking = serializers.CharField(max_length=64, help_text="The set's token.")
    order = serializers.JSONField(help_text="Screen places best first, ties as lists: [2, [1, 3], 4].")
    scores = serializers.JSONField(required=False, allow_null=True, help_text="Place → 0–100, when asked.")


class RankingSubmitOutputSerializer(SubmitOutputSerializer):
    ranking = serializers.CharField()
    order = serializers.JSONField()
    scores = serializers.JSONField()


def _answer(study, judge, token: str, result) -> dict:
    """The stored order and scores by screen place (the set read back as the judge sees it)."""
    entry = rank_screening.entry_for_judge(study=study, judge=judge, token=token)
    return {"order": entry.order, "scores": {str(p): s for p, s in sorted(entry.scores.items())}}


RankingNextApi, RankingDetailApi, RankingSubmitApi = judge_api_views(
    JudgeApiSpec(
        unit=RANKING,
        not_protocol="This study is not a ranking study.",
        token_field="ranking",
        entry_serializer=RankingEntrySerializer,
        next_serializer=RankingNextSerializer,
        submit_input=RankingSubmitInputSerializer,
        submit_output=RankingSubmitOutputSerializer,
        answer_sent=lambda v: {"order": v["order"], "scores": v.get("scores")},
        answer=_answer,
        words={
            "wrong_study": "study not open or not a ranking study",
            "next": "Your next set to rank (the resume point)",
            "detail": "One set of your assignment (to revise your order)",
            "submit": "Submit (or revise) your order of a set: screen places best first, ties as lists",
            "submit_description": "Idempotent on `key`, like the other protocols' judgments.",
            "bad_request": "a bad order (a place missing, twice or unknown), bad scores or stamp",
            "not_yours": "not your set",
        },
    )
)
