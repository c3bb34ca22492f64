"""Protocol conformance (issue 38): every registered protocol goes through every shared operation.

Each test runs once per unit of the registry (``protocol``, parametrized at collection by
tests/conformance/conftest.py), the suite's own probe included, on a small study of 3 originals
× 2 systems. Judges answer through the protocol's own API; researchers act through the shared
services and doors. Where a unit says it does not do something, the test asserts a clear refusal.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.judging import screening
from annotation.judging.errors import CannotOpen
from annotation.judging.models import Assignment, AttentionCheck
from annotation.judging.protocols.base import JudgingProtocol
from annotation.judging.protocols.registry import protocols_all
from annotation.judging.selectors.judge import studies_for_judge
from annotation.judging.selectors.progress import study_progress
from annotation.judging.services.assignments import assignment_ensure_for_judge
from annotation.judging.services.opening import (
    study_judging_close,
    study_judging_open,
    study_judging_reopen,
    study_judging_reset,
)
from annotation.models import Participant, Study
from annotation.participation import services as participation
from annotation.participation.selectors import join_link_seat_frees_at, participants_rows
from metrics.dashboard import selectors as dashboard
from metrics.dashboard.bonus import BonusRule, bonus_lines
from metrics.dashboard.models import Dashboard
from metrics.dashboard.services import planning, snapshot
from tests.annotation.participation.conftest import join, prolific_params
from tests.annotation.test_backup import wipe_everything

from . import conftest as suite
from .conftest import (
    PROBE,
    PROBE_SLUG,
    adapter_of,
    answer_all,
    answer_next,
    api_for,
    export_bytes,
    judge_add,
    new_key,
    next_served,
    study_build,
    study_url,
)

pytestmark = pytest.mark.django_db


def _user(name: str) -> User:
    return User.objects.get(username=name)


def _assignment(study: Study, name: str) -> Assignment:
    return Assignment.objects.get(study=study, judge__username=name)


def _latest(unit, study: Study):
    return unit.judgments_of_study(study=study).filter(is_latest=True)


def _answer_one(unit, study: Study, name: str = "ann") -> dict:
    item, r = answer_next(unit, api_for(_user(name)), study)
    assert item is not None, (unit.slug, r.status_code, r.content[:300])
    assert r.status_code == 201, (unit.slug, r.status_code, r.content[:300])
    return item


def _researcher_api(researcher):
    return api_for(researcher)


def _import_via_api(researcher, study: Study, data: bytes, filename: str):
    upload = SimpleUploadedFile(filename, data)
    return _researcher_api(researcher).post(study_url(study, "judgments/import/"), {"file": upload}, format="multipart")


def _assert_clear_refusal(response, *words: str) -> None:
    """A 4xx whose body says why (each of ``words`` in it), not a 500 nor a silent 2xx."""
    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    text = json.dumps(response.json()) if response["Content-Type"].startswith("application/json") else ""
    text = text or response.content.decode()
    assert text.strip(), "a refusal without a message"
    for word in words:
        assert word.lower() in text.lower(), (word, text[:300])


# --- the suite itself ----------------------------------------------------------------------------


def test_the_suite_runs_every_registered_protocol_and_its_own_probe():
    """The parametrization reads the registry: the probe the suite registers is among the ids,
    with every built-in unit, and it is gone from the registry outside the suite's fixture."""

    class Metafunc:
        fixturenames = ["protocol"]
        ids: list[str] = []

        def parametrize(self, name, values, ids):
            assert name == "protocol_slug"
            self.ids = list(ids)

    metafunc = Metafunc()
    suite.pytest_generate_tests(metafunc)
    builtin = [u.slug for u in protocols_all()]
    assert PROBE not in protocols_all()
    assert metafunc.ids == [*builtin, PROBE_SLUG]
    assert {"absolute", "comparison", "esa", "ranking"} <= set(builtin)


def test_a_protocol_the_suite_does_not_know_fails_with_a_clear_message():
    class Unknown(suite.ProbeProtocol):
        slug = "not-in-suite"

    with pytest.raises(pytest.fail.Exception, match="add the protocol's design to the conformance suite"):
        suite.design_of(Unknown())


