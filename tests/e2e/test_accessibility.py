"""Accessibility in real Chromium (issue 42): axe-core runs over every page a judge, a participant,
an annotator or a researcher can reach, for every registered protocol, at 1280 and 375 px, with
the study's pages in English, Spanish and Arabic (right to left). No page may have a serious or
critical violation of a WCAG 2.0, 2.1 or 2.2 A/AA rule or of axe's best practices, except the
rules :data:`WAIVED` lists with the reason.

Every page means every route: the walk records the view of each page it checked (after any
redirect), and the last test compares that with the URL configuration, so a new page that no
walk reaches fails until a walk reaches it or :data:`NOT_PAGES` says why it is no page (a file,
a JSON answer, an action a form posts to).

The researcher's pages are in English whatever the study's language (settings.LANGUAGES), so they
are walked once per protocol, with the texts of an Arabic study (right to left inside a
left-to-right page). docs/accessibility.md tells what is checked and how to run it.
"""

from __future__ import annotations

import json
import os
import secrets
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from playwright.sync_api import expect

from annotation.enums import Role
from annotation.judging.models import Assignment, AttentionCheck
from annotation.judging.protocols.registry import protocols_all
from annotation.services.membership import study_member_add
from annotation.services.studies import study_update
from tests.conformance.conftest import adapter_of, answer_next, api_for, design_of, study_url
from tests.conftest import browser_login, screenshot
from tests.factories import study_with_data

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LANGUAGES = ("en", "es", "ar")
WIDTHS = (1280, 375)
#: The rules axe runs: WCAG 2.0, 2.1 and 2.2 at levels A and AA, and axe's best practices.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa", "best-practice"]
#: The impacts that fail a page.
FAILING = ("critical", "serious", "moderate", "minor")
#: Rules not applied, each with the reason (docs/accessibility.md lists them too).
WAIVED: dict[str, str] = {}
_FORM = "a form posts here: it answers with a redirect, or with its form's page (walked) and the errors"
_FILE = "a file to download (CSV, JSON Lines, JSON or an SVG figure the report page shows), no page"
_JSON = "the JSON a page polls for a job's progress, no page"
#: Routes that are no page a person reads, each with what it is instead.
NOT_PAGES: dict[str, str] = {
    **dict.fromkeys(
        [
            "logout",
            "account_token_revoke",
            "annotation:study_member_add",
            "annotation:study_member_remove",
            "annotation:study_people_add",
            "alignment:assign",
            "alignment:import_pairs",
            "alignment:import_system",
            "alignment:run_aligner",
            "alignment:settings",
            "alignment:system_delete",
            "dashboard:adaptive",
            "dashboard:settings",
            "judging:assign_late",
            "judging:close",
            "judging:compare_submit",
            "judging:esa_proposals_upload",
            "judging:esa_submit",
            "judging:exclusion",
            "judging:import_judgments",
            "judging:open",
            "judging:rank_submit",
            "judging:reopen",
            "judging:reset",
            "judging:screening_settings",
            "judging:submit",
            "judging:training_import",
            "judging:training_item_add",
            "judging:training_item_delete",
            "metrics:pem_run",
            "metrics:pem_train",
            "metrics:resource_upload",
            "metrics:run_cancel",
            "metrics:run_retry",
            "participation:link_close",
            "participation:link_create",
            "participation:settings",
            "reports:create",
            "reports:refresh",
        ],
        _FORM,
    ),
    **dict.fromkeys(
        [
            "alignment:export",
            "alignment:pairs_export",
            "alignment:run_export",
            "judging:export_comparisons",
            "judging:export_esa_csv",
            "judging:export_esa_jsonl",
            "judging:export_rankings",
            "judging:export_rankings_jsonl",
            "judging:export_tidy",
            "judging:export_wide",
            "metrics:run_export",
            "participation:participants_csv",
            "reports:export",
            "reports:plot",
            "reports:table_csv",
        ],
        _FILE,
    ),
    **dict.fromkeys(
        [
            "alignment:aligner_run_status",
            "alignment:run_status",
            "annotation:import_job_status",
            "judging:open_job_status",
            "judging:progress_json",
            "metrics:pem_status",
            "metrics:run_status",
            "reports:status",
        ],
        _JSON,
    ),
    "alignment:next": "sends the annotator on to their next grid (walked)",
    "favicon": "sends the browser on to the icon's SVG",
}

