"""Security headers that Django 5.2 does not set by itself."""

import logging

from django.conf import settings
from django.http import HttpResponseBadRequest, JsonResponse
from django.shortcuts import render
from django.utils.cache import add_never_cache_headers
from kombu.exceptions import OperationalError as BrokerUnreachable
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeout

from .auth import wants_json

outage_log = logging.getLogger("paraeval.outage")

# No inline script anywhere: pages load small JS modules from /static/ and read
# their data from <script type="application/json"> blocks (json_script), which
# browsers never execute. Styles likewise come only from /static/.
DEFAULT_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.policy = getattr(settings, "PARAEVAL_CSP", DEFAULT_CSP)

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", self.policy)
        response.headers.setdefault("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
        return response


class RejectNulMiddleware:
    """Answer 400 to a request whose path, query or form fields hold a NUL character.

    No legitimate input contains one, PostgreSQL text cannot store it (the query
    would fail with a 500), and refusing it here covers every view at once.
    Uploaded files are not inspected: importers check their own contents.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path or _nul_in(request.GET):
            return HttpResponseBadRequest("NUL characters are not allowed in URLs.")
        if request.method == "POST" and request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
            if _nul_in(request.POST):
                return HttpResponseBadRequest("NUL characters are not allowed in form fields.")
        return self.get_response(request)


def _nul_in(querydict) -> bool:
    return any("\x00" in key or any("\x00" in v for v in values) for key, values in querydict.lists())


class PrivateNoStoreMiddleware:
    """``Cache-Control: no-store`` on every response to a signed-in person.

    Pages, API answers and exports of a signed-in person hold study data, judges'
    scores or a CSRF token: no shared proxy and no browser cache (a lab's shared
    computer, the back button after logging out) may keep them. Static files never
    get here (whitenoise answers them first, with long cache lifetimes).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            add_never_cache_headers(response)
        return response


#: Seconds a client is asked to wait (``Retry-After``) when a shared service is unreachable.
SERVICE_UNAVAILABLE_RETRY_SECONDS = 30
SERVICE_UNAVAILABLE_MESSAGE = ("The service is briefly unavailable: a part of it is restarting. "
                               "Please try again in a minute.")


#: Errors that mean "the cache (Redis) or the broker cannot be reached", not a bug.
OUTAGE_ERRORS: tuple[type[BaseException], ...] = (RedisConnectionError, RedisTimeout, BrokerUnreachable)


class ServiceUnavailableMiddleware:
    """A 503 with ``Retry-After``, as an HTML page or JSON, when the cache or the broker is down.

    Signing in does not need the cache (axes counts failures in the database) and
    queuing a job does not need the broker (jobs wait in paraeval's own tables, see
    ``annotation.services.jobs``). A door that cannot do without one of them — today
    the join-rate limit of the join links, which counts in the cache — fails closed:
    rather than a 500 traceback, or letting joins through uncounted, the visitor is
    told the site is briefly unavailable and when to come back. Every other error
    still reaches Django's 500 handling. Each outage answer is logged as an error naming
    the exception, so that the operator learns which service is down.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, OUTAGE_ERRORS):
            return None
        outage_log.error("503 on %s %s: cache or broker unreachable (%s: %s)",
                         request.method, request.path, type(exception).__name__, exception)
        if wants_json(request):
            response = JsonResponse({"detail": SERVICE_UNAVAILABLE_MESSAGE,
                                     "retry_after_seconds": SERVICE_UNAVAILABLE_RETRY_SECONDS}, status=503)
        else:
            response = render(request, "503.html", {"retry_seconds": SERVICE_UNAVAILABLE_RETRY_SECONDS}, status=503)
        response["Retry-After"] = str(SERVICE_UNAVAILABLE_RETRY_SECONDS)
        add_never_cache_headers(response)
        return response