def test_a_protocol_the_suite_cannot_answer_fails_with_a_clear_message():
    class Unanswerable(JudgingProtocol):
        slug = "no-adapter"

    with pytest.raises(pytest.fail.Exception, match="add the protocol's adapter to the conformance suite"):
        adapter_of(Unanswerable())


# --- opening and late judges -------------------------------------------------------------------


def test_opening_gives_every_judge_items_and_serves_the_first(protocol, researcher):
    study = study_build(protocol, researcher)
    assignments = [_assignment(study, "ann"), _assignment(study, "bob")]
    for a in assignments:
        assert a.n_items > 0
        assert protocol.items_remaining(assignment=a) == a.n_items
        assert protocol.items_done(assignment=a) == 0
    assert protocol.items_of_study(study=study).count() == sum(a.n_items for a in assignments)
    r = next_served(protocol, api_for(_user("ann")), study)
    assert r.status_code == 200 and r.json()[adapter_of(protocol).item_key] is not None


def test_a_late_judge_gets_items_when_nobody_holds_any(protocol, researcher):
    """A study opened with no judges, then a judge added: their assignment is not empty."""
    study = study_build(protocol, researcher, judges=())
    assert not Assignment.objects.filter(study=study).exists()
    cy = judge_add(study, "cy")
    a = assignment_ensure_for_judge(study=study, judge=cy)
    assert a is not None and a.n_items > 0
    assert protocol.items_remaining(assignment=a) == a.n_items
    _answer_one(protocol, study, "cy")
    assert protocol.items_done(assignment=a) == 1


# --- what the judge and the researcher see of one judgment ------------------------------------


def test_the_judges_home_counts_their_judgment(protocol, researcher, client):
    study = study_build(protocol, researcher)
    _answer_one(protocol, study)
    row = next(r for r in studies_for_judge(judge=_user("ann")) if r["study"].pk == study.pk)
    assert row["done"] == 1
    client.force_login(_user("ann"))
    page = client.get(reverse("judging:home"))
    assert page.status_code == 200
    n = _assignment(study, "ann").n_items
    assert f"1 of {n}" in page.content.decode()


def test_progress_counts_one_judgment(protocol, researcher, client):
    study = study_build(protocol, researcher)
    _answer_one(protocol, study)
    progress = study_progress(study=study)
    judges = {j["judge"]: j for j in progress["judges"]}
    assert (judges["ann"]["done"], judges["bob"]["done"]) == (1, 0)
    assert progress["done"] == 1 and progress["judgments"] == 1
    assert judges["ann"]["last_submitted_at"] is not None
    assert protocol.progress_by_judge(study=study)[_user("ann").pk][0] == 1
    client.force_login(researcher)
    assert client.get(reverse("judging:progress_json", kwargs={"study_id": study.pk})).status_code == 200


def test_the_progress_pages_csvs_have_a_row_for_one_judgment(protocol, researcher, client):
    study = study_build(protocol, researcher)
    _answer_one(protocol, study)
    client.force_login(researcher)
    for name in ("judging:export_tidy", "judging:export_wide"):
        r = client.get(reverse(name, kwargs={"study_id": study.pk}))
        assert r.status_code == 200, name
        body = b"".join(r.streaming_content) if r.streaming else r.content
        rows = list(csv.reader(io.StringIO(body.decode("utf-8-sig"))))
        assert len(rows) >= 2, (name, rows)  # a header and the judgment


def test_the_dashboard_counts_one_judgment_and_draws_its_figures(protocol, researcher):
    study = study_build(protocol, researcher)
    _answer_one(protocol, study)
    live = dashboard.dashboard_live(study=study)
    assert live["totals"]["judgments"] == 1 and live["totals"]["done"] == 1
    assert {j["judge"]: j["judgments"] for j in live["judges"]} == {"ann": 1, "bob": 0}
    dash = snapshot.dashboard_refresh(study=study, force_answers=True)
    assert dash.snapshot["totals"]["judgments"] == 1
    answers = dash.snapshot["answers"]
    if protocol.dashboard_answers(study=study) is not None:  # the protocol's live figures, drawn from that judgment
        assert answers["available"] is True and answers["n_judgment_rows"] >= 1, answers
    else:  # none: the dashboard says so, naming the protocol
        assert answers["available"] is False and protocol.name in answers["reason"]
    r = _researcher_api(researcher).get(f"/api/dashboard/studies/{study.pk}/")
    assert r.status_code == 200 and r.json()["snapshot"]["totals"]["judgments"] == 1


