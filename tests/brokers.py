"""Helpers for tests that take the broker away: point this process's Celery app at a
port where nothing listens, and check that the outage is real."""

from __future__ import annotations

import contextlib
import os
import socket

import pytest


@contextlib.contextmanager
def broker_at(url: str):
    """Point this process's Celery app at ``url`` (its connection pools are rebuilt).

    Celery reads ``CELERY_BROKER_URL`` from the environment before its own setting
    (CI's Redis and RabbitMQ runs set it), so when the environment names a broker,
    that is switched too."""
    from config.celery import app

    def reset():
        app._pool = None
        app.amqp._producer_pool = None

    old, old_env = app.conf.broker_url, os.environ.get("CELERY_BROKER_URL")
    app.conf.broker_url = url
    if old_env is not None:
        os.environ["CELERY_BROKER_URL"] = url
    reset()
    try:
        yield
    finally:
        app.conf.broker_url = old
        if old_env is not None:
            os.environ["CELERY_BROKER_URL"] = old_env
        reset()


def dead_broker_url() -> str:
    """A broker URL on a loopback port that was free a moment ago: nothing listens there."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"redis://127.0.0.1:{port}/0"


def assert_broker_unreachable() -> None:
    """The outage is real: the app's publishing connection goes to nothing."""
    from kombu.exceptions import OperationalError

    from config.celery import app

    with app.connection_for_write() as conn:
        with pytest.raises((OperationalError, ConnectionError, OSError)):
            conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=2)
