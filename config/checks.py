"""System checks for a production deployment.

Static files (``paraeval.E001``):

Production serves static files through whitenoise's manifest storage: every
``{% static %}`` tag looks its file up in ``STATIC_ROOT/staticfiles.json``. Without
``collectstatic`` that lookup raises, so every HTML page answered 500 while
``check --deploy`` said nothing. This check makes the missing step visible before
the first request (``make deploy-check`` runs it after ``make collectstatic``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register

#: Written under PARAEVAL_VAR_DIR by config.middleware.ProxyHeadersWatchMiddleware.
PROXY_SEEN_MARKER = "proxy-headers-seen"


def _marker() -> Path:
    return Path(settings.VAR_DIR) / PROXY_SEEN_MARKER


def proxy_headers_seen_record(*, header: str) -> None:
    """Remember that a request came with a forwarding header while no proxy was declared."""
    try:
        _marker().write_text(f"{datetime.now(UTC).isoformat(timespec='seconds')} {header}\n", encoding="ascii")
    except OSError:  # a read-only var/: the log line is still written
        pass


@register(Tags.staticfiles, deploy=True)
def static_files_collected(app_configs, **kwargs):
    backend = settings.STORAGES.get("staticfiles", {}).get("BACKEND", "")
    if "Manifest" not in backend:
        return []
    manifest = Path(settings.STATIC_ROOT) / "staticfiles.json"
    if manifest.is_file():
        return []
    return [
        Error(
            f"Static files are not collected: {manifest} is missing, so every page would answer 500.",
            hint="Run `make collectstatic` (python manage.py collectstatic --noinput) with the production "
            "environment, as part of every deployment.",
            id="paraeval.E001",
        )
    ]


@register(Tags.security, deploy=True)
def proxy_declared(app_configs, **kwargs):
    """Behind a proxy with ``PARAEVAL_NUM_PROXIES=0``, every participant shares the proxy's address: the
    per-address join limit then caps the whole site, and the lockout counts everyone as one address."""
    if settings.PARAEVAL_NUM_PROXIES:
        return []
    signs = []
    if getattr(settings, "SECURE_PROXY_SSL_HEADER", None):
        signs.append("SECURE_PROXY_SSL_HEADER is set (BEHIND_PROXY=on)")
    if getattr(settings, "USE_X_FORWARDED_HOST", False) or getattr(settings, "USE_X_FORWARDED_PORT", False):
        signs.append("USE_X_FORWARDED_HOST/PORT is on")
    if _marker().is_file():
        seen = _marker().read_text(encoding="ascii", errors="replace").strip()
        signs.append(f"requests came with forwarding headers ({seen}; remove {_marker()} once fixed)")
    if not signs:
        return []
    return [
        Warning(
            "paraeval looks to be behind a proxy, but PARAEVAL_NUM_PROXIES is 0: "
            + "; ".join(signs)
            + ". Every client "
            "then has the proxy's address, so the per-address join limit caps the whole site.",
            hint="Set PARAEVAL_NUM_PROXIES to the number of proxies that append to X-Forwarded-For (1 for one nginx or "
            "Caddy), and PARAEVAL_TRUSTED_PROXIES to where they connect from; see docs/deployment.md.",
            id="paraeval.W002",
        )
    ]
