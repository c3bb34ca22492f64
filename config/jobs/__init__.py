"""Background jobs, the plumbing both apps share: a job row's status (``enums``), the abstract
table every kind of job is built on (``models``), and sending a job's task to the broker
(``services``). It sits in ``config`` beside the Celery app and the requeue pass
(``config.recovery``), below ``annotation`` and ``metrics``, and imports neither.
"""
