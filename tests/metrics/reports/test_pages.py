"""The Report tab: empty state, building, the tables and figures, staleness, who may see it."""

from __future__ import annotations

import json
import re

import pytest

from annotation.judging.services.exclusions import judge_exclusion_set
from metrics.reports.models import Report

from .conftest import make_study_data, open_judging, submit_as_real_judge

pytestmark = pytest.mark.django_db


def _url(study, suffix="report/"):
    return f"/studies/{study.pk}/{suffix}"


def test_the_study_tabs_link_to_the_report(client, owner, judged_study):
    client.force_login(owner)
    page = client.get(f"/studies/{judged_study.pk}/").content.decode()
    assert f'href="/studies/{judged_study.pk}/report/"' in page


def test_without_judgments_the_page_explains_the_judging_design_and_the_simulator(client, researcher):
    study = open_judging(make_study_data(researcher, name="Not judged yet"))
    client.force_login(researcher)
    r = client.get(_url(study))
    page = r.content.decode()
    assert r.status_code == 200 and "No judgments yet" in page
    assert f'href="/studies/{study.pk}/judging/design/"' in page
    assert f"python manage.py simulate_judges {study.pk} --judges 3" in page
    assert 'id="planning-table"' in page and "Build report" not in page
    assert not Report.objects.filter(study=study).exists()


def test_the_report_page_shows_tables_1_to_3_agreement_qc_ranking_leaderboard_and_figures(client, owner, built_report):
    client.force_login(owner)
    r = client.get(_url(built_report.study))
    page = r.content.decode()
    assert r.status_code == 200
    for table in (
        "table1",
        "table2",
        "table3",
        "metric_leaderboard",
        "agreement",
        "agreement_pairs",
        "judge_qc",
        "system_ranking",
    ):
        assert f'id="table-{table}"' in page, table
    assert "Table 1 — inter-judge correlation" in page and "Table 3 — metrics vs human overall" in page
    assert "up to date" in page and 'id="report-stale"' not in page
    srcs = re.findall(r'<img src="([^"]+)"', page)
    assert len(srcs) == 5 and all(s.endswith(".svg") for s in srcs)
    for run in built_report.metric_runs:
        assert run["signature"] in page
    for fmt in ("html", "tex", "json", "zip"):
        assert f"/reports/{built_report.pk}/export.{fmt}" in page
    # The numbers on the page are the report's, rounded.
    r1 = built_report.result["table1"]["pairs"][0]["sentence"]["pearson"]["statistic"]
    assert f"{r1:.3f}" in page
    assert 'style="' not in page and "<script>" not in page


def test_a_figure_is_served_as_svg_with_its_own_narrow_policy(client, owner, built_report):
    client.force_login(owner)
    r = client.get(f"/studies/{built_report.study_id}/reports/{built_report.pk}/plots/system-ranking.svg")
    assert r.status_code == 200 and r["Content-Type"].startswith("image/svg+xml")
    assert (
        r["Content-Security-Policy"].startswith("default-src 'none'")
        and "script-src" not in r["Content-Security-Policy"]
    )
    assert b"<svg" in r.content
    assert client.get(f"/studies/{built_report.study_id}/reports/{built_report.pk}/plots/nope.svg").status_code == 404
    page = client.get(_url(built_report.study))
    assert "script-src 'self'" in page["Content-Security-Policy"]


def test_building_from_the_form_queues_a_report_with_those_settings(client, owner, judged_study):
    client.force_login(owner)
    r = client.post(
        _url(judged_study, "reports/create/"),
        {
            "criterion": "overall",
            "normalize": "z",
            "include_controls_in_mean": "on",
            "confidence_level": "0.9",
            "significance_level": "0.01",
            "seed": "4",
            "n_boot": "200",
            "subset_adequacy": "3",
            "subset_fluency": "",
        },
    )
    report = Report.objects.filter(study=judged_study).order_by("-pk").first()
    assert r.status_code == 302 and r["Location"] == f"/studies/{judged_study.pk}/reports/{report.pk}/"
    assert report.status == "queued" and report.created_by == owner
    assert report.settings == {
        "criterion": "overall",
        "normalize": "z",
        "include_controls_in_mean": True,
        "include_metrics": False,
        "confidence_level": 0.9,
        "significance_level": 0.01,
        "seed": 4,
        "n_boot": 200,
        "subset_min": {"adequacy": 3},
        "min_shared": 30,
    }
    page = client.get(r["Location"]).content.decode()
    assert "is being built" in page and "<progress" in page
    poll = json.loads(re.search(r'<script id="report-poll" type="application/json">(.*?)</script>', page).group(1))
    assert poll == [{"id": report.pk, "url": f"/studies/{judged_study.pk}/reports/{report.pk}/status/"}]
    status = client.get(poll[0]["url"]).json()
    assert status == {
        "id": report.pk,
        "status": "queued",
        "phase": "",
        "percent": 0,
        "done": 0,
        "total": 5,
        "unit": "steps",
        "error": "",
    }


