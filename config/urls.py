"""Top-level routes. Each app owns its pages (mounted at the root, full paths in
its own ``urls.py``) and its API (mounted under ``/api/`` from ``api_urls.py``).

There is no ``/api-auth/`` (DRF's second login form): the browsable API signs in
through ``/accounts/login/``, so there is one login form fewer to guard."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.staticfiles.storage import staticfiles_storage
from django.http import HttpResponsePermanentRedirect
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from annotation import views as annotation_views

from . import auth, docs

APPS = [
    "annotation",
    "annotation.judging",
    "annotation.alignment",
    "annotation.participation",
    "metrics",
    "metrics.reports",
    "metrics.dashboard",
]

api_patterns = [
    path("auth/token/", auth.ObtainExpiringAuthToken.as_view(), name="api_token"),
    path("auth/token/revoke/", auth.TokenRevokeApi.as_view(), name="api_token_revoke"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api_docs"),
] + [path("", include(f"{app}.api_urls")) for app in APPS]

urlpatterns = [
    path("", annotation_views.home, name="home"),
    path(
        "favicon.ico",
        lambda request: HttpResponsePermanentRedirect(staticfiles_storage.url("favicon.svg")),
        name="favicon",
    ),
    path("accounts/login/", auth.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/", auth.account, name="account"),
    path("accounts/token/revoke/", auth.account_token_revoke, name="account_token_revoke"),
    path("admin/", admin.site.urls),
    path("api/", include(api_patterns)),
    path("docs/", docs.docs_page, name="docs"),
    path("docs/<path:path>", docs.docs_page, name="docs_page"),
] + [path("", include(f"{app}.urls")) for app in APPS]