def test_the_report_job_builds_the_protocols_report_and_every_export_holds_its_tables(protocol, researcher):
    """The report is the unit's (issue 39, item 4): the one report job runs its ``report_compute``,
    and the page's tables, each table's CSV, the JSON and the ZIP come from its ``report_tables``,
    with no NaN anywhere."""
    from metrics.reports.exports.tables import report_tables
    from metrics.reports.services.build import report_build
    from metrics.reports.services.queueing import report_create
    from tests.conftest import shows_nan

    study = study_build(protocol, researcher)
    for name in ("ann", "bob"):
        answer_all(protocol, User.objects.get(username=name), study)
    report = report_build(report_id=report_create(study=study, settings={"n_boot": 50}, enqueue=False).pk)
    assert report.status == "succeeded", report.error
    assert report.fingerprint and report.result
    tables = report_tables(report.result)
    assert tables, f"{protocol.slug}: the report has no table"
    api = _researcher_api(researcher)
    base = f"/api/studies/{study.pk}/reports/{report.pk}"
    for table in tables:
        r = api.get(f"{base}/export/tables/{table.slug}.csv")
        assert r.status_code == 200, (table.slug, r.status_code)
        text = b"".join(r.streaming_content).decode() if r.streaming else r.content.decode()
        assert not shows_nan(text), (table.slug, text[:500])
    for fmt in ("json", "zip"):
        r = api.get(f"{base}/export/{fmt}/")
        assert r.status_code == 200, (fmt, r.status_code)
    assert not shows_nan(json.dumps(report.result))


def test_qc_lists_the_judge_who_judged(protocol, researcher, client):
    study = study_build(protocol, researcher, control_counts={"identical": 1, "random": 0, "unigram": 0})
    n = answer_all(protocol, _user("ann"), study)
    assert n == _assignment(study, "ann").n_items
    rows = protocol.qc_rows(study=study)
    if rows is not None:  # the protocol's own QC table
        assert "ann" in {r["judge"] for r in rows}
    shared = {r["judge"]: r for r in dashboard.dashboard_qc(study=study)}
    assert "ann" in shared and shared["ann"]["verdict"] != "no data"
    client.force_login(researcher)
    page = client.get(reverse("judging:qc", kwargs={"study_id": study.pk}))
    assert page.status_code == 200 and "ann" in page.content.decode()
    assert _researcher_api(researcher).get(study_url(study, "qc/")).status_code == 200


# --- training and attention checks --------------------------------------------------------------


def test_training_comes_first_and_is_served_blind(protocol, researcher):
    study = study_build(protocol, researcher)
    r = _researcher_api(researcher).post(
        study_url(study, "training/items/"), adapter_of(protocol).training_item(study), format="json"
    )
    if not protocol.has_screening:
        _assert_clear_refusal(r)
        return
    assert r.status_code == 201, r.content[:300]
    ann = api_for(_user("ann"))
    _assert_clear_refusal(next_served(protocol, ann, study), "training")
    shown = ann.get(study_url(study, "training/")).json()["next"]
    assert shown["token"] and "expected" not in shown and "explanation" not in shown


def test_attention_checks_come_among_the_items_and_are_answered(protocol, researcher):
    study = study_build(protocol, researcher)
    if not protocol.has_screening:
        r = _researcher_api(researcher).patch(
            study_url(study, "screening/update/"), {"attention_count": 1}, format="json"
        )
        _assert_clear_refusal(r)
        return
    screening.screening_settings_update(study=study, changes={"attention_count": 1, "attention_policy": "warn"})
    a = _assignment(study, "ann")
    genuine = _answer_one(protocol, study)
    check = AttentionCheck.objects.get(assignment=a)
    while protocol.items_done(assignment=a) < check.after_done:
        _answer_one(protocol, study)
    ann = api_for(_user("ann"))
    if protocol.attention_page == protocol.judge_page:
        # Drawn among the items, blinded: served like any item and answered like one.
        item, r = answer_next(protocol, ann, study)
        assert item is not None and set(item) == set(genuine)
        assert r.status_code in (200, 201), r.content[:300]
    else:
        # An instruction on a page of its own: the items wait until it is answered.
        _assert_clear_refusal(next_served(protocol, ann, study), "attention")
        shown = ann.get(study_url(study, "attention/")).json()["check"]
        assert shown is not None and shown["token"] == check.token
        r = ann.post(study_url(study, "attention/"), {"token": check.token, "value": shown["value"]}, format="json")
        assert r.status_code == 200 and r.json()["passed"] is True
    check.refresh_from_db()
    assert check.answered_at is not None
    item, r = answer_next(protocol, ann, study)  # back to the items
    assert item is not None and r.status_code == 201


