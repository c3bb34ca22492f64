"""``manage.py report``: a study's report built without a worker, every export written."""

from __future__ import annotations

import csv
import json
import zipfile
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from metrics.reports.models import Report

from .conftest import make_study_data, open_judging

pytestmark = pytest.mark.django_db


def _report(*args) -> str:
    out = StringIO()
    call_command("report", *[str(a) for a in args], stdout=out)
    return out.getvalue()


def test_the_report_command_builds_synchronously_and_writes_every_export(tmp_path, judged_study):
    out = _report(judged_study.name, "--out", tmp_path, "--seed", 3, "--n-boot", 60, "--normalize", "z")
    report = Report.objects.filter(study=judged_study).order_by("-pk").first()
    assert report.status == "succeeded" and report.created_by is None
    assert report.settings["normalize"] == "z" and report.result["settings"]["n_boot"] == 60
    assert f"report #{report.pk} of '{judged_study.name}': {12 * 6 * 3 * 4} scores, 3 judges, 72 items" in out
    assert "metrics correlated: bleu, ter (negated)" in out
    files = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    stem = f"report-study-report{report.pk}"
    assert files == sorted(
        [
            "report.json",
            "report.tex",
            "report.html",
            f"{stem}.zip",
            *[
                f"tables/{t}.csv"
                for t in (
                    "table1",
                    "table2",
                    "table3",
                    "agreement",
                    "agreement_pairs",
                    "judge_qc",
                    "system_ranking",
                    "metric_leaderboard",
                    "metric_meta_evaluation",
                )
            ],
            *[
                f"plots/{s}.svg"
                for s in (
                    "criterion-vs-overall",
                    "system-ranking",
                    "judge-distributions",
                    "metric-bleu",
                    "metric-ter-negated",
                )
            ],
        ]
    )
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["result"] == report.result and data["report"]["settings"]["seed"] == 3
    assert "\\toprule" in (tmp_path / "report.tex").read_text()
    rows = list(csv.DictReader((tmp_path / "tables" / "system_ranking.csv").open()))
    assert [r["system"] for r in rows] == [s["system"] for s in report.result["system_ranking"]["systems"]]
    assert zipfile.ZipFile(tmp_path / f"{stem}.zip").testzip() is None


def test_the_report_command_takes_the_subset_and_metric_options(tmp_path, judged_study):
    _report(
        judged_study.pk,
        "--out",
        tmp_path,
        "--no-metrics",
        "--subset",
        "adequacy=3.5",
        "--n-boot",
        50,
        "--no-controls-in-mean",
    )
    report = Report.objects.filter(study=judged_study).order_by("-pk").first()
    assert report.settings["subset_min"] == {"adequacy": 3.5} and report.settings["include_metrics"] is False
    assert report.result["table3"] is None and report.result["table2"]["include_controls"] is False
    assert not (tmp_path / "tables" / "table3.csv").exists()


def test_the_report_command_explains_what_is_wrong(tmp_path, researcher):
    study = open_judging(make_study_data(researcher, name="Nobody judged", n_originals=3))
    with pytest.raises(CommandError, match="no judgments yet"):
        _report(study.pk, "--out", tmp_path)
    with pytest.raises(CommandError, match="no study with the name or id 'missing'"):
        _report("missing", "--out", tmp_path)
    with pytest.raises(CommandError, match="--subset takes criterion=minimum pairs"):
        _report(study.pk, "--out", tmp_path, "--subset", "adequacy")
    assert not any(tmp_path.iterdir())


def test_the_report_command_rejects_bad_settings_with_their_field(tmp_path, judged_study):
    with pytest.raises(CommandError, match=r"confidence_level: must be in \[0.5, 0.999\]"):
        _report(judged_study.pk, "--out", tmp_path, "--confidence", "1.5")


def test_the_demo_hook_builds_nothing_and_says_how_to_get_a_report(researcher):
    from metrics.reports import demo

    study = make_study_data(researcher, name="Demo-like", n_originals=2)
    out = StringIO()
    demo.setup(study=study, accounts={"researcher": researcher}, stdout=out)
    assert f"python manage.py simulate_judges {study.pk} --judges 3" in out.getvalue()
    assert not Report.objects.filter(study=study).exists()


def test_the_admin_lists_and_shows_reports(client, django_user_model, built_report):
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "pw")
    client.force_login(admin)
    assert client.get("/admin/reports/report/").status_code == 200
    page = client.get(f"/admin/reports/report/{built_report.pk}/change/")
    assert page.status_code == 200 and built_report.fingerprint.encode() in page.content


def test_a_study_backup_carries_its_reports_and_figures(built_report):
    import io
    import zipfile

    from annotation.backup import study_backup

    archive = study_backup(study=built_report.study)
    data = json.loads(zipfile.ZipFile(io.BytesIO(archive)).read("data.json"))
    models = {row["model"] for row in data}
    assert {"reports.report", "reports.reportplot"} <= models
    stored = next(row for row in data if row["model"] == "reports.report")
    assert stored["pk"] == built_report.pk and stored["fields"]["fingerprint"] == built_report.fingerprint
