"""Training and screening API: the researcher's training items and rules, the judge's
training round and attention checks (the same services as the pages)."""

from __future__ import annotations

from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.web import get_managed_study
from metrics.core.tabular import FORMATS, TabularError

from . import screening, training
from .apis.judge import get_judged_study, open_assignment_for_judge
from .enums import AttentionPolicy
from .errors import JudgingError
from .models import AttentionCheck, ScreeningSettings
from .protocols.registry import protocol_for_study
from .web import TAG_JUDGE, TAG_RESEARCHER, judging_error


class TrainingItemSerializer(serializers.Serializer):
    token = serializers.CharField(read_only=True)
    position = serializers.IntegerField(read_only=True)
    original = serializers.CharField()
    candidate = serializers.CharField(required=False, help_text="The paraphrase (side by side: paraphrase A).")
    a = serializers.CharField(required=False, write_only=True, help_text="Side by side: paraphrase A.")
    b = serializers.CharField(required=False, write_only=True, help_text="Side by side: paraphrase B.")
    expected = serializers.DictField(
        child=serializers.JSONField(),
        help_text=(
            "Criterion slug → reference value; side by side: question slug → A, tie or B (stored as "
            '{"b": paraphrase B, "answers": {...}}); ranking: {"candidates": [paraphrases 2..k], '
            '"reference": [2, [1, 3]]} (stored as {"others": [...], "reference": [...]}).'
        ),
    )
    explanation = serializers.CharField(required=False, allow_blank=True, default="")


class ScreeningSettingsSerializer(serializers.Serializer):
    training_criteria = serializers.ListField(child=serializers.CharField(), required=False)
    training_tolerance = serializers.FloatField(
        required=False, min_value=0, help_text="± points on point scales (criteria not in training_tolerances)."
    )
    training_tolerances = serializers.DictField(
        child=serializers.FloatField(min_value=0, allow_null=True),
        required=False,
        help_text='Criterion slug → tolerance on its scale, e.g. {"meaning": 10} for ±10 on a 0–100 slider; '
        "categories must be 0 (exact). A criterion not named uses its scale's default.",
    )
    training_required = serializers.IntegerField(required=False, min_value=0)
    training_retries = serializers.IntegerField(required=False, min_value=0, max_value=10)
    training_items_per_attempt = serializers.IntegerField(required=False, min_value=0, max_value=50)
    attention_count = serializers.IntegerField(required=False, min_value=0, max_value=50)
    attention_policy = serializers.ChoiceField(choices=AttentionPolicy.choices, required=False)
    attention_max_failures = serializers.IntegerField(required=False, min_value=1)
    qc_auto = serializers.BooleanField(required=False)
    qc_auto_pvalue = serializers.FloatField(required=False)
    qc_auto_min_controls = serializers.IntegerField(required=False, min_value=1)


def _settings_payload(study) -> dict:
    settings = screening.settings_for_study(study=study) or ScreeningSettings(study=study)
    out = ScreeningSettingsSerializer(settings).data
    items = training.training_items(study=study)
    out["training_items"] = TrainingItemSerializer(items, many=True).data
    out["training_pool_warning"] = training.training_pool_warning(
        n_items=len(items), per_attempt=out.get("training_items_per_attempt") or 0
    )
    out["screened_out"] = [
        {"judge": name, "rule": a.screened_out_rule, "reason": a.screened_out_reason, "at": a.screened_out_at}
        for name, a in sorted(screening.judges_screened_out(study=study).items())
    ]
    return out


class ScreeningApi(APIView):
    @extend_schema(
        tags=TAG_RESEARCHER,
        responses={200: OpenApiResponse(description="rules, training items, screened-out judges")},
        summary="Training items, screening rules and who was screened out",
    )
    def get(self, request, study_id: int):
        return Response(_settings_payload(get_managed_study(request, study_id)))


