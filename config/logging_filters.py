"""Logging filters used by ``settings.LOGGING``."""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied


class DropPermissionDeniedTraceback(logging.Filter):
    """Keep the "Forbidden (Permission denied): /path" warning, drop its traceback.

    Django's ``response_for_exception`` logs every PermissionDenied with ``exc_info``,
    so each refused page (a judge opening a researcher page, say) printed a full
    traceback, which reads like a crash in the server log. The record stays; only
    the traceback goes.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], PermissionDenied):
            record.exc_info = None
            record.exc_text = None
        return True


class RedactPlatformIds(logging.Filter):
    """Take participants' platform ids out of the development server's request lines (``django.server``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        from .access_log import redact_platform_ids

        record.msg = redact_platform_ids(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact_platform_ids(a) for a in record.args)
        return True