def test_the_instructions_count_the_items_as_the_judges_next_item_does(protocol, researcher):
    """The total the instructions give is the one every item's "n of N" gives: attention checks
    drawn among the items count in both (issue 42: ESA said 82 there and 84 on its items)."""
    study = study_build(protocol, researcher)
    if protocol.has_screening:
        screening.screening_settings_update(study=study, changes={"attention_count": 1})
        screening.attention_plan(
            assignment=_assignment(study, "ann"), settings=screening.settings_for_study(study=study)
        )
    total = next_served(protocol, api_for(_user("ann")), study).json()["total"]
    client = Client()
    client.force_login(_user("ann"))
    page = client.get(f"/judge/studies/{study.pk}/instructions/").content.decode()
    said = re.search(r"You will see ([\d,]+)", page)
    assert said is not None and int(said.group(1).replace(",", "")) == total, (protocol.slug, total)


# --- join links: timeouts, seats, bonuses -------------------------------------------------------


def test_a_participant_who_just_judged_keeps_their_seat_and_it_frees_after_their_last_judgment(protocol, researcher):
    study = study_build(protocol, researcher, judges=())
    link = participation.join_link_create(
        study=study, role="judge", created_by=researcher, items_per_participant=2, timeout_minutes=30
    )
    join(link)
    join(link)
    busy, idle = (p.user for p in Participant.objects.filter(study=study).order_by("pk"))
    Participant.objects.filter(study=study).update(consented_at=timezone.now() - timedelta(hours=1))
    before = timezone.now() - timedelta(minutes=5)
    _answer_one(protocol, study, busy.username)
    protocol.judgment_model.objects.filter(judge=busy).update(submitted_at=before)  # judged 5 minutes ago
    held = protocol.items_of_study(study=study).filter(assignment__judge=busy).count()
    assert held > 0

    assert participation.participants_release_timed_out(study=study, now=timezone.now()) == 1
    assert Participant.objects.get(user=busy).timed_out_at is None
    assert Participant.objects.get(user=idle).timed_out_at is not None
    assert protocol.items_of_study(study=study).filter(assignment__judge=busy).count() == held
    frees = join_link_seat_frees_at(link=link)
    assert frees is not None and frees >= before + timedelta(minutes=30)


def test_bonus_amounts_come_from_the_protocols_judgments(protocol, researcher):
    study = study_build(protocol, researcher, judges=())
    link = participation.join_link_create(
        study=study,
        role="judge",
        platform="prolific",
        created_by=researcher,
        items_per_participant=2,
        completion_code="C1A2B3C4",
        screen_out_code="SCREEN01",
    )
    params = prolific_params()
    join(link, params)
    person = Participant.objects.get(study=study)
    _answer_one(protocol, study, person.user.username)
    rows = participants_rows(study=study)
    assert [r["items_done"] for r in rows] == [1]
    lines = bonus_lines(rows, BonusRule(per_item=Decimal("0.10")))
    assert [(line.participant_id, line.amount) for line in lines] == [(params["PROLIFIC_PID"], Decimal("0.10"))]


# --- reset, close and reopen ---------------------------------------------------------------------


def test_reset_before_any_judgment_returns_to_draft(protocol, researcher):
    study = study_build(protocol, researcher)
    study_judging_reset(study=study)
    study.refresh_from_db()
    assert study.status == "draft"
    assert not Assignment.objects.filter(study=study).exists()
    assert not protocol.items_of_study(study=study).exists()


