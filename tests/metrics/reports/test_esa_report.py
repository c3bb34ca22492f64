"""The report of an error span annotation study: scores and errors per system, ranking, span
agreement, control checks and proposal outcomes, checked against the stored judgments; the
report page and its exports; thin data say "not enough data", never NaN."""

from __future__ import annotations

import json

import pytest

from annotation.judging.models import Assignment
from annotation.judging.protocols.esa import services as esa
from annotation.judging.protocols.esa.models import EsaItem
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from metrics.reports.exports.tables import report_tables
from metrics.reports.services.build import report_build
from metrics.reports.services.queueing import report_create
from tests.annotation.judging.conftest import new_key
from tests.conftest import shows_nan
from tests.factories import study_with_data

pytestmark = pytest.mark.django_db

#: The judges' taste: a is better than b (fewer errors, higher score).
SCORE = {"a": 90, "b": 40}


def _annotate(study, judge, *, own_span=True):
    assignment = Assignment.objects.get(study=study, judge=judge)
    while (entry := esa.esa_item_next_for_judge(assignment=assignment)) is not None:
        item = EsaItem.objects.select_related("candidate__system").get(token=entry.token)
        name = item.candidate.system.name
        spans = [dict(s, proposed=True) for s in item.proposed[:1]]  # keep the first proposal, drop the others
        score = SCORE.get(name, 5 if "random" in name else 95)
        if name == "b" and own_span:
            first = entry.candidate.split()[0]
            if not any(s["side"] == "candidate" and s["start"] == 0 for s in spans):
                spans.append({"side": "candidate", "start": 0, "end": len(first), "severity": "major"})
        esa.esa_submit(
            study=study,
            judge=judge,
            token=entry.token,
            key=new_key(),
            spans=spans,
            score=score,
            serve_stamp=entry.serve_stamp,
        )


@pytest.fixture
def judged_esa(researcher, make_user):
    from annotation.enums import Role
    from annotation.services.membership import study_member_add

    study = study_with_data(owner=researcher, n_originals=4, systems=("a", "b"), name="ESA report")
    judges = [make_user(n) for n in ("ann", "bob")]
    for u in judges:
        study_member_add(study=study, user=u, role=Role.JUDGE)
    design_update(
        study=study,
        changes={
            "protocol": "esa",
            "seed": 3,
            "esa_prefill": "aligner",
            "control_counts": {"identical": 1, "random": 1, "unigram": 0},
        },
    )
    study_judging_open(study=study)
    for u in judges:
        _annotate(study, u)
    return study


def test_the_report_holds_every_figure_and_ranks_the_better_system_first(judged_esa, researcher):
    report = report_create(study=judged_esa, created_by=researcher, enqueue=False)
    report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    r = report.result
    assert r["protocol"] == "esa" and r["weights"] == {"minor": 1.0, "major": 5.0}
    assert r["summary"]["n_judgments"] == 2 * 4 * 2 and r["summary"]["n_control_judgments"] == 2 * 4 * 2
    systems = {s["system"]: s for s in r["systems"]}
    assert systems["a"]["esa"] == 90 and systems["b"]["esa"] == 40
    assert systems["b"]["mqm"] < systems["a"]["mqm"] <= 0
    assert [x["system"] for x in r["ranking"]] == ["a", "b"]
    errors = {e["system"]: e for e in r["errors"]}
    assert errors["b"]["major"] == 2 * 4
    assert len(r["agreement"]) == 1 and r["agreement"][0]["char_f1"] == 1.0  # both judges marked alike
    assert len(r["controls"]) == 2 * 8 and all(c["passed"] for c in r["controls"])
    assert r["proposals"]["proposed"] > 0 and r["proposals"]["accepted"] > 0
    assert "NaN" not in json.dumps(r)
    slugs = [t.slug for t in report_tables(r)]
    assert slugs[:5] == ["esa_systems", "esa_errors", "esa_ranking", "esa_agreement", "esa_controls"]
    assert "esa_proposals" in slugs


def test_thin_data_say_not_enough_data_and_never_nan(researcher, make_user, client):
    from annotation.enums import Role
    from annotation.services.membership import study_member_add

    study = study_with_data(owner=researcher, n_originals=1, systems=("a",), name="Thin ESA")
    ann = make_user("ann")
    study_member_add(study=study, user=ann, role=Role.JUDGE)
    design_update(
        study=study, changes={"protocol": "esa", "control_counts": {"identical": 0, "random": 0, "unigram": 0}}
    )
    study_judging_open(study=study)
    _annotate(study, ann)
    report = report_create(study=study, created_by=researcher, enqueue=False)
    report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    assert report.result["ranking"] == [] and report.result["ranking_note"] == "not enough data"
    client.force_login(researcher)
    html = client.get(f"/studies/{study.pk}/report/").content.decode()
    assert "not enough data" in html.lower()
    assert not shows_nan(html)


def test_the_report_page_shows_the_esa_sections_and_its_exports(judged_esa, researcher, client):
    report = report_create(study=judged_esa, created_by=researcher, enqueue=False)
    report_build(report_id=report.pk)
    client.force_login(researcher)
    html = client.get(f"/studies/{judged_esa.pk}/report/").content.decode()
    for title in (
        "ESA and MQM-weighted scores per system",
        "Errors per system by severity",
        "System ranking by ESA",
        "Span agreement between judges",
        "Control checks",
        "Pre-filled spans",
        "minor = 1",
        "Every span (JSON Lines)",
    ):
        assert title in html, title
    for fmt in ("json", "tex", "html", "zip"):
        assert client.get(f"/studies/{judged_esa.pk}/reports/{report.pk}/export.{fmt}").status_code == 200, fmt


def test_the_dashboard_ranks_by_esa_score_as_the_report_does(judged_esa, researcher):
    from metrics.dashboard.services import snapshot

    dash = snapshot.dashboard_refresh(study=judged_esa)
    report = report_create(study=judged_esa, created_by=researcher, enqueue=False)
    report = report_build(report_id=report.pk)
    answers = dash.snapshot["answers"]
    assert answers["available"] and answers["fingerprint"] == report.fingerprint
    assert [
        (r["system"], r["mean"], r["ci_low"], r["ci_high"], r["cluster"]) for r in answers["ranking"]["systems"]
    ] == [(r["system"], r["mean"], r["ci_low"], r["ci_high"], r["cluster"]) for r in report.result["ranking"]]
    assert answers["ranking"]["measure"] == "ESA score (0–100)" and answers["agreement"] == []


def test_the_dashboard_of_an_esa_study_without_judgments_says_so(researcher):
    from metrics.dashboard.services import snapshot

    study = study_with_data(owner=researcher, n_originals=2, systems=("a", "b"), name="Empty ESA")
    design_update(study=study, changes={"protocol": "esa"})
    dash = snapshot.dashboard_refresh(study=study)
    assert dash.snapshot["answers"] == {"available": False, "reason": "No error span judgments yet."}