#: Where each walk of this run writes the views it checked (one folder a run: pytest-xdist's
#: workers share its id; without xdist, one process runs every walk).
SEEN_DIR = (
    Path(__file__).resolve().parents[2]
    / "var"
    / "accessibility"
    / (os.environ.get("PYTEST_XDIST_TESTRUNUID") or uuid.uuid4().hex)
)

_axe = Axe()


def axe_problems(page) -> list[str]:
    """The page's serious and critical violations of the rules in :data:`AXE_TAGS` (waived rules
    left out), each as "rule (impact): help: the first elements"."""
    options = {"runOnly": {"type": "tag", "values": AXE_TAGS}, "resultTypes": ["violations"]}
    if WAIVED:
        options["rules"] = {rule: {"enabled": False} for rule in WAIVED}
    found = _axe.run(page, options=options).response["violations"]
    return [
        f"{v['id']} ({v['impact']}): {v['help']}: " + "; ".join(" ".join(n["target"]) for n in v["nodes"][:4])
        for v in found
        if v["impact"] in FAILING
    ]


def settled(page) -> None:
    """Two animation frames later: the page's resize observers (scroll_regions.js) have run."""
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


class Audit:
    """Pages checked and problems found by one walk."""

    def __init__(self, page, name: str):
        self.page, self.name = page, name
        self.views: set[str] = set()
        self.problems: list[str] = []

    def check(self, url: str | None = None, *, ready: str = "main", status: int = 200) -> None:
        """Go to ``url`` (or stay), wait for ``ready``, and run axe at each width."""
        if url is not None:
            response = self.page.goto(url)
            assert response is not None and response.status == status, f"{url}: {response and response.status}"
        expect(self.page.locator(ready).first).to_be_attached()
        path = urlsplit(self.page.url).path
        self.views.add(resolve(path).view_name)
        for width in WIDTHS:
            self.page.set_viewport_size({"width": width, "height": 900})
            settled(self.page)
            self.problems += [f"{path} at {width}px: {p}" for p in axe_problems(self.page)]
        self.page.set_viewport_size({"width": WIDTHS[0], "height": 900})

    def finish(self) -> None:
        """Fail on any problem; record the views checked, and when this is the run's last walk,
        check that the walks together reached every page (:func:`unwalked_pages`)."""
        assert not self.problems, "axe found:\n" + "\n".join(self.problems)
        SEEN_DIR.mkdir(parents=True, exist_ok=True)
        (SEEN_DIR / f"{self.name}.json").write_text(json.dumps(sorted(self.views)))
        seen = [SEEN_DIR / f"{walk}.json" for walk in walks()]
        if all(f.exists() for f in seen):
            views = set().union(*(json.loads(f.read_text()) for f in seen))
            assert not unwalked_pages(views), (
                f"pages no walk checked: {unwalked_pages(views)}; walk them here, or say in NOT_PAGES why they are no page"
            )


def _units():
    return list(protocols_all())


#: Three verses of John (KJV) and two paraphrases of each, for real-looking pages and screenshots.
VERSES = [
    (
        "In the beginning was the Word, and the Word was with God.",
        "At the start there was the Word, and the Word was with God.",
        "The Word existed at first and was with God.",
    ),
    (
        "And the light shineth in darkness; and the darkness comprehended it not.",
        "The light shines in the dark, and the dark has not understood it.",
        "Light glows in darkness, which never grasped it.",
    ),
    (
        "He came unto his own, and his own received him not.",
        "He came to his own people, and they did not accept him.",
        "His own people did not welcome him when he came.",
    ),
]


def _texts_real(study) -> None:
    from annotation.models import Candidate, Original

    for original, (text, *paraphrases) in zip(Original.objects.filter(study=study).order_by("external_id"), VERSES):
        Original.objects.filter(pk=original.pk).update(text=text)
        for cand, paraphrase in zip(Candidate.objects.filter(original=original).order_by("system__name"), paraphrases):
            Candidate.objects.filter(pk=cand.pk).update(text=paraphrase)


def walks() -> list[str]:
    """The names of the walks the tests below make (their ``Audit`` names)."""
    return [f"judge-{language}" for language in LANGUAGES] + [f"researcher-{u.slug}" for u in _units()]


def unwalked_pages(views: set[str]) -> list[str]:
    """The routes that are pages but that no walk checked."""
    return sorted(set(page_routes()) - views - set(NOT_PAGES))