class ScreeningUpdateApi(APIView):
    @extend_schema(
        tags=TAG_RESEARCHER,
        request=ScreeningSettingsSerializer,
        responses={200: OpenApiResponse(description="the rules"), 400: OpenApiResponse(description="invalid")},
        summary="Change the screening rules (partial)",
    )
    def patch(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = ScreeningSettingsSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        try:
            screening.screening_settings_update(study=study, changes=dict(data.validated_data))
        except JudgingError as exc:
            return judging_error(exc)
        return Response(_settings_payload(study))


class TrainingItemAddApi(APIView):
    @extend_schema(
        tags=TAG_RESEARCHER,
        request=TrainingItemSerializer,
        responses={
            201: TrainingItemSerializer,
            400: OpenApiResponse(description="invalid item"),
            409: OpenApiResponse(description="judges have started the training"),
        },
        summary="Add a training item",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = TrainingItemSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        row = {k: v[k] for k in ("original", "candidate", "a", "b") if k in v}
        row = {**row, "explanation": v.get("explanation", ""), **dict(v["expected"])}
        try:
            item = training.training_item_add(study=study, row=row)
        except JudgingError as exc:
            return judging_error(exc)
        return Response(TrainingItemSerializer(item).data, status=status.HTTP_201_CREATED)


class TrainingItemDeleteApi(APIView):
    @extend_schema(tags=TAG_RESEARCHER, responses={204: None}, summary="Delete a training item")
    def delete(self, request, study_id: int, token: str):
        study = get_managed_study(request, study_id)
        try:
            training.training_item_delete(study=study, token=token)
        except JudgingError as exc:
            return judging_error(exc)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TrainingImportApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    class TrainingImportInputSerializer(serializers.Serializer):
        file = serializers.FileField()
        format = serializers.ChoiceField(choices=FORMATS, required=False)

    @extend_schema(
        tags=TAG_RESEARCHER,
        request={"multipart/form-data": TrainingImportInputSerializer},
        responses={
            201: OpenApiResponse(description="{items: n}"),
            400: OpenApiResponse(description="errors with line and column"),
        },
        summary="Replace the training items by a CSV/TSV/JSONL file (all or nothing)",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = self.TrainingImportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        try:
            n = training.training_items_import(
                study=study, data=upload.read(), filename=upload.name, fmt=data.validated_data.get("format")
            )
        except TabularError as exc:
            return Response(
                {
                    "detail": exc.describe(),
                    "errors": [
                        {"file": exc.filename, "line": i.line, "column": i.column, "message": i.message}
                        for i in exc.issues
                    ],
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        except JudgingError as exc:
            return judging_error(exc)
        return Response({"items": n}, status=status.HTTP_201_CREATED)


# --- the judge's side ----------------------------------------------------------------------


def _state_payload(state: training.TrainingState, study) -> dict:
    item = state.next_item
    unit = protocol_for_study(study=study)
    return {
        "items": state.n_items,
        "attempt": state.attempt,
        "attempts_allowed": state.attempts_allowed,
        "answered": state.answered,
        "right": state.right,
        "required": state.required,
        "passed": state.passed,
        "screened_out": state.screened_out,
        "next": None if item is None else unit.training_item_for_judge(item=item),
    }


class JudgeTrainingApi(APIView):
    @extend_schema(
        tags=TAG_JUDGE,
        responses={200: OpenApiResponse(description="your training state")},
        summary="Your training: progress and the next training pair",
    )
    def get(self, request, study_id: int):
        study = get_judged_study(request, study_id)
        try:
            assignment = open_assignment_for_judge(request, study)
        except JudgingError as exc:
            return judging_error(exc)
        return Response(_state_payload(training.training_state(assignment=assignment), study))


class JudgeTrainingAnswerApi(APIView):
    class TrainingAnswerInputSerializer(serializers.Serializer):
        item = serializers.CharField()
        scores = serializers.DictField(child=serializers.JSONField())

    @extend_schema(
        tags=TAG_JUDGE,
        request=TrainingAnswerInputSerializer,
        responses={
            201: OpenApiResponse(
                description="feedback: right or not, per criterion within / too_high / too_low "
                "(same / different for categories; agree / disagree per question side by side; never the "
                "reference value), "
                "the explanation, the state"
            )
        },
        summary="Answer a training pair and get its feedback",
    )
    def post(self, request, study_id: int):
        study = get_judged_study(request, study_id)
        data = self.TrainingAnswerInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            assignment = open_assignment_for_judge(request, study)
            answer, state = training.training_answer_submit(
                assignment=assignment, token=data.validated_data["item"], scores=dict(data.validated_data["scores"])
            )
        except JudgingError as exc:
            return judging_error(exc)
        return Response(
            {
                "correct": answer.correct,
                "scores": answer.values,
                "feedback": training.training_answer_feedback(answer=answer),
                "explanation": answer.item.explanation,
                "state": _state_payload(state, study),
            },
            status=status.HTTP_201_CREATED,
        )


class JudgeAttentionApi(APIView):
    class AttentionAnswerInputSerializer(serializers.Serializer):
        token = serializers.CharField()
        value = serializers.JSONField()

    @extend_schema(
        tags=TAG_JUDGE,
        responses={200: OpenApiResponse(description="the waiting check, or null")},
        summary="The attention check waiting for you (an instruction, not a pair)",
    )
    def get(self, request, study_id: int):
        study = get_judged_study(request, study_id)
        try:
            assignment = open_assignment_for_judge(request, study)
        except JudgingError as exc:
            return judging_error(exc)
        unit = protocol_for_study(study=study)
        if unit.attention_page != "judging:attention":  # drawn among the pairs: the pairs API serves them
            return Response({"check": None})
        done = unit.items_done(assignment=assignment)
        gate = screening.judge_gate(assignment=assignment, done=done)
        if gate is None or gate[0] != "attention":
            return Response({"check": None})
        assert gate[1] is not None  # judge_gate pairs "attention" with its check
        shown = screening.attention_for_judge(gate[1])
        return Response(
            {
                "check": {
                    "token": shown["token"],
                    "criterion": shown["criterion"]["slug"],
                    "value": shown["value"],
                    "instruction": (
                        f"This is an instruction, not a pair to rate: for “{shown['criterion']['name']}”, "
                        f"choose {shown['value']} ({shown['label']})."
                    ),
                }
            }
        )

    @extend_schema(
        tags=TAG_JUDGE,
        request=AttentionAnswerInputSerializer,
        responses={200: OpenApiResponse(description="result")},
        summary="Answer the attention check",
    )
    def post(self, request, study_id: int):
        study = get_judged_study(request, study_id)
        data = self.AttentionAnswerInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            assignment = open_assignment_for_judge(request, study)
            if protocol_for_study(study=study).attention_page != "judging:attention":
                # Drawn among the items: answered only as an item is (the protocol's submit,
                # with its key and serve stamp), or this door would tell a check's token from
                # an item's and take an answer with neither (issue 38 item 12).
                raise JudgingError(
                    gettext("There is no such attention check waiting."), field_errors={"token": ["unknown"]}
                )
            check, failures, ended = screening.attention_answer(
                assignment=assignment, token=data.validated_data["token"], value=data.validated_data["value"]
            )
        except JudgingError as exc:
            return judging_error(exc)
        return Response({"passed": check.passed, "failures": failures, "screened_out": ended})


__all__ = [
    "AttentionCheck",
    "JudgeAttentionApi",
    "JudgeTrainingAnswerApi",
    "JudgeTrainingApi",
    "ScreeningApi",
    "ScreeningUpdateApi",
    "TrainingImportApi",
    "TrainingItemAddApi",
    "TrainingItemDeleteApi",
]
