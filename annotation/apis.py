"""REST API for studies and imports: one view per operation, explicit serializers."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.importing.reading import FORMATS, StudyImportError
from annotation.services.membership import study_member_add, study_member_remove
from annotation.services.people import PARTICIPANT_ROLES, PeopleError, study_people_add_existing, study_people_create
from annotation.services.queueing import study_import_file
from annotation.services.studies import study_create, study_update
from config.parsers import read_upload

from . import selectors
from .enums import Role
from .models import ImportJob
from .web import get_managed_study


class SystemCountSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    n_candidates = serializers.IntegerField()


class StudyOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    participant_title = serializers.CharField(help_text="What judges and annotators see instead of the name.")
    language = serializers.CharField(help_text="Language code of the judge and annotator pages (settings.LANGUAGES).")
    description = serializers.CharField()
    status = serializers.CharField()
    owner = serializers.CharField(source="owner.username")
    created_at = serializers.DateTimeField()


class StudyDetailOutputSerializer(StudyOutputSerializer):
    originals = serializers.IntegerField()
    candidates = serializers.IntegerField()
    systems = SystemCountSerializer(many=True)
    role_conflicts = serializers.ListField(
        child=serializers.CharField(),
        help_text="Usernames that are both judge and annotator of this study (held out of both until a researcher "
        "removes one role with the member-remove endpoint).",
    )


class StudyListApi(APIView):
    @extend_schema(responses=StudyOutputSerializer(many=True), summary="Studies you manage")
    def get(self, request):
        studies = selectors.study_list_for_researcher(request.user)
        return Response(StudyOutputSerializer(studies, many=True).data)


class StudyCreateApi(APIView):
    class StudyCreateInputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        participant_title = serializers.CharField(max_length=120, required=False, allow_blank=True, default="")
        language = serializers.ChoiceField(
            choices=settings.LANGUAGES,
            required=False,
            default="en",
            help_text="Language of the judge and annotator pages.",
        )
        description = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema(request=StudyCreateInputSerializer, responses={201: StudyOutputSerializer}, summary="Create a study")
    def post(self, request):
        if not selectors.user_is_researcher(request.user):
            raise PermissionDenied("Only researchers may create studies.")
        data = self.StudyCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            study = study_create(owner=request.user, **data.validated_data)
        except (DjangoValidationError, IntegrityError) as exc:
            raise serializers.ValidationError(
                {"name": getattr(exc, "messages", ["A study with this name exists."])}
            ) from exc
        return Response(StudyOutputSerializer(study).data, status=status.HTTP_201_CREATED)


class StudyDetailApi(APIView):
    @extend_schema(responses=StudyDetailOutputSerializer, summary="A study with its counts per system")
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        counts = selectors.study_counts(study=study)
        payload = {
            f: getattr(study, f)
            for f in ("id", "name", "participant_title", "language", "description", "status", "owner", "created_at")
        }
        payload |= {
            "originals": counts["originals"],
            "candidates": counts["candidates"],
            "systems": counts["per_system"],
            "role_conflicts": [u.username for u in selectors.study_role_conflicts(study=study)],
        }
        return Response(StudyDetailOutputSerializer(payload).data)


def _validation_error(exc: DjangoValidationError) -> serializers.ValidationError:
    if hasattr(exc, "error_dict"):
        return serializers.ValidationError(exc.message_dict)
    return serializers.ValidationError({"detail": exc.messages})


class StudyUpdateApi(APIView):
    class StudyUpdateInputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200, required=False)
        participant_title = serializers.CharField(max_length=120, required=False)
        language = serializers.ChoiceField(
            choices=settings.LANGUAGES, required=False, help_text="Language of the judge and annotator pages."
        )
        description = serializers.CharField(required=False, allow_blank=True)

    @extend_schema(
        request=StudyUpdateInputSerializer,
        responses=StudyOutputSerializer,
        summary="Change a study's name, participant title, language or description",
    )
    def patch(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = self.StudyUpdateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        unknown = sorted(set(request.data) - set(data.fields)) if hasattr(request.data, "keys") else []
        if unknown:
            raise serializers.ValidationError({f: ["This field cannot be changed here."] for f in unknown})
        try:
            study = study_update(study=study, changes=data.validated_data)
        except DjangoValidationError as exc:
            raise _validation_error(exc) from None
        return Response(StudyOutputSerializer(study).data)


class MemberOutputSerializer(serializers.Serializer):
    username = serializers.CharField(source="user.username")
    role = serializers.CharField()
    created_at = serializers.DateTimeField()


class MemberInputSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(choices=Role.choices)


class StudyMemberListApi(APIView):
    @extend_schema(responses=MemberOutputSerializer(many=True), summary="People of a study and their roles")
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        return Response(MemberOutputSerializer(selectors.study_members(study=study), many=True).data)


class StudyMemberAddApi(APIView):
    @extend_schema(
        request=MemberInputSerializer,
        responses={201: MemberOutputSerializer},
        summary="Give an existing account a role in a study",
        description="Refused (400) when it would make one account both judge and annotator of the study.",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = MemberInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = User.objects.filter(username=data.validated_data["username"]).first()
        if user is None:
            raise serializers.ValidationError({"username": [f"No user named '{data.validated_data['username']}'."]})
        try:
            membership = study_member_add(study=study, user=user, role=data.validated_data["role"])
        except DjangoValidationError as exc:
            raise _validation_error(exc) from None
        if membership.role == Role.JUDGE:
            from annotation.judging.services.assignments import assignment_ensure_for_judge

            assignment_ensure_for_judge(study=study, judge=user)
        return Response(MemberOutputSerializer(membership).data, status=status.HTTP_201_CREATED)


class StudyMemberRemoveApi(APIView):
    @extend_schema(
        request=MemberInputSerializer,
        responses={204: None},
        summary="Take a role in a study away from an account (their work stays)",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = MemberInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = User.objects.filter(username=data.validated_data["username"]).first()
        try:
            removed = user is not None and study_member_remove(study=study, user=user, role=data.validated_data["role"])
        except DjangoValidationError as exc:
            raise _validation_error(exc) from None
        if not removed:
            raise NotFound(f"{data.validated_data['username']} is not a {data.validated_data['role']} in this study.")
        return Response(status=status.HTTP_204_NO_CONTENT)


class ImportJobOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    phase = serializers.CharField()
    percent = serializers.IntegerField()
    progress_done = serializers.IntegerField()
    progress_total = serializers.IntegerField()
    filename = serializers.CharField()
    format = serializers.CharField()
    row_count = serializers.IntegerField()
    summary = serializers.JSONField()
    error = serializers.CharField()


class ImportErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = serializers.ListField(child=serializers.DictField())  # type: ignore[assignment]  # the API's documented field; DRF's stubs type Serializer.errors as the validation errors


class StudyImportApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    class StudyImportInputSerializer(serializers.Serializer):
        file = serializers.FileField()
        format = serializers.ChoiceField(choices=FORMATS, required=False)
        replace = serializers.BooleanField(required=False, default=False)

    @extend_schema(
        request={"multipart/form-data": StudyImportInputSerializer},
        responses={201: ImportJobOutputSerializer, 202: ImportJobOutputSerializer, 400: ImportErrorSerializer},
        summary="Import originals and candidates (all or nothing)",
        description="Small files are imported at once (201). Large files are imported by a worker (202); "
        "poll the job. Errors name the file, line and column, and nothing is written.",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = self.StudyImportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        try:
            job = study_import_file(
                study=study,
                data=read_upload(upload, settings.PARAEVAL_IMPORT_MAX_BYTES, "PARAEVAL_IMPORT_MAX_BYTES"),
                filename=upload.name,
                fmt=data.validated_data.get("format"),
                replace=data.validated_data["replace"],
                user=request.user,
            )
        except StudyImportError as exc:
            return Response(
                {
                    "detail": exc.describe(),
                    "errors": [{"line": i.line, "column": i.column, "message": i.message} for i in exc.issues],
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        code = status.HTTP_201_CREATED if job.is_finished else status.HTTP_202_ACCEPTED
        return Response(import_job_payload(job), status=code)


def import_job_payload(job: ImportJob) -> dict:
    """An import job as the API answers it (a study file's, a generated system's or a judgments file's)."""
    return ImportJobOutputSerializer(
        {
            "id": job.pk,
            "status": job.status,
            "phase": job.phase,
            "percent": job.percent,
            "progress_done": job.progress_done,
            "progress_total": job.progress_total,
            "filename": job.filename,
            "format": job.format,
            "row_count": job.row_count,
            "summary": job.summary,
            "error": job.error,
        }
    ).data


class ImportJobDetailApi(APIView):
    @extend_schema(responses=ImportJobOutputSerializer, summary="Progress and result of an import")
    def get(self, request, study_id: int, job_id: int):
        study = get_managed_study(request, study_id)
        job = get_object_or_404(ImportJob, pk=job_id, study=study)
        return Response(import_job_payload(job))


class PeopleErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = serializers.ListField(child=serializers.CharField())  # type: ignore[assignment]  # the API's documented field; DRF's stubs type Serializer.errors as the validation errors


def _people_error(exc: PeopleError) -> Response:
    return Response(
        {"detail": "Nobody was added; fix these lines and send the list again.", "errors": exc.issues},
        status=status.HTTP_400_BAD_REQUEST,
    )


class StudyPeopleAddApi(APIView):
    class PeopleAddInputSerializer(serializers.Serializer):
        role = serializers.ChoiceField(choices=PARTICIPANT_ROLES)
        usernames = serializers.ListField(child=serializers.CharField(max_length=150), min_length=1, max_length=5000)

    class PeopleAddOutputSerializer(serializers.Serializer):
        role = serializers.CharField()
        added = serializers.ListField(child=serializers.CharField())

    @extend_schema(
        request=PeopleAddInputSerializer,
        responses={200: PeopleAddOutputSerializer, 400: PeopleErrorSerializer},
        summary="Give existing accounts a role in a study (all or none)",
        description="Unknown names, duplicates and accounts that would become both judge and annotator "
        "of the study are refused together, each with its position in the list.",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = self.PeopleAddInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        role = data.validated_data["role"]
        try:
            users = study_people_add_existing(
                study=study, usernames=list(enumerate(data.validated_data["usernames"], 1)), role=role
            )
        except PeopleError as exc:
            return _people_error(exc)
        return Response({"role": role, "added": [u.username for u in users]})


class NewPersonOutputSerializer(serializers.Serializer):
    username = serializers.CharField()
    email = serializers.CharField()
    password = serializers.CharField(allow_null=True, help_text="Shown once; only its hash is stored.")
    signin_url = serializers.CharField(allow_null=True, help_text="Single-use, expiring; only its hash is stored.")


class StudyPeopleCreateApi(APIView):
    class PeopleCreateInputSerializer(serializers.Serializer):
        role = serializers.ChoiceField(choices=PARTICIPANT_ROLES)
        people = serializers.ListField(
            child=serializers.CharField(max_length=254),
            min_length=1,
            max_length=5000,
            help_text="Usernames or email addresses.",
        )
        delivery = serializers.ChoiceField(choices=["password", "link"], default="password")

    @extend_schema(
        request=PeopleCreateInputSerializer,
        responses={201: NewPersonOutputSerializer(many=True), 400: PeopleErrorSerializer},
        summary="Make new accounts (all or none) and give them a role in a study",
        description="Each new account gets a generated password or a personal single-use sign-in link, "
        "returned in this response only (the response is not cacheable; neither is stored in clear).",
    )
    def post(self, request, study_id: int):
        from django.urls import reverse
        from django.utils.cache import add_never_cache_headers

        study = get_managed_study(request, study_id)
        data = self.PeopleCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        try:
            made = study_people_create(
                study=study,
                lines=list(enumerate(v["people"], 1)),
                role=v["role"],
                delivery=v["delivery"],
                created_by=request.user,
            )
        except PeopleError as exc:
            return _people_error(exc)
        rows = [
            {
                "username": p.username,
                "email": p.email,
                "password": p.password,
                "signin_url": request.build_absolute_uri(
                    reverse("annotation:signin_link", kwargs={"token": p.signin_token})
                )
                if p.signin_token
                else None,
            }
            for p in made
        ]
        response = Response(NewPersonOutputSerializer(rows, many=True).data, status=status.HTTP_201_CREATED)
        add_never_cache_headers(response)
        return response
