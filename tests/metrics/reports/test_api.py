"""The report API: create, list, detail, every export, and who may use it."""

from __future__ import annotations

import csv
import io
import zipfile

import pytest

from metrics.reports.models import Report

from .conftest import make_study_data, open_judging, submit_as_real_judge

pytestmark = pytest.mark.django_db


def _api(study, suffix=""):
    return f"/api/studies/{study.pk}/reports/{suffix}"


def test_creating_a_report_through_the_api_queues_it_with_defaults_filled_in(api_client, owner, judged_study):
    api_client.force_authenticate(owner)
    r = api_client.post(_api(judged_study, "create/"), {"normalize": "z", "n_boot": 100}, format="json")
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["status"] == "queued" and body["steps_total"] == 5 and body["exports"] is None
    assert body["settings"] == {
        "criterion": "overall",
        "normalize": "z",
        "include_controls_in_mean": True,
        "include_metrics": True,
        "confidence_level": 0.95,
        "significance_level": 0.05,
        "seed": 0,
        "n_boot": 100,
        "subset_min": {"adequacy": 4.0, "fluency": 4.0},
    }
    assert Report.objects.get(pk=body["id"]).created_by == owner
    again = api_client.post(_api(judged_study, "create/"), {"normalize": "z", "n_boot": 100}, format="json")
    assert again.json()["id"] == body["id"]  # the same settings while queued: the same report


def test_bad_settings_and_a_study_without_judgments_get_400_with_the_reason(api_client, researcher):
    study = open_judging(make_study_data(researcher, name="Empty for the API"))
    api_client.force_authenticate(researcher)
    r = api_client.post(_api(study, "create/"), {}, format="json")
    assert r.status_code == 400 and "no judgments yet" in r.json()["detail"][0]
    r = api_client.post(
        _api(study, "create/"), {"n_boot": 10, "confidence_level": 1.5, "criterion": "x"}, format="json"
    )
    assert r.status_code == 400 and {"criterion"} <= set(r.json())
    r = api_client.post(_api(study, "create/"), {"n_boot": 10, "confidence_level": 1.5}, format="json")
    assert r.status_code == 400 and {"n_boot", "confidence_level"} <= set(r.json())


def test_list_and_detail_say_whether_a_report_is_stale_and_link_every_export(
    api_client, owner, built_report, make_user
):
    api_client.force_authenticate(owner)
    listed = api_client.get(_api(built_report.study)).json()
    assert [r["id"] for r in listed] == [built_report.pk]
    body = api_client.get(_api(built_report.study, f"{built_report.pk}/")).json()
    assert body["status"] == "succeeded" and body["percent"] == 100 and body["stale"] is False
    assert body["judgments_fingerprint"] == built_report.fingerprint
    assert [m["name"] for m in body["metric_runs"]] == ["bleu", "ter (negated)"]
    assert all(m["signature"] for m in body["metric_runs"])
    assert [p["slug"] for p in body["plots"]][:3] == ["criterion-vs-overall", "system-ranking", "judge-distributions"]
    assert set(body["exports"]["tables"]) == {
        "table1",
        "table2",
        "table3",
        "agreement",
        "agreement_pairs",
        "judge_qc",
        "system_ranking",
        "metric_leaderboard",
        "metric_meta_evaluation",
    }
    submit_as_real_judge(built_report.study, make_user("latecomer"))
    body = api_client.get(_api(built_report.study, f"{built_report.pk}/")).json()
    assert body["stale"] is True and body["stale_reasons"]


def test_every_export_endpoint_returns_its_format(api_client, owner, built_report):
    api_client.force_authenticate(owner)
    links = api_client.get(_api(built_report.study, f"{built_report.pk}/")).json()["exports"]
    data = api_client.get(links["json"]).json()
    assert data["result"] == built_report.result and data["report"]["stale"] == {
        "stale": False,
        "judgments_changed": False,
        "metrics_changed": False,
    }
    tex = api_client.get(links["latex"])
    assert tex["Content-Type"].startswith("application/x-tex") and b"\\toprule" in tex.content
    html = api_client.get(links["html"])
    assert html["Content-Type"].startswith("text/html") and b"data:image/svg+xml;base64," in html.content
    zipped = api_client.get(links["zip"])
    assert zipfile.ZipFile(io.BytesIO(zipped.content)).testzip() is None
    for slug, url in links["tables"].items():
        r = api_client.get(url)
        assert r.status_code == 200 and r["Content-Type"].startswith("text/csv"), slug
        assert len(list(csv.reader(io.StringIO(r.content.decode())))) > 1
    plot = api_client.get(
        f"/api/studies/{built_report.study_id}/reports/{built_report.pk}/plots/judge-distributions.svg"
    )
    assert plot.status_code == 200 and plot["Content-Type"].startswith("image/svg+xml")
    assert api_client.get(links["tables"]["table1"].replace("table1", "table9")).status_code == 404


def test_exports_of_an_unfinished_report_answer_409(api_client, owner, judged_study):
    api_client.force_authenticate(owner)
    queued = Report.objects.create(study=judged_study, settings={})
    for suffix in (
        "export/json/",
        "export/latex/",
        "export/html/",
        "export/zip/",
        "export/tables/table1.csv",
        "plots/system-ranking.svg",
    ):
        r = api_client.get(_api(judged_study, f"{queued.pk}/{suffix}"))
        assert r.status_code == 409, suffix


def test_refresh_through_the_api_builds_with_the_same_settings(api_client, owner, built_report):
    api_client.force_authenticate(owner)
    r = api_client.post(_api(built_report.study, f"{built_report.pk}/refresh/"))
    assert r.status_code == 201 and r.json()["id"] != built_report.pk
    assert Report.objects.get(pk=r.json()["id"]).settings == built_report.settings


@pytest.mark.parametrize("who", ["judge", "annotator", "other_researcher"])
def test_the_api_refuses_everyone_but_the_studys_researchers(api_client, who, outsiders, built_report):
    api_client.force_authenticate(outsiders[who])
    rid = built_report.pk
    for suffix in (
        "",
        f"{rid}/",
        f"{rid}/export/json/",
        f"{rid}/export/latex/",
        f"{rid}/export/html/",
        f"{rid}/export/zip/",
        f"{rid}/export/tables/table1.csv",
        f"{rid}/plots/system-ranking.svg",
    ):
        assert api_client.get(_api(built_report.study, suffix)).status_code == 403, suffix
    assert api_client.post(_api(built_report.study, "create/"), {}, format="json").status_code == 403
    assert api_client.post(_api(built_report.study, f"{rid}/refresh/")).status_code == 403
    assert Report.objects.filter(study=built_report.study).count() == 1


def test_anonymous_api_calls_are_refused(api_client, built_report):
    assert api_client.get(_api(built_report.study)).status_code in (401, 403)


def test_the_openapi_schema_documents_the_report_endpoints_without_warnings():
    from django.core import checks
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    paths = [p for p in schema["paths"] if "/reports/" in p]
    assert "/api/studies/{study_id}/reports/create/" in paths
    assert "/api/studies/{study_id}/reports/{report_id}/export/tables/{table}.csv" in paths
    assert {"ReportOutput", "ReportCreateInput", "ReportMetricRun"} <= set(schema["components"]["schemas"])
    # manage.py check --deploy runs drf-spectacular's schema check; none of its messages may concern reports.
    messages = [m for m in checks.run_checks(include_deployment_checks=True) if m.id.startswith("drf_spectacular")]
    assert not [m.msg for m in messages if "Report" in m.msg or "Criterion" in m.msg or "report" in m.msg]
