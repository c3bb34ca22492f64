"""The judge's three endpoints of a protocol with a page of its own, written once.

Every such protocol (ESA, ranking, side by side, and the next one) answers the same three
requests the same way: the next entry (the resume point, as its page's, through
:func:`next_entry_for_api`), one entry of the judge's own assignment by its token (to revise
it), and a submission (an item or an attention check: one path, one answer, the unit's
``answer_submit``). A study the user
does not judge is a 404, another protocol's a 409; the schema names each protocol's own
serializers. What differs is the protocol's and is declared in a :class:`JudgeApiSpec`: its
serializers, the name of the token field, what the next answer adds (ESA's categories, side by
side's questions), its own part of a submission, and the answer
fields a stored judgment sends back. :func:`judge_api_views` builds the three views from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Study

from .. import screening
from ..enums import MAX_ITEM_SECONDS, JudgmentSource
from ..errors import JudgingError, OtherProtocol
from ..protocols.registry import protocol_for_study
from ..selectors.judge import progress_among_checks
from ..services.submission import KEY_MAX_LENGTH, KEY_MIN_LENGTH
from ..web import TAG_JUDGE, judging_error
from .judge import get_judged_study, open_assignment_for_judge


def next_entry_for_api(request, study: Study) -> tuple[Any, int, int]:
    """The next-item endpoint of a protocol with a page of its own, as its page's resume point
    (:class:`annotation.judging.web.JudgePages`): a waiting attention check drawn like any item,
    the gate (screened out, training first) refused as ``JudgingError``, else the next item
    (None: finished); with the counts the item shows, the checks among the items included."""
    unit = protocol_for_study(study=study)
    assignment = open_assignment_for_judge(request, study)
    done = unit.items_done(assignment=assignment)
    gate = screening.judge_gate(assignment=assignment, done=done)
    if gate is not None and gate[0] == "attention":  # a check, served like any item
        assert gate[1] is not None  # judge_gate pairs "attention" with its check
        entry = unit.entry_attention(check=gate[1])
    else:
        screening.judge_gate_raise(assignment=assignment, done=done)  # screened out, or the training first
        entry = unit.entry_next(assignment=assignment)
    shown_done, total = progress_among_checks(assignment=assignment, done=done)
    return entry, shown_done, total


# --- what every protocol's entry, next answer and submission carry --------------------------
# A protocol's serializers extend these with its texts and its answer (the schema lists these
# fields first).


class EntrySerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Opaque id of this entry in your assignment.")
    position = serializers.IntegerField(help_text="1-based place in your order.")
    total = serializers.IntegerField()
    done = serializers.IntegerField(help_text="Entries you have answered so far.")
    revision = serializers.IntegerField(help_text="How many times you answered it (0: not yet).")
    previous = serializers.CharField(allow_null=True, source="previous_token", help_text="The entry before it.")
    serve_stamp = serializers.CharField(help_text="Send it back with your answer: the server times you with it.")
    context_shown = serializers.BooleanField(help_text="Whether this study shows document context.")
    context_before = serializers.ListField(child=serializers.CharField())
    context_after = serializers.ListField(child=serializers.CharField())


class NextSerializer(serializers.Serializer):
    finished = serializers.BooleanField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()


class SubmitInputSerializer(serializers.Serializer):
    key = serializers.CharField(
        min_length=KEY_MIN_LENGTH,
        max_length=KEY_MAX_LENGTH,
        help_text="Your idempotency key: a new random string per answer, the same on a retry.",
    )
    serve_stamp = serializers.CharField(max_length=400)
    active_seconds = serializers.FloatField(required=False, allow_null=True, min_value=0, max_value=MAX_ITEM_SECONDS)


class SubmitOutputSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    created = serializers.BooleanField(help_text="False when this key was already stored (a retry).")
    submitted_at = serializers.DateTimeField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()


@dataclass(frozen=True)
class JudgeApiSpec:
    """What a protocol's three judge endpoints declare (the rest is :func:`judge_api_views`'s).

    ``token_field`` names the entry in the next answer and its token in the submission and
    its answer (``"item"``, ``"ranking"``, ``"pair"``). ``answer_sent``
    reads the protocol's own part of a submission from the validated data (the keyword
    arguments of the unit's ``answer_submit``: spans and score, order and scores, answers);
    ``answer`` gives the protocol's own fields of the stored answer (the spans and
    score, the order, the answers) from the study, the judge, the token and that result.
    ``not_protocol`` is the 409's message for another protocol's study; ``words`` are the
    schema's summaries and descriptions: ``next``, ``detail``, ``submit`` and
    ``submit_description``, and the errors ``wrong_study`` (409), ``bad_request`` (400) and
    ``not_yours`` (404).
    """

    unit: Any
    not_protocol: str
    token_field: str
    entry_serializer: type[serializers.Serializer]
    next_serializer: type[serializers.Serializer]
    submit_input: type[serializers.Serializer]
    submit_output: type[serializers.Serializer]
    answer_sent: Callable[[dict], dict[str, Any]]
    answer: Callable[[Study, Any, str, Any], dict[str, Any]]
    words: dict[str, str]
    next_extra: Callable[[Study], dict[str, Any]] = field(default=lambda study: {})


def judge_api_views(spec: JudgeApiSpec) -> tuple[type[APIView], type[APIView], type[APIView]]:
    """The next-entry, entry-detail and submit views of one protocol, from its declaration."""
    words = spec.words

    def study_of(request, study_id: int) -> Study:
        study = get_judged_study(request, study_id)
        if not spec.unit.is_protocol_of(study):
            raise OtherProtocol(spec.not_protocol)
        return study

    class NextApi(APIView):
        judge_api = spec  # what it serves, read by the protocol conformance tests

        @extend_schema(
            tags=TAG_JUDGE,
            responses={
                200: spec.next_serializer,
                404: OpenApiResponse(description="not your study"),
                409: OpenApiResponse(description=words["wrong_study"]),
            },
            summary=words["next"],
        )
        def get(self, request, study_id: int):
            try:
                study = study_of(request, study_id)
                entry, done, total = next_entry_for_api(request, study)
            except JudgingError as exc:
                return judging_error(exc)
            answer = {"finished": entry is None, "done": done, "total": total, spec.token_field: entry}
            return Response(spec.next_serializer({**answer, **spec.next_extra(study)}).data)

    class DetailApi(APIView):
        judge_api = spec  # what it serves, read by the protocol conformance tests

        @extend_schema(
            tags=TAG_JUDGE,
            responses={200: spec.entry_serializer, 404: OpenApiResponse(description="not yours")},
            summary=words["detail"],
        )
        def get(self, request, study_id: int, token: str):
            try:
                study = study_of(request, study_id)
                entry = spec.unit.entry_for_token(study=study, judge=request.user, token=token)
            except JudgingError as exc:
                return judging_error(exc)
            return Response(spec.entry_serializer(entry).data)

    class SubmitApi(APIView):
        judge_api = spec  # what it serves, read by the protocol conformance tests

        @extend_schema(
            tags=TAG_JUDGE,
            request=spec.submit_input,
            responses={
                201: spec.submit_output,
                200: spec.submit_output,
                400: OpenApiResponse(description=words["bad_request"]),
                404: OpenApiResponse(description=words["not_yours"]),
                409: OpenApiResponse(description="study not open, or key reused"),
            },
            summary=words["submit"],
            description=words["submit_description"],
        )
        def post(self, request, study_id: int):
            try:  # who may answer first (404), then what they sent (400)
                study = study_of(request, study_id)
            except JudgingError as exc:
                return judging_error(exc)
            data = spec.submit_input(data=request.data)
            data.is_valid(raise_exception=True)
            v = data.validated_data
            token = v[spec.token_field]
            try:  # an item or an attention check: one path, one answer (the protocol's answer_submit)
                result = spec.unit.answer_submit(
                    study=study,
                    judge=request.user,
                    token=token,
                    key=v["key"],
                    serve_stamp=v["serve_stamp"],
                    active_seconds=v.get("active_seconds"),
                    source=JudgmentSource.API,
                    **spec.answer_sent(v),
                )
                answer = spec.answer(study, request.user, token, result)
            except JudgingError as exc:
                return judging_error(exc)
            judgment, created = result.judgment, result.created
            assignment = judgment.item.assignment
            done, total = progress_among_checks(assignment=assignment, done=spec.unit.items_done(assignment=assignment))
            payload = {
                spec.token_field: token,
                "revision": judgment.revision,
                "created": created,
                "submitted_at": judgment.submitted_at,
                "done": done,
                "total": total,
                **answer,
            }
            return Response(
                spec.submit_output(payload).data,
                status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
            )

    # Named after the protocol, as they show in tracebacks, logs and the browsable API.
    prefix = type(spec.unit).__name__.removesuffix("Protocol")
    for view in (NextApi, DetailApi, SubmitApi):
        view.__name__ = view.__qualname__ = f"{prefix}{view.__name__}"
    return NextApi, DetailApi, SubmitApi
