"""What the alignment API's modules share: reading an upload, the link-list field, the error bodies."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers, status
from rest_framework.response import Response

from annotation.importing.reading import StudyImportError
from config.parsers import read_upload


def upload_bytes(upload) -> bytes:
    """An uploaded file's bytes, refused (413) from its declared size before reading."""
    return read_upload(upload, settings.PARAEVAL_IMPORT_MAX_BYTES, "PARAEVAL_IMPORT_MAX_BYTES")


def link_list_field(**kwargs):
    return serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField(min_value=0), min_length=2, max_length=2), **kwargs
    )


class AlignmentImportErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    errors = serializers.ListField(child=serializers.DictField())  # type: ignore[assignment]  # the API's documented field; DRF's stubs type Serializer.errors as the validation errors


class AlignmentErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()


def import_error_response(exc: StudyImportError) -> Response:
    return Response(
        {
            "detail": exc.describe(),
            "errors": [{"line": i.line, "column": i.column, "message": i.message} for i in exc.issues],
        },
        status=status.HTTP_400_BAD_REQUEST,
    )


def validation_error_response(exc: DjangoValidationError) -> Response:
    return Response({"detail": "; ".join(exc.messages)}, status=status.HTTP_400_BAD_REQUEST)
