"""The Celery application.

Settings come from Django settings with the ``CELERY_`` prefix. Task state is kept
in paraeval's own models (jobs, metric runs, reports), never in a result backend,
so results are ignored here.
"""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("paraeval")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
