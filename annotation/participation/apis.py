"""REST API for field studies: join links, consent/questions settings, the participants export."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.enums import Platform, Role
from annotation.models import JoinLink
from annotation.web import get_managed_study

from . import selectors, services


class JoinLinkInputSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=[Role.JUDGE, Role.ANNOTATOR])
    platform = serializers.ChoiceField(choices=Platform.values, default=Platform.LINK)
    # A field named like Field.label: DRF's metaclass takes it out of the class attributes;
    # the stubs see an attribute of the serializer itself.
    label = serializers.CharField(required=False, allow_blank=True, default="", max_length=120)  # type: ignore[assignment]
    max_participants = serializers.IntegerField(required=False, allow_null=True, min_value=1, default=None)
    ends_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    timeout_minutes = serializers.IntegerField(required=False, min_value=1, default=60)
    items_per_participant = serializers.IntegerField(required=False, allow_null=True, min_value=1, default=None)
    completion_url = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)
    completion_code = serializers.CharField(required=False, allow_blank=True, default="", max_length=64)
    screen_out_code = serializers.CharField(required=False, allow_blank=True, default="", max_length=64)


class JoinLinkOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    role = serializers.CharField()
    platform = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # a field named like Field.label, as above
    url = serializers.SerializerMethodField()
    max_participants = serializers.IntegerField(allow_null=True)
    ends_at = serializers.DateTimeField(allow_null=True)
    closed_at = serializers.DateTimeField(allow_null=True)
    timeout_minutes = serializers.IntegerField()
    items_per_participant = serializers.IntegerField(allow_null=True)
    completion_url = serializers.CharField()
    completion_code = serializers.CharField()
    screen_out_code = serializers.CharField()
    created_at = serializers.DateTimeField()

    def get_url(self, link) -> str:
        return self.context["request"].build_absolute_uri(f"/join/{link.token}/")


def _field_errors(exc: DjangoValidationError) -> dict:
    return exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}


class JoinLinkListApi(APIView):
    @extend_schema(responses=JoinLinkOutputSerializer(many=True), summary="List a study's join links")
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        return Response(
            JoinLinkOutputSerializer(
                selectors.join_links_for_study(study=study), many=True, context={"request": request}
            ).data
        )

    @extend_schema(
        request=JoinLinkInputSerializer,
        responses={201: JoinLinkOutputSerializer},
        summary="Make a join link for judges or annotators",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = JoinLinkInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            link = services.join_link_create(study=study, created_by=request.user, **data.validated_data)
        except DjangoValidationError as exc:
            return Response(_field_errors(exc), status=status.HTTP_400_BAD_REQUEST)
        return Response(
            JoinLinkOutputSerializer(link, context={"request": request}).data, status=status.HTTP_201_CREATED
        )


class JoinLinkCloseApi(APIView):
    @extend_schema(request=None, responses=JoinLinkOutputSerializer, summary="Close a join link (nobody new joins)")
    def post(self, request, study_id: int, link_id: int):
        study = get_managed_study(request, study_id)
        link = services.join_link_close(link=get_object_or_404(JoinLink, pk=link_id, study=study))
        return Response(JoinLinkOutputSerializer(link, context={"request": request}).data)


class ParticipationSettingsSerializer(serializers.Serializer):
    consent_text = serializers.CharField(allow_blank=True, default="")
    # The stubs type a JSONField's default as a mapping; a JSON array is as valid.
    questions_before = serializers.JSONField(default=list)  # type: ignore[arg-type]
    questions_after = serializers.JSONField(default=list)  # type: ignore[arg-type]


class ParticipationSettingsApi(APIView):
    @extend_schema(
        request=ParticipationSettingsSerializer,
        responses=ParticipationSettingsSerializer,
        summary="Set the consent text and the questions before and after the work",
    )
    def put(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        if not request.data:
            # An empty body is never "clear everything": it is a client that sent nothing (or a body
            # this server could not read). Clearing takes explicit empty values.
            return Response(
                {
                    "non_field_errors": [
                        "The request body is empty: send consent_text, questions_before "
                        "and questions_after (empty values clear them)."
                    ]
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        data = ParticipationSettingsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            row = services.participation_settings_update(study=study, **data.validated_data)
        except DjangoValidationError as exc:
            return Response(_field_errors(exc), status=status.HTTP_400_BAD_REQUEST)
        return Response(ParticipationSettingsSerializer(row).data)


class ParticipantOutputSerializer(serializers.Serializer):
    pseudonym = serializers.CharField()
    role = serializers.CharField()
    platform = serializers.CharField()
    platform_id = serializers.CharField()
    platform_study_id = serializers.CharField()
    platform_session_id = serializers.CharField()
    status = serializers.CharField(help_text="active, completed, screened_out or timed_out")
    joined_at = serializers.DateTimeField()
    items_done = serializers.IntegerField()
    items_total = serializers.IntegerField()
    active_seconds = serializers.FloatField()
    qc_verdict = serializers.CharField()
    completion_code = serializers.CharField()
    answers = serializers.DictField(help_text='{"before": {name: answer}, "after": {...}}')


class ParticipantListApi(APIView):
    @extend_schema(
        responses=ParticipantOutputSerializer(many=True),
        summary="A study's participants: status, work done, active time, QC verdict, code, answers",
    )
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        rows = selectors.participants_rows(study=study, sort=request.query_params.get("sort", "joined_at"))
        return Response(ParticipantOutputSerializer(rows, many=True).data)
