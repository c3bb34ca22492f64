"""API tokens that expire (``PARAEVAL_TOKEN_TTL``) and that their owner can revoke.

DRF's ``authtoken`` keeps one token per user with its creation time; this module
adds the expiry on top of it, so no migration or extra table is needed. It is kept
apart from config/auth.py because DRF imports the authentication class while
``rest_framework.views`` is still loading (a view import here would be circular).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token


def api_token_expires_at(token: Token) -> datetime:
    return token.created + timedelta(seconds=settings.PARAEVAL_TOKEN_TTL)


def api_token_is_expired(token: Token) -> bool:
    return timezone.now() >= api_token_expires_at(token)


def api_token_issue(*, user) -> Token:
    """The user's current token, or a new one if they have none or theirs expired.

    A token is reused while valid (scripts on several machines may share it);
    an expired one is replaced, never extended, so a stolen token dies on time.
    """
    token = Token.objects.filter(user=user).first()
    if token is not None and not api_token_is_expired(token):
        return token
    if token is not None:
        Token.objects.filter(pk=token.pk).delete()
    try:
        with transaction.atomic():
            return Token.objects.create(user=user)
    except IntegrityError:  # a concurrent request issued one first: use theirs
        return Token.objects.get(user=user)


def api_token_revoke(*, user) -> bool:
    """Delete the user's API token. Returns whether there was one. Idempotent."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return deleted > 0


class ExpiringTokenAuthentication(TokenAuthentication):
    """DRF token authentication that refuses tokens older than ``PARAEVAL_TOKEN_TTL``."""

    def authenticate_credentials(self, key):
        user, token = super().authenticate_credentials(key)
        if api_token_is_expired(token):
            raise exceptions.AuthenticationFailed(
                "Token expired: request a new one from /api/auth/token/ with your username and password."
            )
        return user, token
