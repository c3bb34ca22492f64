"""Writes: single-use sign-in links (made for new accounts, redeemed once; only their hash is stored)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from ..models import SignInLink, Study


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def signin_link_create(
    *, user: User, study: Study | None = None, created_by: User | None = None, hours: float | None = None
) -> str:
    """Make a single-use sign-in link for ``user``; return its secret (store only its hash).

    The secret is 32 random bytes (URL-safe); the row keeps its SHA-256, so the
    link cannot be rebuilt from the database. It expires after ``hours``
    (``PARAEVAL_SIGNIN_LINK_HOURS``, 72 by default).
    """
    hours = settings.PARAEVAL_SIGNIN_LINK_HOURS if hours is None else hours
    token = secrets.token_urlsafe(32)
    SignInLink.objects.create(
        user=user,
        token_hash=_token_hash(token),
        study=study,
        created_by=created_by,
        expires_at=timezone.now() + timedelta(hours=hours),
    )
    return token


class SignInLinkInvalid(Exception):
    """A sign-in link that does not exist (404), was used or expired (410); the message says which."""

    def __init__(self, message: str, status: int = 404):
        super().__init__(message)
        self.status = status


@transaction.atomic
def signin_link_redeem(*, token: str) -> User:
    """Use a sign-in link: mark it used and return its user. Raises :class:`SignInLinkInvalid`.

    The row is locked, so two tabs opening the same link cannot both sign in.
    """
    if not isinstance(token, str) or not 20 <= len(token) <= 100:
        raise SignInLinkInvalid("This sign-in link is not valid. Ask the researcher for a new one.")
    link = SignInLink.objects.select_for_update().select_related("user").filter(token_hash=_token_hash(token)).first()
    if link is None:
        raise SignInLinkInvalid("This sign-in link is not valid. Ask the researcher for a new one.")
    if link.used_at is not None:
        raise SignInLinkInvalid(
            "This sign-in link was already used; it works only once. Sign in with your password, "
            "or ask the researcher for a new link.",
            status=410,
        )
    if link.expires_at <= timezone.now() or not link.user.is_active:
        raise SignInLinkInvalid("This sign-in link has expired. Ask the researcher for a new one.", status=410)
    link.used_at = timezone.now()
    link.save(update_fields=["used_at", "updated_at"])
    return link.user