def _study(unit, owner, language: str, judge: str):
    from annotation.judging import screening
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open

    study = study_with_data(owner=owner, n_originals=3, systems=("alpha", "beta"), name=f"Study {unit.slug}")
    _texts_real(study)
    study_update(study=study, changes={"language": language})
    user = study.owner.__class__.objects.create_user(username=judge, password="pw")
    study_member_add(study=study, user=user, role=Role.JUDGE)
    design_update(study=study, changes=design_of(unit))
    study_judging_open(study=study)
    r = api_for(owner).post(study_url(study, "training/items/"), adapter_of(unit).training_item(study), format="json")
    assert r.status_code == 201, r.content[:300]
    screening.screening_settings_update(
        study=study,
        changes={"training_required": 1, "training_retries": 3, "attention_count": 1, "attention_policy": "end"},
    )
    study.refresh_from_db()
    return study, user


def _checks_answered(assignment) -> None:
    """The judge's attention checks answered (and passed), so that the items follow."""
    from django.utils import timezone

    AttentionCheck.objects.filter(assignment=assignment).update(answered_at=timezone.now(), passed=True)


def _instructions_read(page) -> None:
    """The instructions page's "start" (the judge has read them)."""
    with page.expect_navigation():
        page.locator('form[action$="/instructions/"] button[type="submit"]').click()


def _judge_walk(audit: Audit, unit, study, user) -> None:
    """A judge's pages: their list, the instructions, a training item and its feedback, an
    attention check, an item, the end page and the screened-out page."""
    from annotation.judging import screening

    base = f"/judge/studies/{study.pk}"
    audit.check("/judge/")
    audit.check(f"{base}/instructions/")
    _instructions_read(audit.page)
    audit.check(f"{base}/training/")
    assignment = Assignment.objects.get(study=study, judge=user)
    client = api_for(user)
    shown = client.get(study_url(study, "training/")).json()["next"]
    answer = adapter_of(unit).training_answer(study, shown)
    r = client.post(study_url(study, "training/answers/"), {"item": shown["token"], "scores": answer}, format="json")
    assert r.status_code == 201, r.content[:300]
    audit.check(f"{base}/training/feedback/")
    Assignment.objects.filter(pk=assignment.pk).update(training_passed_at=assignment.created_at)
    assignment.refresh_from_db()
    screening.attention_plan(assignment=assignment, settings=screening.settings_for_study(study=study))
    AttentionCheck.objects.filter(assignment=assignment).update(after_done=0)
    audit.check(f"{base}/")  # the check: in place among the items, or the protocol's own page
    _checks_answered(assignment)
    audit.check(f"{base}/")  # an item
    if study.language == "en":  # docs/judges.md shows each protocol's item page on a phone (`make tour`)
        audit.page.set_viewport_size({"width": 375, "height": 812})
        screenshot(audit.page, f"phone-{unit.slug}", full_page=False)
        audit.page.set_viewport_size({"width": WIDTHS[0], "height": 900})
    while answer_next(unit, client, study)[0] is not None:
        pass
    audit.check(f"{base}/")  # the end
    with audit.page.expect_navigation():
        audit.page.locator("#previous-link").click()
    audit.check()  # the last item again, to change the answer
    screening.screen_out(assignment=assignment, rule="attention", reason="failed")
    audit.check(f"{base}/screened-out/")


