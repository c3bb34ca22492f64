"""Writes: studies, membership, people, imports and background jobs. Views, APIs, tasks and commands call these.

One module per concern; this package itself exports nothing, so import each name from
its module, e.g. ``from annotation.services.studies import study_create``:

- ``studies``: creating and editing studies, granting the researcher role;
- ``membership``: roles in a study (never judge and annotator at once);
- ``imports``: writing a parsed study file, all or nothing, now or by a worker;
- ``jobs``: sending tasks to the broker, the requeue pass of import and generation jobs;
- ``signin``: single-use sign-in links;
- ``people``: accounts made or added from a pasted list, all or none.

A test that replaces a name patches the module that looks it up (e.g.
``annotation.services.imports.job_enqueue``, not ``annotation.services.jobs.job_enqueue``).
"""
