"""Writes: studies, membership, people, imports and background jobs. Views, APIs, tasks and commands call these.

One module per concern; every name is re-exported here, so
``from annotation import services`` and ``from annotation.services import study_create``
keep working:

- ``studies``: creating and editing studies, granting the researcher role;
- ``membership``: roles in a study (never judge and annotator at once);
- ``imports``: writing a parsed study file, all or nothing, now or by a worker;
- ``jobs``: sending tasks to the broker, the requeue pass of import and generation jobs;
- ``signin``: single-use sign-in links;
- ``people``: accounts made or added from a pasted list, all or none.

A test that replaces a name patches the module that looks it up (e.g.
``annotation.services.imports.job_enqueue``), not this package.
"""

from .imports import (
    CONCURRENT_IMPORT_MESSAGE,
    import_job_run,
    study_import_file,
    study_import_lock,
    study_import_parsed,
)
from .jobs import job_enqueue, jobs_requeue_stale, jobs_to_resend
from .membership import EXCLUSIVE_ROLES, RoleConflict, role_conflict_message, study_member_add, study_member_remove
from .people import (
    PARTICIPANT_ROLES,
    NewPerson,
    PeopleError,
    password_generate,
    people_lines,
    study_people_add_existing,
    study_people_create,
)
from .signin import SignInLinkInvalid, signin_link_create, signin_link_redeem
from .studies import STUDY_EDITABLE_FIELDS, researcher_grant, study_create, study_update

__all__ = [
    "CONCURRENT_IMPORT_MESSAGE",
    "EXCLUSIVE_ROLES",
    "PARTICIPANT_ROLES",
    "STUDY_EDITABLE_FIELDS",
    "NewPerson",
    "PeopleError",
    "RoleConflict",
    "SignInLinkInvalid",
    "import_job_run",
    "job_enqueue",
    "jobs_requeue_stale",
    "jobs_to_resend",
    "password_generate",
    "people_lines",
    "researcher_grant",
    "role_conflict_message",
    "signin_link_create",
    "signin_link_redeem",
    "study_create",
    "study_import_file",
    "study_import_lock",
    "study_import_parsed",
    "study_member_add",
    "study_member_remove",
    "study_people_add_existing",
    "study_people_create",
    "study_update",
]
