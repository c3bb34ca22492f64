"""Security headers that Django 5.2 does not set by itself."""

from django.conf import settings
from django.http import HttpResponseBadRequest
from django.utils.cache import add_never_cache_headers

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
