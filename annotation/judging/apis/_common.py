"""What every judging endpoint shares: the schema tags and the answer to a judging error."""

from __future__ import annotations

from typing import Any

from rest_framework.response import Response

from ..errors import JudgingError

TAG_JUDGE = ["judging (judge)"]
TAG_RESEARCHER = ["judging (researcher)"]


def judging_error(exc: JudgingError) -> Response:
    body: dict[str, Any] = {"detail": exc.message}
    if exc.field_errors:
        body["errors"] = exc.field_errors
    return Response(body, status=exc.status_code)
