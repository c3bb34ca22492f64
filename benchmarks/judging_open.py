"""Measure opening judging: one transaction vs the background job's steps, and the request.

Run from the repo root (SQLite in a fresh temp var dir unless DATABASE_URL is set):
    PARAEVAL_VAR_DIR=$(mktemp -d) .venv/bin/python benchmarks/judging_open.py [judges] [originals]
Defaults: 200 judges, 525 originals x 1 system + 3 controls = 2,100 items (420,000 assignment items).
``ORDER=sync,job`` chooses what runs (default sync,job,sync,job). The "request part"
is what the researcher's request does for a large study (checks, a queued job); the
"worker part" is the job run in this process, as a worker would run it.
Figures: benchmarks/RESULTS.md, "Opening judging".
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django  # noqa: E402

django.setup()
from django.core.management import call_command  # noqa: E402

call_command("migrate", verbosity=0)
from django.contrib.auth.models import User  # noqa: E402

from annotation.enums import Role  # noqa: E402
from annotation.judging.services.open_job import open_job_run
from annotation.judging.services.opening import study_judging_open, study_judging_reset  # noqa: E402
from annotation.judging.services.queueing import study_judging_open_start
from annotation.models import Candidate, Original, Study, StudyMembership, System  # noqa: E402

n_judges = int(sys.argv[1]) if len(sys.argv) > 1 else 200
n_orig = int(sys.argv[2]) if len(sys.argv) > 2 else 525
owner = User.objects.create(username=f"owner{time.time_ns()}")
study = Study.objects.create(name=f"measure {time.time_ns()}", owner=owner)
system = System.objects.create(study=study, name="s1")
origs = Original.objects.bulk_create(
    [
        Original(study=study, external_id=f"o{i}", position=i, text=f"Original sentence {i} says something plain.")
        for i in range(n_orig)
    ]
)
Candidate.objects.bulk_create(
    [Candidate(original=o, system=system, text=f"Sentence {o.position} put otherwise.") for o in origs]
)
for j in range(n_judges):
    u = User.objects.create(username=f"j{j:03d}-{study.pk}")
    StudyMembership.objects.create(study=study, user=u, role=Role.JUDGE)


def run_sync():
    t = time.perf_counter()
    s = study_judging_open(study=study)
    print(f"one transaction (study_judging_open): {time.perf_counter() - t:.2f} s  {s}")
    study_judging_reset(study=study)


def run_job():
    t = time.perf_counter()
    job = study_judging_open_start(study=study, background=True)
    print(f"request part (study_judging_open_start, background): {1000 * (time.perf_counter() - t):.0f} ms")
    t = time.perf_counter()
    job = open_job_run(job_id=job.pk)
    print(f"worker part (open_job_run): {time.perf_counter() - t:.2f} s  {job.status} {job.summary}")
    study_judging_reset(study=study)


order = os.environ.get("ORDER", "sync,job,sync,job").split(",")
for what in order:
    run_sync() if what == "sync" else run_job()
