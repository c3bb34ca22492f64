"""The annotator's operations: their assigned pairs, autosaved drafts and submissions (the grid page uses these)."""

from __future__ import annotations

from typing import Any, cast

from django.contrib import messages
from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from django.utils import translation
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.alignment.services.drafts import (
    AssignmentClosed,
    AssignmentConflict,
    assignment_draft_save,
    assignment_submit,
    links_count_check,
)
from annotation.selectors import ROLE_CONFLICT_HOLD_MESSAGE, user_role_conflict

from .. import selectors
from ..models import AlignmentAssignment
from ._shared import AlignmentErrorSerializer, link_list_field, validation_error_response


def get_own_assignment(request, assignment_id: int) -> AlignmentAssignment:
    """The assignment if it belongs to the requesting annotator (404 if absent, 403 if someone else's)."""
    found = get_object_or_404(AlignmentAssignment.objects.select_related("pair"), pk=assignment_id)
    assignment = selectors.assignment_for_annotator(assignment_id=assignment_id, user=request.user)
    if assignment is None:
        if found.annotator_id == request.user.pk and user_role_conflict(study=found.pair.study_id, user=request.user):
            raise PermissionDenied(ROLE_CONFLICT_HOLD_MESSAGE)
        raise PermissionDenied("This pair is assigned to someone else.")
    return assignment


class AlignmentAssignmentOutputSerializer(serializers.Serializer):
    """One of the annotator's pairs. Never the study's name or the researcher's pair id
    (either may say where a sentence comes from): the study's participant title and
    the pair's number in the annotator's own list instead."""

    id = serializers.IntegerField()
    study_title = serializers.CharField(source="pair.study.participant_title")
    pair_number = serializers.SerializerMethodField()
    tokens1 = serializers.ListField(child=serializers.CharField(), source="pair.tokens1")
    tokens2 = serializers.ListField(child=serializers.CharField(), source="pair.tokens2")
    status = serializers.CharField()
    revision = serializers.IntegerField()
    sure = link_list_field()
    possible = link_list_field()
    active_seconds = serializers.FloatField()
    server_seconds = serializers.FloatField(allow_null=True)
    submitted_at = serializers.DateTimeField(allow_null=True)

    def get_pair_number(self, assignment) -> int | None:
        numbers = self.context.get("numbers")
        if numbers is None:
            # The serializer's context is the caller's dict: one look-up serves the whole list.
            numbers = cast("dict[str, Any]", self.context)["numbers"] = selectors.pair_numbers_for_annotator(
                user=assignment.annotator
            )
        return numbers.get(assignment.pk)


class AlignmentAssignmentListApi(APIView):
    @extend_schema(responses=AlignmentAssignmentOutputSerializer(many=True), summary="Your assigned pairs")
    def get(self, request):
        return Response(
            AlignmentAssignmentOutputSerializer(selectors.assignments_for_annotator(user=request.user), many=True).data
        )


class AlignmentAssignmentDetailApi(APIView):
    @extend_schema(responses=AlignmentAssignmentOutputSerializer, summary="One of your pairs with its current links")
    def get(self, request, assignment_id: int):
        return Response(AlignmentAssignmentOutputSerializer(get_own_assignment(request, assignment_id)).data)


class AlignmentLinksInputSerializer(serializers.Serializer):
    sure = link_list_field(default=list)
    possible = link_list_field(default=list)
    revision = serializers.IntegerField(min_value=0, help_text="The revision these links were based on.")
    active_seconds = serializers.FloatField(min_value=0, default=0.0)


class AlignmentDraftOutputSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    status = serializers.CharField()
    saved_at = serializers.DateTimeField()


class AlignmentConflictSerializer(serializers.Serializer):
    detail = serializers.CharField()
    revision = serializers.IntegerField()


