"""Settings of the fault scripts' processes: paraeval's own, plus

* ``PARAEVAL_FAULTS_QUEUE``: the Celery queue, so that a script's workers never take
  another program's messages on a shared broker (and vice versa);
* ``PARAEVAL_FAULTS_VISIBILITY_TIMEOUT``: Redis's visibility timeout in seconds (Redis
  only: kombu's SQLAlchemy transport hands every transport option to SQLAlchemy's
  ``create_engine``, which refuses the unknown ones), to
  show how long an unacknowledged message of a dead worker waits before it is
  delivered again (kombu's default is one hour);
* ``PARAEVAL_FAULTS_WORKER_LOST_WAIT``: seconds a worker waits before it calls the
  job of a dead pool process lost (2; Celery's default is 10 — only the timing changes);
* ``PARAEVAL_FAULTS_POLLING_INTERVAL``: how often a worker polls a broker that is
  polled (the SQLite-file broker: kombu's default is every second, which makes a
  small test run wait more than it works);
* the ``pinc-slow`` metric (``slow_metric.py``).
"""

import os

from config.settings import *  # noqa: F401,F403
from config.settings import CELERY_BROKER_TRANSPORT_OPTIONS, CELERY_BROKER_URL, CELERY_TASK_ROUTES, task_queues

CELERY_TASK_DEFAULT_QUEUE = os.environ.get("PARAEVAL_FAULTS_QUEUE", "celery")
# The plans' queue too is the script's own (the declared queues replace Celery's default one).
PARAEVAL_PLAN_QUEUE = f"{CELERY_TASK_DEFAULT_QUEUE}-plans"
CELERY_TASK_QUEUES = task_queues(CELERY_TASK_DEFAULT_QUEUE, PARAEVAL_PLAN_QUEUE)
CELERY_TASK_ROUTES = {**CELERY_TASK_ROUTES, "dashboard.plan": {"queue": PARAEVAL_PLAN_QUEUE}}
# How long a worker waits for a result from a pool process that died before it
# calls the job lost and hands its message back (Celery's default: 10 s).
CELERY_WORKER_LOST_WAIT = float(os.environ.get("PARAEVAL_FAULTS_WORKER_LOST_WAIT", "2"))
if os.environ.get("PARAEVAL_FAULTS_VISIBILITY_TIMEOUT") and CELERY_BROKER_URL.startswith("redis"):
    # ... and sweep for such messages every second (kombu's default: every 100 s).
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        **CELERY_BROKER_TRANSPORT_OPTIONS,
        "visibility_timeout": float(os.environ["PARAEVAL_FAULTS_VISIBILITY_TIMEOUT"]),
        "unacked_restore_interval": 1,
        "unacked_restore_throttle": 1,
    }

if os.environ.get("PARAEVAL_FAULTS_POLLING_INTERVAL"):
    # Not a transport option: kombu's SQLAlchemy transport hands its options to
    # SQLAlchemy's create_engine, which refuses unknown ones.
    from kombu.transport.sqlalchemy import Transport as _SqlaTransport

    _SqlaTransport.polling_interval = float(os.environ["PARAEVAL_FAULTS_POLLING_INTERVAL"])

import benchmarks.faults.slow_metric  # noqa: E402,F401  (registers pinc-slow)
