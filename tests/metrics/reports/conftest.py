"""Fixtures of the report tests: studies judged by simulated judges through the real models."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from annotation.enums import Role

WORDS = (
    "the old man walked slowly along the quiet river bank at dawn while birds sang in tall green trees "
    "near a small stone house where children played with a red ball and their dog barked loudly"
).split()
SWAPS = "a big little bright dark happy sad fast cold warm young river road hill field city".split()


def _sentence(rng: random.Random) -> list[str]:
    start = rng.randrange(len(WORDS) - 14)
    return WORDS[start : start + rng.randint(8, 14)]


def _paraphrase(words: list[str], rng: random.Random, changes: int) -> str:
    out = list(words)
    for _ in range(changes):
        out[rng.randrange(len(out))] = rng.choice(SWAPS)
    return " ".join(out).capitalize() + "."


def make_study_data(owner, *, name="Report study", n_originals=12, systems=("human", "machine"), seed=11):
    """A study with varied sentences: system k changes about 1 + 2k words of each original,
    so that string metrics (BLEU, TER) vary from candidate to candidate."""
    from annotation.models import Candidate, Original, System
    from annotation.services.studies import study_create

    rng = random.Random(seed)
    study = study_create(name=name, owner=owner)
    sys_rows = System.objects.bulk_create([System(study=study, name=s) for s in systems])
    originals = Original.objects.bulk_create(
        [
            Original(study=study, external_id=f"s{i:04d}", text=" ".join(_sentence(rng)).capitalize() + ".", position=i)
            for i in range(n_originals)
        ]
    )
    cands = []
    for o in originals:
        words = o.text.rstrip(".").lower().split()
        for k, s in enumerate(sys_rows):
            cands.append(Candidate(original=o, system=s, text=_paraphrase(words, rng, rng.randint(0, 2) + 2 * k)))
    Candidate.objects.bulk_create(cands, batch_size=2000)
    return study


def open_judging(study):
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open

    design_update(study=study, changes={"seed": 7})
    study_judging_open(study=study)
    study.refresh_from_db()
    return study


def make_judged_study(
    owner,
    *,
    name="Report study",
    n_originals=12,
    systems=("human", "machine"),
    n_judges=3,
    random_clickers=0,
    judges_per_item=None,
    seed=3,
):
    """A study of ``n_originals`` × ``systems`` (+ one control of each kind per original),
    opened for judging and rated by ``n_judges`` simulated judges."""
    from annotation.judging.protocols.absolute.simulation import simulated_judges_fill

    study = open_judging(make_study_data(owner, name=name, n_originals=n_originals, systems=systems))
    if n_judges:
        simulated_judges_fill(
            study=study,
            n_judges=n_judges,
            n_random_clickers=random_clickers,
            judges_per_item=judges_per_item,
            seed=seed,
        )
    return study


def run_metric(study, slug: str, **kwargs):
    """A succeeded metric run of ``slug`` over the study, computed in-process."""
    from metrics.services.runs import metric_run_create
    from metrics.services.worker import metric_run_execute

    run = metric_run_create(study=study, metric=slug, enqueue=False, **kwargs)
    run = metric_run_execute(run_id=run.pk)
    assert run.status == "succeeded", run.error
    return run


def build_now(study, user=None, **settings):
    """Create and build a report synchronously (what a worker does), with a small bootstrap."""
    from metrics.reports.services.build import report_build
    from metrics.reports.services.queueing import report_create

    settings.setdefault("n_boot", 50)
    report = report_create(study=study, created_by=user, settings=settings, enqueue=False)
    return report_build(report_id=report.pk)


def submit_as_real_judge(study, user, *, overall=3):
    """One judgment submitted by a real (late-joining) judge through the judging service."""
    from annotation.judging.protocols.absolute.selectors import item_next_for_judge
    from annotation.judging.protocols.absolute.services import judgment_submit
    from annotation.judging.services.assignments import assignment_ensure_for_judge
    from annotation.services.membership import study_member_add

    study_member_add(study=study, user=user, role=Role.JUDGE)
    assignment = assignment_ensure_for_judge(study=study, judge=user)
    item = item_next_for_judge(assignment=assignment)
    return judgment_submit(
        study=study,
        judge=user,
        token=item.token,
        key=f"real-{user.username}-0001",
        scores={"adequacy": 4, "fluency": 4, "dissimilarity": 2, "overall": overall},
        serve_stamp=item.serve_stamp,
    )


@pytest.fixture(scope="module")
def shared(django_db_setup, django_db_blocker):
    """One judged study with BLEU and TER runs and a built report, made once per test
    module (a report build draws five figures: seconds, not milliseconds). Each test
    still runs in its own transaction, so whatever a test changes is rolled back; the
    rows are removed after the module (``flush``, as TransactionTestCase does)."""
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from annotation.services.studies import researcher_grant

    with django_db_blocker.unblock():
        owner = User.objects.create_user("rhea", password="pw")
        researcher_grant(user=owner)
        study = make_judged_study(owner, systems=("human", "machine", "mt"))
        run_metric(study, "bleu")
        run_metric(study, "ter")
        report = build_now(study, owner)
        assert report.status == "succeeded", report.error
        ids = SimpleNamespace(owner=owner.pk, study=study.pk, report=report.pk)
    yield ids
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)


@pytest.fixture
def owner(shared, db):
    """The researcher who owns the shared study (username ``rhea``, password ``pw``)."""
    from django.contrib.auth.models import User

    return User.objects.get(pk=shared.owner)


@pytest.fixture
def judged_study(shared, db):
    from annotation.models import Study

    return Study.objects.get(pk=shared.study)


@pytest.fixture
def built_report(shared, db):
    from metrics.reports.models import Report

    return Report.objects.select_related("study").get(pk=shared.report)


@pytest.fixture
def outsiders(make_user, judged_study):
    """A judge and an annotator of the study, and a researcher of another study."""
    from annotation.services.membership import study_member_add

    judge = make_user("jules")
    study_member_add(study=judged_study, user=judge, role=Role.JUDGE)
    annotator = make_user("anne")
    study_member_add(study=judged_study, user=annotator, role=Role.ANNOTATOR)
    other = make_user("otto", researcher=True)
    make_study_data(other, name="Otto's study", n_originals=2)
    return {"judge": judge, "annotator": annotator, "other_researcher": other}
