"""The Celery application.

Settings come from Django settings with the ``CELERY_`` prefix. Task state is kept
in paraeval's own models (jobs, metric runs, reports), never in a result backend,
so results are ignored here.

Every task gets :class:`config.recovery.JobTask` as its class: job tasks claim their
job and keep its heartbeat while they run. ``config.recovery`` also holds the
periodic requeue task (``CELERY_BEAT_SCHEDULE`` in settings) and the hook that
sends still-queued jobs when a worker starts.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("paraeval", task_cls="config.recovery:JobTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

from . import recovery  # noqa: E402,F401  (registers the periodic task and the worker-start hook)