def test_reset_is_refused_once_a_judgment_exists_and_deletes_nothing(protocol, researcher, client):
    study = study_build(protocol, researcher)
    _answer_one(protocol, study)
    items = protocol.items_of_study(study=study).count()
    with pytest.raises(CannotOpen, match="judgments"):
        study_judging_reset(study=study)
    client.force_login(researcher)
    client.post(reverse("judging:reset", kwargs={"study_id": study.pk}))  # the page's button: refused too
    study.refresh_from_db()
    assert study.status == "open"
    assert protocol.judgments_of_study(study=study).count() == 1
    assert protocol.items_of_study(study=study).count() == items
    assert Assignment.objects.filter(study=study).count() == 2


def test_a_closed_study_refuses_answers_and_takes_them_again_when_reopened(protocol, researcher):
    study = study_build(protocol, researcher)
    adapter = adapter_of(protocol)
    ann = api_for(_user("ann"))
    body = next_served(protocol, ann, study).json()
    item = body[adapter.item_key]
    submit = {
        adapter.token_field: item["token"],
        "serve_stamp": item["serve_stamp"],
        **adapter.answer(study, body, item),
    }
    study_judging_close(study=study)
    r = ann.post(study_url(study, adapter.submit_path), {**submit, "key": new_key()}, format="json")
    _assert_clear_refusal(r, "not open")
    assert not protocol.judgments_exist(study=study)
    study_judging_reopen(study=study)
    r = ann.post(study_url(study, adapter.submit_path), {**submit, "key": new_key()}, format="json")
    assert r.status_code == 201, r.content[:300]
    assert protocol.judgments_of_study(study=study).count() == 1


# --- imports, exports, backups -------------------------------------------------------------------


def _exported(protocol, researcher, *, judges=("ann",), n: int | None = None, as_import: bool = True) -> bytes:
    """The export of a source study (the same texts) where ``judges`` answered ``n`` items each (all: None)."""
    source = study_build(protocol, researcher, judges=judges, name="Source")
    for name in judges:
        if n is None:
            answer_all(protocol, _user(name), source)
        else:
            for _ in range(n):
                _answer_one(protocol, source, name)
    data = export_bytes(protocol, researcher, source)
    return adapter_of(protocol).as_import(data) if as_import else data


def _import(protocol, researcher, study: Study, data: bytes) -> bool:
    """Import an export into ``study`` as the protocol does it: the shared door when the unit
    says it imports judgments, else the protocol's own import. False: it has neither, and the
    shared door refused the file clearly (nothing imported)."""
    adapter = adapter_of(protocol)
    if protocol.imports_judgments:
        r = _import_via_api(researcher, study, data, adapter.export_filename)
        assert r.status_code == 201, r.content[:500]
        return True
    if adapter.reimport is not None:
        adapter.reimport(study=study, data=data, filename=adapter.export_filename)
        return True
    _assert_clear_refusal(_import_via_api(researcher, study, data, adapter.export_filename), protocol.name)
    assert not protocol.judgments_exist(study=study)
    return False


def test_the_shared_import_refuses_a_protocol_that_imports_none_by_naming_it(protocol, researcher):
    """A unit that says it imports no judgments: the shared door (page, API, command) refuses the
    protocol's own export with a 400 that names the protocol, not a column list of another format."""
    data = _exported(protocol, researcher, n=1)
    target = study_build(protocol, researcher, opened=False)
    r = _import_via_api(researcher, target, data, adapter_of(protocol).export_filename)
    if protocol.imports_judgments:
        assert r.status_code == 201, r.content[:500]
        return
    _assert_clear_refusal(r, protocol.name)
    assert not protocol.judgments_exist(study=target)


def test_judgments_imported_into_a_draft_then_opening(protocol, researcher):
    data = _exported(protocol, researcher)
    target = study_build(protocol, researcher, opened=False)
    if not _import(protocol, researcher, target, data):
        return  # refused clearly: the protocol imports no judgments
    imported = _latest(protocol, target).count()
    assert imported > 0
    if not protocol.opens_onto_imported_judgments:
        with pytest.raises(CannotOpen, match=protocol.name):
            study_judging_open(study=target)
        assert _latest(protocol, target).count() == imported
        return
    study_judging_open(study=target)
    target.refresh_from_db()
    assert target.status == "open"
    assert _latest(protocol, target).count() == imported
    ann, bob = _assignment(target, "ann"), _assignment(target, "bob")
    assert protocol.items_done(assignment=ann) == imported
    assert bob.n_items > 0 and protocol.items_remaining(assignment=bob) == bob.n_items


