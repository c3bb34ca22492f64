"""Writes: studies, membership, people, imports and background jobs. Views, APIs, tasks and commands call these.

One module per concern; this package itself exports nothing, so import each name from
its module, e.g. ``from annotation.services.studies import study_create``:

- ``studies``: creating and editing studies, granting the researcher role;
- ``membership``: roles in a study (never judge and annotator at once);
- ``imports``: writing a parsed study file, all or nothing (and the worker's import job);
- ``queueing``: asking for background work: a study file imported now or as a job, a
  generated system added now or as a job, the requeue pass of both kinds of job;
- ``signin``: single-use sign-in links;
- ``people``: accounts made or added from a pasted list, all or none.

A test that replaces a name patches the module that looks it up (e.g.
``annotation.services.queueing.job_enqueue``, not ``config.jobs.services.job_enqueue``).
"""
