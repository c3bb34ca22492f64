"""Security headers that Django 5.2 does not set by itself, and requests refused before any view."""

import logging

from django.conf import settings
from django.db import InterfaceError as DatabaseInterfaceError
from django.db import OperationalError as DatabaseOperationalError
from django.http import HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
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
        if request.method == "POST" and request.content_type in (
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        ):
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
SERVICE_UNAVAILABLE_MESSAGE = (
    "The service is briefly unavailable: a part of it is restarting. Please try again in a minute."
)


#: Errors that mean "the cache (Redis) or the broker cannot be reached", not a bug.
OUTAGE_ERRORS: tuple[type[BaseException], ...] = (RedisConnectionError, RedisTimeout, BrokerUnreachable)
#: Errors that mean "the database cannot be reached" (a restart, a failover, a full connection slot
#: list, SQLite's lock timeout): the request may simply be sent again in a moment.
DATABASE_OUTAGE_ERRORS: tuple[type[BaseException], ...] = (DatabaseOperationalError, DatabaseInterfaceError)


class ServiceUnavailableMiddleware:
    """A 503 with ``Retry-After``, as an HTML page or JSON, when the cache or the broker is down.

    Signing in does not need the cache (axes counts failures in the database) and
    queuing a job does not need the broker (jobs wait in paraeval's own tables, see
    ``config.jobs``). A door that cannot do without one of them — today
    the join-rate limit of the join links, which counts in the cache — fails closed:
    rather than a 500 traceback, or letting joins through uncounted, the visitor is
    told the site is briefly unavailable and when to come back. The database going away
    (a PostgreSQL restart: ``OperationalError``/``InterfaceError`` from a view) is answered
    the same way, so that a client knows to send the same request again rather than
    taking a 500 for a bug. Every other error still reaches Django's 500 handling. Each
    outage answer is logged as an error naming the exception, so that the operator learns
    which service is down.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        database = isinstance(exception, DATABASE_OUTAGE_ERRORS)
        if not database and not isinstance(exception, OUTAGE_ERRORS):
            return None
        outage_log.error(
            "503 on %s %s: %s unreachable (%s: %s)",
            request.method,
            request.path,
            "database" if database else "cache or broker",
            type(exception).__name__,
            " ".join(str(exception).split())[:300],
        )
        response: HttpResponse
        if wants_json(request):
            response = JsonResponse(
                {"detail": SERVICE_UNAVAILABLE_MESSAGE, "retry_after_seconds": SERVICE_UNAVAILABLE_RETRY_SECONDS},
                status=503,
            )
        elif database:
            # Without the request: its context processors read the user and the session, from the database.
            response = HttpResponse(
                render_to_string("503.html", {"retry_seconds": SERVICE_UNAVAILABLE_RETRY_SECONDS}), status=503
            )
        else:
            response = render(request, "503.html", {"retry_seconds": SERVICE_UNAVAILABLE_RETRY_SECONDS}, status=503)
        response["Retry-After"] = str(SERVICE_UNAVAILABLE_RETRY_SECONDS)
        add_never_cache_headers(response)
        return response


class LengthRequiredMiddleware:
    """Answer 411 to a request body sent without ``Content-Length`` (``Transfer-Encoding: chunked``).

    Django reads a request body only as far as ``Content-Length`` says: gunicorn hands
    a chunked body to the application, and Django read it as empty. A chunked
    ``PUT /api/studies/<id>/participation/`` thus saved an empty consent text and no
    questions. Refusing is what RFC 9110 offers a server that needs the length; every
    browser and HTTP library sends it for an ordinary body, and nginx adds it itself
    (it buffers the request body by default). First in ``MIDDLEWARE``: nothing may
    read the body before.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.META.get("HTTP_TRANSFER_ENCODING") and not request.META.get("CONTENT_LENGTH"):
            return HttpResponse(
                "Send the request body with a Content-Length header (chunked bodies are not read).\n",
                status=411,
                content_type="text/plain; charset=utf-8",
            )
        return self.get_response(request)


proxy_logger = logging.getLogger("paraeval.proxy")


class ProxyHeadersWatchMiddleware:
    """Notice forwarding headers while ``PARAEVAL_NUM_PROXIES`` is 0: the app is probably behind a proxy
    that it does not know about, so every client seems to have the proxy's address.

    The first such request of a process logs a warning and leaves a marker file under
    ``var/`` (:data:`config.checks.PROXY_SEEN_MARKER`), which ``check --deploy`` reports
    (``paraeval.W002``). The converse is logged too: with proxies declared, the first
    ``X-Forwarded-For`` from an address outside ``PARAEVAL_TRUSTED_PROXIES`` (the header
    is then ignored: a proxy connecting from elsewhere must be listed). Costs a
    dictionary lookup or two per request otherwise.
    """

    def __init__(self, get_response):
        self.get_response = get_response
        self.seen = False
        self.untrusted_seen = False

    def __call__(self, request):
        if not self.untrusted_seen and settings.PARAEVAL_NUM_PROXIES and "HTTP_X_FORWARDED_FOR" in request.META:
            from .auth import trusted_proxy

            remote = request.META.get("REMOTE_ADDR", "")
            if not trusted_proxy(remote):
                self.untrusted_seen = True
                proxy_logger.warning(
                    "X-Forwarded-For came from %s, which is not in PARAEVAL_TRUSTED_PROXIES, and was "
                    "ignored: if that is your proxy, add it (docs/deployment.md)",
                    remote,
                )
        if not self.seen and not settings.PARAEVAL_NUM_PROXIES:
            header = next((h for h in ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED") if h in request.META), None)
            if header is not None:
                self.seen = True
                from .checks import proxy_headers_seen_record

                proxy_headers_seen_record(header=header[5:].replace("_", "-").title())
                proxy_logger.warning(
                    "a request came with %s while PARAEVAL_NUM_PROXIES=0: if a proxy stands in front "
                    "of paraeval, declare it (docs/deployment.md)",
                    header[5:].replace("_", "-").title(),
                )
        return self.get_response(request)