def _save(request, assignment_id: int, service):
    assignment = get_own_assignment(request, assignment_id)
    # Count before the serializer walks every coordinate: validating a million
    # links field by field costs seconds of CPU per request.
    raw = request.data
    counted = [raw.get(k) for k in ("sure", "possible")] if hasattr(raw, "get") else []
    try:
        links_count_check(assignment.pair, sum(len(v) for v in counted if isinstance(v, list)))
    except DjangoValidationError as exc:
        return None, validation_error_response(exc)
    data = AlignmentLinksInputSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    # The grid shows the refusal's detail to the annotator: in their study's language.
    with translation.override(assignment.pair.study.language):
        return _save_validated(assignment, service, data.validated_data)


def _save_validated(assignment, service, validated: dict):
    try:
        return service(assignment=assignment, **validated), None
    except AssignmentConflict as exc:
        return None, Response({"detail": str(exc), "revision": exc.current_revision}, status=status.HTTP_409_CONFLICT)
    except AssignmentClosed as exc:
        return None, Response({"detail": str(exc), "revision": assignment.revision}, status=status.HTTP_409_CONFLICT)
    except DjangoValidationError as exc:
        return None, validation_error_response(exc)


class AlignmentDraftSaveApi(APIView):
    @extend_schema(
        request=AlignmentLinksInputSerializer,
        responses={
            200: AlignmentDraftOutputSerializer,
            400: AlignmentErrorSerializer,
            409: AlignmentConflictSerializer,
        },
        summary="Autosave the draft links of one of your pairs",
        description="Refused with 409 when `revision` is not the stored one (another tab saved) or the pair is submitted.",
    )
    def put(self, request, assignment_id: int):
        assignment, error = _save(request, assignment_id, assignment_draft_save)
        if error is not None:
            return error
        return Response(
            AlignmentDraftOutputSerializer(
                {"revision": assignment.revision, "status": assignment.status, "saved_at": assignment.draft_saved_at}
            ).data
        )


class AlignmentSubmitOutputSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    status = serializers.CharField()
    submitted_at = serializers.DateTimeField()
    server_seconds = serializers.FloatField()
    active_seconds = serializers.FloatField()
    next_url = serializers.CharField()


class AlignmentSubmitApi(APIView):
    @extend_schema(
        request=AlignmentLinksInputSerializer,
        responses={
            200: AlignmentSubmitOutputSerializer,
            400: AlignmentErrorSerializer,
            409: AlignmentConflictSerializer,
        },
        summary="Submit the final links of one of your pairs",
    )
    def post(self, request, assignment_id: int):
        from django.urls import reverse

        assignment, error = _save(request, assignment_id, assignment_submit)
        if error is not None:
            return error
        nxt = selectors.assignment_next_for_annotator(user=request.user, after=assignment)
        next_url = reverse("alignment:grid", kwargs={"assignment_id": nxt.pk}) if nxt else reverse("alignment:home")
        if isinstance(request.successful_authenticator, SessionAuthentication):
            # The grid page moves on to next_url: confirm there that the pair was submitted.
            # Shown on the annotator's next page, so in their study's language. The pair is
            # named by the annotator's own number ("Pair 3" on the grid and the task list),
            # never by the researcher's pair id, which can name a system (docs/people.md).
            number = selectors.pair_numbers_for_annotator(user=request.user).get(assignment.pk, "")
            with translation.override(assignment.pair.study.language):
                messages.success(
                    request._request,
                    (
                        _("Alignment of pair “%(pair)s” submitted.") % {"pair": number}
                        + " "
                        + (_("Here is your next pair.") if nxt else _("You have submitted every pair assigned to you."))
                    ),
                )
        return Response(
            AlignmentSubmitOutputSerializer(
                {
                    "revision": assignment.revision,
                    "status": assignment.status,
                    "submitted_at": assignment.submitted_at,
                    "server_seconds": assignment.server_seconds,
                    "active_seconds": assignment.active_seconds,
                    "next_url": next_url,
                }
            ).data
        )
