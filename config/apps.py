"""The project package as a Django app, so that its system checks are registered."""

import logging

from django.apps import AppConfig
from django.db.models.signals import post_migrate

log = logging.getLogger(__name__)


def declare_embedded_broker_queue(app_config=None, **kwargs) -> None:
    """After ``migrate``: create the default queue of the embedded (SQLAlchemy) broker now.

    kombu's SQLAlchemy transport creates a queue's row on first use, guarded by a
    lock between threads but not between processes, so a worker and a web process
    (or a test's script) that start together on a new SQLite broker file can both
    insert it and one fails on the unique name (``IntegrityError: UNIQUE constraint
    failed: kombu_queue.name``; celery/kombu#1187 fixed only the threads). Every
    launcher (``make run``, CI, the deployment steps) migrates before starting any
    process, so declaring the queue here, from one process, removes the race. Other
    brokers (Redis, RabbitMQ) are left alone; a broker that cannot be reached only
    logs a warning: migrating must not depend on it.
    """
    if app_config is not None and app_config.label != "annotation":
        return  # post_migrate comes once per app with models: act once, on paraeval's own
    from .celery import app

    try:
        with app.connection_for_write() as conn:
            if conn.transport.driver_type != "sql":  # kombu.transport.sqlalchemy
                return
            app.amqp.queues[app.conf.task_default_queue](conn.default_channel).declare()
    except Exception as exc:  # noqa: BLE001 - never fail a migration over the broker
        log.warning("could not declare the broker's default queue after migrating: %s", exc)


class ParaevalConfig(AppConfig):
    name = "config"
    label = "paraeval_config"
    verbose_name = "paraeval configuration"

    def ready(self):
        from . import celery, checks  # noqa: F401 - the Celery app (below); registers the checks

        # The Celery app exists in every process Django starts, so that each ``@shared_task``
        # binds to it. Without it a web process's tasks fell to Celery's default app, which
        # publishes to amqp://localhost whatever CELERY_BROKER_URL says: the job stayed queued
        # until the worker's beat sent it again (or went to an unrelated RabbitMQ on the host).

        # (Django sends post_migrate only for apps with models, which this one has not.)
        post_migrate.connect(declare_embedded_broker_queue, dispatch_uid="paraeval-declare-embedded-broker-queue")
