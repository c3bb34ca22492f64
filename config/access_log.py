"""Access logs that never hold a participant's platform ids.

Prolific and MTurk put their ids in the join link's address (``?PROLIFIC_PID=…``,
``?workerId=…``). The join view moves them into the session and sends the browser
on to the bare link, but the first request's line, and the Referer of the requests
that follow it, still carry them. gunicorn (``logger_class`` in config/gunicorn.py)
and Django's development server log through :func:`redact_platform_ids`, which
keeps every other part of the line.
"""

from __future__ import annotations

import re

from gunicorn.glogging import Logger

#: Query parameters whose values never reach a log (the platforms' ids; names as the platforms send them).
REDACTED_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "workerId", "assignmentId", "hitId", "turkSubmitTo")

_PARAM = re.compile(r"(?i)(?<![A-Za-z0-9_])(" + "|".join(REDACTED_PARAMS) + r")(=|%3D)[^&\s\"#]*")


def redact_platform_ids(text):
    """``text`` with the value of every platform-id query parameter replaced by ``REDACTED``."""
    if not isinstance(text, str) or "=" not in text and "%3D" not in text.upper():
        return text
    return _PARAM.sub(lambda m: f"{m.group(1)}{m.group(2)}REDACTED", text)


class RedactingLogger(Logger):
    """gunicorn's logger, with platform ids taken out of the request line, query string, Referer and raw URI."""

    def atoms(self, resp, req, environ, request_time):
        atoms = super().atoms(resp, req, environ, request_time)
        for key in ("r", "q", "f", "{referer}i", "{raw_uri}e", "{query_string}e", "{http_referer}e"):
            if key in atoms:
                atoms[key] = redact_platform_ids(atoms[key])
        return atoms
