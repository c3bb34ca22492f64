"""System checks for a production deployment.

Production serves static files through whitenoise's manifest storage: every
``{% static %}`` tag looks its file up in ``STATIC_ROOT/staticfiles.json``. Without
``collectstatic`` that lookup raises, so every HTML page answered 500 while
``check --deploy`` said nothing. This check makes the missing step visible before
the first request (``make deploy-check`` runs it after ``make collectstatic``).
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.checks import Error, Tags, register


@register(Tags.staticfiles, deploy=True)
def static_files_collected(app_configs, **kwargs):
    backend = settings.STORAGES.get("staticfiles", {}).get("BACKEND", "")
    if "Manifest" not in backend:
        return []
    manifest = Path(settings.STATIC_ROOT) / "staticfiles.json"
    if manifest.is_file():
        return []
    return [Error(
        f"Static files are not collected: {manifest} is missing, so every page would answer 500.",
        hint="Run `make collectstatic` (python manage.py collectstatic --noinput) with the production "
             "environment, as part of every deployment.",
        id="paraeval.E001",
    )]
