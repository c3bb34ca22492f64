"""gunicorn settings for production: ``gunicorn -c config/gunicorn.py config.wsgi``.

Measured on a 2-core machine with ``benchmarks/judging_pace.py`` (docs/benchmarks.md,
"Judging at a human pace"; docs/deployment.md explains each choice). Every value can
be overridden from the environment, as below, or on the command line.

- ``gthread`` workers: a request of the judging hot path spends about as long waiting
  for PostgreSQL as computing, so a few threads per process keep a core busy while
  one thread waits; more processes than cores only add memory and contention.
- one worker per core (``GUNICORN_WORKERS``, default: the number of cores), 4 threads each.
- ``preload_app``: the application is imported once in the master and the workers
  fork from it, sharing its memory pages and starting at once. Database connections
  are opened lazily in each worker (Django does not connect at import), so nothing
  is shared that must not be.
- ``logger_class``: the access log (``--access-logfile``, off unless given) never holds a
  participant's Prolific or MTurk ids: they are redacted from the request line and the
  Referer (config/access_log.py).
- ``keepalive`` 5 s: the proxy in front (nginx) or a judge's browser reuses its
  connection between the requests of one page; idle connections close soon after.
"""

import os

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
worker_class = "gthread"
workers = int(os.environ.get("GUNICORN_WORKERS", os.cpu_count() or 2))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
preload_app = os.environ.get("GUNICORN_PRELOAD", "1") not in ("0", "false", "no", "off")
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "5"))
# An export or an import may take a while; judging requests take milliseconds.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = 30
# Recycle a worker now and then (jittered, so they do not all restart together).
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "20000"))
max_requests_jitter = 2000
# Platform ids (PROLIFIC_PID, workerId, ...) never reach the access log.
logger_class = "config.access_log.RedactingLogger"