def test_judgments_imported_into_an_open_study_mark_only_the_touched_items_done(protocol, researcher):
    data = _exported(protocol, researcher, n=1)
    target = study_build(protocol, researcher)
    ann = _assignment(target, "ann")
    if not _import(protocol, researcher, target, data):
        return  # refused clearly: the protocol imports no judgments
    assert _latest(protocol, target).count() == 1
    ann.refresh_from_db()
    assert protocol.items_done(assignment=ann) == 1
    assert protocol.items_remaining(assignment=ann) == ann.n_items - 1
    assert protocol.items_done(assignment=_assignment(target, "bob")) == 0


def test_export_then_import_gives_the_same_judgments(protocol, researcher):
    data = _exported(protocol, researcher, judges=("ann", "bob"), as_import=False)  # the export as it is
    source = Study.objects.get(name="Source")
    target = study_build(protocol, researcher, opened=False)
    if not _import(protocol, researcher, target, data):
        return  # refused clearly: the protocol imports no judgments

    def per_judge(study):
        return Counter(_latest(protocol, study).values_list("judge__username", flat=True))

    assert per_judge(target) == per_judge(source) and sum(per_judge(source).values()) > 0
    # and the study exports them again as as many records (a line each, or each criterion's line)
    assert len(export_bytes(protocol, researcher, target).splitlines()) == len(data.splitlines())


@pytest.mark.django_db(transaction=True)
def test_backup_then_restore_gives_the_same_counts(protocol, researcher, tmp_path):
    study = study_build(protocol, researcher, name="Backed up")
    _answer_one(protocol, study)

    def counts(s):
        return (
            protocol.judgments_of_study(study=s).count(),
            protocol.items_of_study(study=s).count(),
            Assignment.objects.filter(study=s).count(),
        )

    before = counts(study)
    archive = tmp_path / "study.zip"
    call_command("backup_study", study.name, "--out", str(archive))
    wipe_everything()  # an empty installation, as restoring needs
    call_command("restore_study", str(archive))
    assert counts(Study.objects.get(name="Backed up")) == before


def test_deleting_the_study_deletes_its_judgments(protocol, researcher, admin_client):
    """The admin's delete (the one door that deletes a study) takes every protocol's rows with it."""
    study = study_build(protocol, researcher)
    _answer_one(protocol, study)
    pk = study.pk
    r = admin_client.post(f"/admin/annotation/study/{pk}/delete/", {"post": "yes"})
    assert r.status_code == 302, r.content.decode()[:2000]
    assert not Study.objects.filter(pk=pk).exists()
    for unit in protocols_all():
        assert not unit.judgment_model.objects.filter(study_id=pk).exists(), unit.slug
        assert not unit.item_model.objects.filter(assignment__study_id=pk).exists(), unit.slug
    assert not Assignment.objects.filter(study_id=pk).exists()


# --- the planner ---------------------------------------------------------------------------------

PLAN = {"n_originals": 10, "n_judges": 3, "n_simulations": 20, "delta": 0.5}


def test_the_planner_pilot_gives_a_plan_or_a_clear_refusal(protocol, researcher):
    study = study_build(protocol, researcher)
    for name in ("ann", "bob"):
        answer_all(protocol, _user(name), study)
    r = _researcher_api(researcher).post(f"/api/dashboard/studies/{study.pk}/plan/", PLAN, format="json")
    if r.status_code != 202:
        _assert_clear_refusal(r, "pilot")
    try:
        planning.pilot_assumptions(study=study)
    except ValidationError as exc:
        assert "pilot" in " ".join(exc.messages)
    params = planning.plan_params_clean(PLAN, study=study)
    planning.study_plan_run(study=study, params=params)
    plan = Dashboard.objects.get(study=study).plan
    assert plan["status"] in ("done", "failed")
    if plan["status"] == "failed":
        assert "pilot" in plan["error"]
    else:
        assert plan["assumptions"]["source"] == "pilot"