def _field_walk(audit: Audit, unit, study) -> None:
    """A participant's pages: the consent page, the questions before and after the work, the
    end with the completion code, the personal link back in, the timed-out page, a dead link."""
    from datetime import timedelta

    from django.utils import timezone

    from annotation.judging import screening
    from annotation.models import Participant
    from annotation.participation import services as participation

    participation.participation_settings_update(
        study=study,
        consent_text="We keep your answers for research.",
        questions_before=[
            {"name": "native_language", "type": "language", "label": "Your native language", "required": True},
            {"name": "level", "type": "scale", "label": "How well do you read?", "choices": ["1", "2", "3"]},
            {"name": "where", "type": "choice", "label": "Where are you?", "choices": ["home", "work"]},
        ],
        questions_after=[{"name": "comments", "type": "text", "label": "Anything to tell us?"}],
    )
    link = participation.join_link_create(
        study=study, role="judge", platform="prolific", created_by=study.owner, completion_code="A11YCODE"
    )
    ids = "&".join(f"{k}={secrets.token_hex(12)}" for k in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"))
    audit.check(f"/join/{link.token}/?{ids}")
    audit.page.locator("#consent-accept").click()
    audit.check(ready="#start-link")  # joined: the personal link back in, and the start
    audit.page.locator("#start-link").click()
    audit.page.wait_for_url("**/questions/before/")
    audit.check()
    participant = Participant.objects.get(link=link)
    participation.participant_answers_save(
        participant=participant, phase="before", data={"native_language": "en", "level": "2", "where": "home"}
    )
    assignment = Assignment.objects.get(study=study, judge=participant.user)
    Assignment.objects.filter(pk=assignment.pk).update(training_passed_at=assignment.created_at)
    screening.attention_plan(assignment=assignment, settings=screening.settings_for_study(study=study))
    _checks_answered(assignment)
    audit.page.goto(f"/participate/studies/{study.pk}/")
    _instructions_read(audit.page)
    client = api_for(participant.user)
    while answer_next(unit, client, study)[0] is not None:
        pass
    audit.check(f"/participate/studies/{study.pk}/")  # the end, with a link to the questions after the work
    audit.check(f"/participate/studies/{study.pk}/questions/after/")
    participation.participant_answers_save(participant=participant, phase="after", data={"comments": "none"})
    audit.check(f"/participate/studies/{study.pk}/")  # the end, with the completion code
    _, token = participation.participant_join(
        link=link,
        ids=participation.PlatformIds(
            platform_id=secrets.token_hex(12), study_id=secrets.token_hex(12), session_id=secrets.token_hex(12)
        ),
    )
    audit.page.context.clear_cookies()
    audit.check(f"/participate/resume/{token}/")
    audit.page.locator("main form button[type=submit]").first.click()
    audit.page.wait_for_load_state()
    participation.participants_release_timed_out(study=study, now=timezone.now() + timedelta(days=2))
    audit.check(f"/participate/studies/{study.pk}/")  # timed out
    audit.check("/join/no-such-link/", status=404)


def _annotator_walk(audit: Audit, owner, language: str) -> None:
    """An annotator's pages: their list, the guidelines and the alignment grid."""
    from annotation.alignment.services.assignments import assignments_create
    from annotation.alignment.services.pairs import pairs_import_file

    study = study_with_data(owner=owner, n_originals=1, name="Alignment study")
    study_update(study=study, changes={"language": language})
    annotator = owner.__class__.objects.create_user(username="annie", password="pw")
    study_member_add(study=study, user=annotator, role=Role.ANNOTATOR)
    one, two = SENTENCES[language]
    pairs_import_file(study=study, data=f"pair_id,sentence1,sentence2\np1,{one},{two}\n".encode(), filename="p.csv")
    assignments_create(study=study)
    browser_login(audit.page, "annie")
    audit.check("/")
    audit.check("/alignment/")
    audit.check("/alignment/guidelines/")
    audit.check("/alignment/next/")  # the grid
    audit.page.context.clear_cookies()
    # The researcher's pages of an aligned pair and of a scoring run over it.
    from annotation.alignment.models import AlignmentAssignment
    from annotation.alignment.services.drafts import assignment_submit
    from annotation.alignment.services.queueing import scoring_run_create
    from annotation.alignment.services.scoring import scoring_run_execute

    assignment = AlignmentAssignment.objects.get(annotator=annotator)
    assignment_submit(assignment=assignment, sure=[[0, 0], [1, 1]], possible=[], revision=0, active_seconds=5)
    table = f"{one.split()[0]}\t{two.split()[0]}\t0.5\n".encode()
    run = scoring_run_execute(
        run_id=scoring_run_create(
            study=study, user=owner, kind="paraphrases", table_data=table, table_filename="t.tsv"
        ).pk
    )
    assert run.status == "succeeded", run.error
    browser_login(audit.page, owner.username)
    audit.check(f"/studies/{study.pk}/alignment/pairs/{assignment.pair_id}/")
    audit.check(f"/studies/{study.pk}/alignment/scoring/{run.pk}/")
    audit.page.context.clear_cookies()


def _signin_walk(audit: Audit, owner, language: str) -> None:
    """The page of a single-use sign-in link the researcher sent to a judge of a study in ``language``."""
    from annotation.services.signin import signin_link_create

    study = study_with_data(owner=owner, n_originals=1, name="Sign-in study")
    study_update(study=study, changes={"language": language})
    judge = owner.__class__.objects.create_user(username="sina", password="pw")
    study_member_add(study=study, user=judge, role=Role.JUDGE)
    other = study_with_data(owner=owner, n_originals=1, name="Another study")  # one role a study
    study_member_add(study=other, user=judge, role=Role.ANNOTATOR)
    audit.check(f"/signin/{signin_link_create(user=judge, study=study, created_by=owner)}/")
    with audit.page.expect_navigation():
        audit.page.locator("main form button[type=submit]").first.click()
    audit.check("/")  # a judge and annotator chooses where to go
    audit.page.context.clear_cookies()


#: Two equivalent sentences in each language, for the alignment grid.
SENTENCES = {
    "en": ("In the beginning God created the heavens and the earth.", "God created the heavens and the earth first."),
    "es": ("En el principio creó Dios los cielos y la tierra.", "Dios creó primero los cielos y la tierra."),
    "ar": ("في البدء خلق الله السماوات والأرض.", "خلق الله السماوات والأرض في البداية."),
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_judge_page_of_every_protocol_has_no_serious_axe_violation(page, researcher, language):
    audit = Audit(page, f"judge-{language}")
    for unit in _units():
        study, user = _study(unit, researcher, language, f"judge-{unit.slug}")
        browser_login(page, user.username)
        _judge_walk(audit, unit, study, user)
        page.context.clear_cookies()
        _field_walk(audit, unit, study)
        page.context.clear_cookies()
    _annotator_walk(audit, researcher, language)
    audit.check("/accounts/login/")
    audit.check("/")
    _signin_walk(audit, researcher, language)
    audit.finish()


def _judged(unit, owner, language: str):
    """A study of ``unit`` whose judge answered every item, with a metric run, a report and a join link."""
    from annotation.participation import services as participation
    from metrics.reports.services.build import report_build
    from metrics.reports.services.queueing import report_create
    from tests.metrics.reports.conftest import run_metric

    study, user = _study(unit, owner, language, f"judge-{unit.slug}")
    client = api_for(user)
    shown = client.get(study_url(study, "training/")).json()["next"]
    client.post(
        study_url(study, "training/answers/"),
        {"item": shown["token"], "scores": adapter_of(unit).training_answer(study, shown)},
        format="json",
    )
    assignment = Assignment.objects.get(study=study, judge=user)
    Assignment.objects.filter(pk=assignment.pk).update(training_passed_at=assignment.created_at)
    screening_plan(assignment)
    while answer_next(unit, client, study)[0] is not None:
        pass
    run = run_metric(study, "bleu")
    report = report_build(report_id=report_create(study=study, created_by=owner, enqueue=False).pk)
    assert report.status == "succeeded", report.error
    link = participation.join_link_create(study=study, role="judge", created_by=owner)
    return study, run, report, link


def screening_plan(assignment) -> None:
    from annotation.judging import screening

    screening.attention_plan(assignment=assignment, settings=screening.settings_for_study(study=assignment.study))
    _checks_answered(assignment)


@pytest.mark.parametrize("slug", [u.slug for u in _units()])
def test_every_researcher_page_of_every_protocol_has_no_serious_axe_violation(
    page, researcher, slug, settings, tmp_path
):
    from annotation.judging.protocols.registry import protocol_get
    from tests.e2e.test_every_page_fits import researcher_pages

    study, run, report, link = _judged(protocol_get(slug), researcher, "ar")
    audit = Audit(page, f"researcher-{slug}")
    browser_login(page, researcher.username)
    for url in ["/", *researcher_pages(study, run, link), f"/studies/{study.pk}/reports/{report.pk}/"]:
        audit.check(url)
    settings.PARAEVAL_DOCS_SITE = str(tmp_path / "no-site")  # the pages' sources (a built site is the theme's)
    page.goto(f"/studies/{study.pk}/field/")
    with page.expect_navigation():
        page.locator("#field-docs").click()  # the documentation the page links to
    audit.check()
    audit.check("/docs/")
    audit.finish()


def _all_routes(resolver=None, prefix="", namespace=""):
    for p in (resolver or get_resolver()).url_patterns:
        if isinstance(p, URLResolver):
            ns = ":".join(filter(None, [namespace, p.namespace or ""]))
            yield from _all_routes(p, prefix + str(p.pattern), ns)
        elif isinstance(p, URLPattern) and p.name:
            yield prefix + str(p.pattern), ":".join(filter(None, [namespace, p.name]))


def page_routes() -> dict[str, str]:
    """Every named route outside the admin and the API, by name."""
    return {name: route for route, name in _all_routes() if not route.startswith(("admin/", "api/"))}


def test_what_is_no_page_is_a_route_and_never_walked():
    routes = page_routes()
    assert set(NOT_PAGES) <= set(routes), sorted(set(NOT_PAGES) - set(routes))
    assert walks() and len(set(walks())) == len(walks())
