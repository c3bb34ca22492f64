"""Errors of judging services, each with the HTTP status an API or page answers with.

Messages are written for the person who sees them (a judge or a researcher) and
never name a system, a control or a database id.
"""

from __future__ import annotations


class JudgingError(Exception):
    status_code = 400

    def __init__(self, message: str, *, field_errors: dict[str, list[str]] | None = None):
        super().__init__(message)
        self.message = message
        self.field_errors = field_errors or {}


class JudgmentInvalid(JudgingError):
    """The submitted scores or fields are wrong (400)."""


class ItemNotFound(JudgingError):
    """No such item in this judge's assignment (404, whether or not it exists elsewhere)."""

    status_code = 404


class StudyNotOpen(JudgingError):
    """The study is a draft or closed (409)."""

    status_code = 409


class KeyReused(JudgingError):
    """An idempotency key came back with a different submission (409)."""

    status_code = 409


class DesignFrozen(JudgingError):
    """Judging has started, so the design can no longer change (409)."""

    status_code = 409


class DesignInvalid(JudgingError):
    """The design does not validate (400)."""


class CannotOpen(JudgingError):
    """The study cannot be opened, closed, reset or assigned as asked (409)."""

    status_code = 409


class OtherProtocol(JudgingError):
    """The study is judged with another protocol than this page's or endpoint's (409)."""

    status_code = 409
