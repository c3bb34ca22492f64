"""Login with throttling, for the HTML form and the API token endpoint."""

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.throttling import ScopedRateThrottle


class ThrottledObtainAuthToken(ObtainAuthToken):
    """Exchange username and password for an API token; throttled against guessing."""

    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "login"


def _client_ip(request) -> str:
    return request.META.get("REMOTE_ADDR", "unknown")


class ThrottledLoginView(auth_views.LoginView):
    """Django's login view, refusing further attempts after repeated failures.

    Failures are counted per (client address, username) and per client address in
    the cache for ``LOGIN_FAILURE_WINDOW`` seconds; past ``LOGIN_FAILURE_LIMIT``
    the form answers 429 without checking the password, so guessing is slow
    whatever the password hasher costs.
    """

    redirect_authenticated_user = True

    def _keys(self, request):
        ip = _client_ip(request)
        user = (request.POST.get("username") or "").strip().lower()[:150]
        return f"login-fail:{ip}:{user}", f"login-fail-ip:{ip}"

    def post(self, request, *args, **kwargs):
        limit = settings.LOGIN_FAILURE_LIMIT
        user_key, ip_key = self._keys(request)
        if cache.get(user_key, 0) >= limit or cache.get(ip_key, 0) >= limit * 5:
            form = self.get_form()
            form.add_error(None, "Too many failed attempts. Wait a few minutes and try again.")
            response = self.render_to_response(self.get_context_data(form=form, throttled=True))
            response.status_code = 429
            return response
        response = super().post(request, *args, **kwargs)
        if response.status_code == 200:  # the form came back: the password was wrong
            window = settings.LOGIN_FAILURE_WINDOW
            for key in (user_key, ip_key):
                cache.add(key, 0, window)
                cache.incr(key)
        else:
            cache.delete(user_key)
        return response