def test_bad_settings_are_shown_on_the_form_and_nothing_is_queued(client, owner, judged_study):
    client.force_login(owner)
    before = Report.objects.count()
    r = client.post(
        _url(judged_study, "reports/create/"),
        {"criterion": "overall", "confidence_level": "2", "significance_level": "0.05", "seed": "0", "n_boot": "5"},
    )
    page = r.content.decode()
    assert r.status_code == 200 and Report.objects.count() == before
    assert "Ensure this value is less than or equal to 0.999" in page
    assert "Ensure this value is greater than or equal to 50" in page


def test_a_new_judgment_marks_the_report_stale_and_refresh_builds_it_again(client, owner, built_report, make_user):
    client.force_login(owner)
    submit_as_real_judge(built_report.study, make_user("newcomer"))
    page = client.get(_url(built_report.study)).content.decode()
    assert 'id="report-stale"' in page and "Stale" in page and "judgments, judge exclusions" in page
    r = client.post(f"/studies/{built_report.study_id}/reports/{built_report.pk}/refresh/")
    new = Report.objects.filter(study=built_report.study).order_by("-pk").first()
    assert r.status_code == 302 and new.pk != built_report.pk and new.settings == built_report.settings
    assert new.status == "queued"


def test_an_excluded_judge_is_named_and_struck_through(client, owner, judged_study):
    from django.contrib.auth.models import User

    from .conftest import build_now

    judge_exclusion_set(
        study=judged_study, judge=User.objects.get(username="sim-judge-03"), excluded=True, decided_by=owner
    )
    report = build_now(judged_study, owner, include_metrics=False)
    client.force_login(owner)
    page = client.get(f"/studies/{judged_study.pk}/reports/{report.pk}/").content.decode()
    assert re.search(r'id="excluded-judges">sim-judge-03', page)
    assert '<tr class="row-excluded"><td>sim-judge-03</td>' in page
    assert "No metric run to correlate (left out by the settings)" in page


def test_a_failed_report_shows_why(client, owner, judged_study):
    report = Report.objects.create(
        study=judged_study,
        settings={},
        status="failed",
        error="The report could not be built: no judgments left after excluding judges.",
    )
    client.force_login(owner)
    page = client.get(f"/studies/{judged_study.pk}/reports/{report.pk}/").content.decode()
    assert f"Report #{report.pk} failed" in page and "no judgments left after excluding judges" in page


@pytest.mark.parametrize("who", ["judge", "annotator", "other_researcher"])
def test_only_the_studys_researchers_see_its_report(client, who, outsiders, built_report):
    client.force_login(outsiders[who])
    base = f"/studies/{built_report.study_id}"
    rid = built_report.pk
    for url in (
        f"{base}/report/",
        f"{base}/reports/{rid}/",
        f"{base}/reports/{rid}/status/",
        f"{base}/reports/{rid}/plots/system-ranking.svg",
        f"{base}/reports/{rid}/export.zip",
        f"{base}/reports/{rid}/tables/table1.csv",
    ):
        assert client.get(url).status_code == 403, url
    for url in (f"{base}/reports/create/", f"{base}/reports/{rid}/refresh/"):
        assert client.post(url, {"criterion": "overall"}).status_code == 403, url
    assert Report.objects.filter(study=built_report.study).count() == 1


def test_anonymous_visitors_are_sent_to_log_in(client, built_report):
    r = client.get(f"/studies/{built_report.study_id}/reports/{built_report.pk}/export.json")
    assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")
