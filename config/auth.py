"""Signing in: the brute-force guard's hooks, expiring API tokens and the account page.

Password guessing is limited by django-axes at every door at once: its
authentication backend (first in ``AUTHENTICATION_BACKENDS``) refuses a locked-out
username before any password is checked, and its signal handlers count every
failure that goes through ``django.contrib.auth.authenticate`` — the login form,
the admin login and the API token endpoint alike, and any view added later that
authenticates the ordinary way. The settings (``AXES_*`` in config/settings.py)
lock by username and by (username, client address), never by address alone.
This module only supplies what axes asks the project for: the client address
(:func:`client_ip`), the lockout answer (:func:`lockout_response`), and the
token endpoint's translation of a lockout into a 429.
"""

from __future__ import annotations

import functools
import ipaddress

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.response import Response
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from .tokens import api_token_expires_at, api_token_is_expired, api_token_issue, api_token_revoke

LOCKOUT_MESSAGE = "Too many failed attempts for this account. Wait a few minutes and try again."


# --- the brute-force guard's hooks (django-axes) -----------------------------------------


def client_ip(request) -> str | None:
    """The client's address, trusting ``X-Forwarded-For`` only from declared proxies.

    Axes calls this (``AXES_CLIENT_IP_CALLABLE``), and so do the join links' limits. It
    is DRF's own rule (``BaseThrottle.get_ident`` with ``REST_FRAMEWORK["NUM_PROXIES"]``,
    which settings set from ``PARAEVAL_NUM_PROXIES``): with no proxy declared the header
    is ignored and ``REMOTE_ADDR`` is the address; behind N proxies the N-th address
    from the right of the header is, so a client cannot choose its own. One more rule:
    the header counts only on a connection from ``PARAEVAL_TRUSTED_PROXIES``. Someone who
    reaches gunicorn directly (a firewall left open) would otherwise pick a new address
    with every request and pass every per-address limit.
    """
    remote = request.META.get("REMOTE_ADDR", "")
    if not trusted_proxy(remote):
        return remote or None
    return BaseThrottle().get_ident(request) or None


@functools.lru_cache(maxsize=1)
def _trusted_networks(spec: tuple[str, ...]) -> tuple:
    return tuple(ipaddress.ip_network(s.strip(), strict=False) for s in spec if s.strip())


def trusted_proxy(address: str) -> bool:
    """Whether ``address`` is in ``PARAEVAL_TRUSTED_PROXIES`` (where a declared proxy may connect from)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in _trusted_networks(tuple(settings.PARAEVAL_TRUSTED_PROXIES)))


def _cooloff_minutes() -> int:
    return max(1, round(settings.AXES_COOLOFF_TIME.total_seconds() / 60)) if settings.AXES_COOLOFF_TIME else 0


def wants_json(request) -> bool:
    accept = request.META.get("HTTP_ACCEPT", "")
    return (
        request.path.startswith("/api/")
        or request.META.get("HTTP_X_REQUESTED_WITH") == "XMLHttpRequest"
        or ("application/json" in accept and "text/html" not in accept)
    )


def lockout_response(request, original_response=None, credentials=None) -> HttpResponse:
    """What a locked-out login attempt gets (``AXES_LOCKOUT_CALLABLE``): 429, HTML or JSON.

    The answer is the same whether or not the password was right and whether or not
    the account exists, so a lockout reveals nothing about either.
    """
    minutes = _cooloff_minutes()
    response: HttpResponse
    if wants_json(request):
        response = JsonResponse({"detail": LOCKOUT_MESSAGE, "retry_after_minutes": minutes}, status=429)
    else:
        response = render(
            request, "registration/locked_out.html", {"message": LOCKOUT_MESSAGE, "minutes": minutes}, status=429
        )
    response["Retry-After"] = str(minutes * 60)
    return response


class LoginView(auth_views.LoginView):
    """Django's login form. Axes guards it; nothing here counts failures."""

    redirect_authenticated_user = True


# --- API tokens that expire and can be revoked -------------------------------------------


class TokenOutputSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")
    expires_at = serializers.DateTimeField(help_text="After this instant the token answers 401; ask for a new one.")


class TokenRevokeOutputSerializer(serializers.Serializer):
    revoked = serializers.BooleanField(help_text="False when the caller had no token (revoking is idempotent).")


class ObtainExpiringAuthToken(ObtainAuthToken):
    """Exchange username and password for an API token (valid ``PARAEVAL_TOKEN_TTL`` seconds).

    Guessing is limited by axes (the serializer authenticates through
    ``django.contrib.auth.authenticate``); a locked-out attempt answers 429.
    """

    @extend_schema(request=AuthTokenSerializer, responses={200: TokenOutputSerializer})
    def post(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            # Axes marks the request when this failure reached (or hit) the lockout.
            if getattr(request, "axes_locked_out", False):
                return lockout_response(request)
            return Response(serializer.errors, status=status.HTTP_400_BAD_REQUEST)
        token = api_token_issue(user=serializer.validated_data["user"])
        return Response({"token": token.key, "expires_at": api_token_expires_at(token).isoformat()})


class TokenRevokeApi(APIView):
    """Revoke the caller's API token (also when called with that very token)."""

    @extend_schema(request=None, responses={200: TokenRevokeOutputSerializer})
    def post(self, request):
        revoked = api_token_revoke(user=request.user)
        return Response(TokenRevokeOutputSerializer({"revoked": revoked}).data)


# --- the account page ------------------------------------------------------------------------


@login_required
def account(request):
    """Who am I, and my API token's state, with a button to revoke it."""
    token = Token.objects.filter(user=request.user).first()
    context = {"token": token, "ttl_days": settings.PARAEVAL_TOKEN_TTL / 86400}
    if token is not None:
        context.update(expires_at=api_token_expires_at(token), expired=api_token_is_expired(token))
    response = render(request, "registration/account.html", context)
    return response


@require_POST
@login_required
def account_token_revoke(request):
    if api_token_revoke(user=request.user):
        messages.success(request, "Your API token is revoked: scripts using it are refused from now on.")
    else:
        messages.info(request, "You had no API token.")
    return redirect("account")
