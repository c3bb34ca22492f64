"""The report works for any design (issue 24, items 3 and 4): the settings form offers the
study's own criteria and scales and its protocol's settings; figures label and bound each
criterion's axis with its own scale; a comparison report links every export it has."""

from __future__ import annotations

import re

import pytest

from annotation.judging.protocols.absolute.imports import judgments_import_file
from annotation.judging.services.design import design_update
from metrics.reports.models import Report, ReportPlot
from metrics.reports.services.build import report_build
from metrics.reports.services.queueing import report_create
from metrics.reports.services.report_settings import DEFAULT_SETTINGS

from .test_comparison_report import judged_comparison  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db

MEANING = {
    "slug": "meaning",
    "name": "Meaning",
    "help": "",
    "scale": {"type": "slider", "min": 0, "max": 100, "anchors": {"low": "None", "high": "All"}},
}
GRAMMAR = {
    "slug": "grammar",
    "name": "Grammar",
    "help": "",
    "scale": {"type": "points", "min": 0, "max": 2, "labels": ["bad", "ok", "good"]},
}
TOPIC = {
    "slug": "topic",
    "name": "Topic",
    "help": "",
    "scale": {"type": "categorical", "categories": ["same", "shifted", "other"]},
}
HEADER = "judge,original_id,system,criterion,value\n"


def _values(j: int, i: int, k: int) -> tuple[int, int, int]:
    return 30 + 12 * i + 8 * k + 5 * j, (i + k + j) % 3, (i * j + k) % 3


@pytest.fixture
def custom_study(study):
    design_update(study=study, changes={"criteria": [MEANING, GRAMMAR, TOPIC]})
    rows = [HEADER]
    for j, name in enumerate(("w1", "w2", "w3")):
        for i in range(5):
            for k, system in enumerate(("human", "machine")):
                m, g, t = _values(j, i, k)
                rows.append(
                    f"{name},s{i},{system},meaning,{m}\n{name},s{i},{system},grammar,{g}\n"
                    f"{name},s{i},{system},topic,{t}\n"
                )
    judgments_import_file(study=study, data="".join(rows).encode(), filename="j.csv")
    return study


def test_the_settings_form_offers_the_studys_own_criteria_and_builds(custom_study, researcher, client):
    client.force_login(researcher)
    page = client.get(f"/studies/{custom_study.pk}/report/").content.decode()
    form = page[page.index('class="settings-form"') :]
    assert "adequacy" not in form.lower() and "1–5" not in form and "PEM)" not in form
    assert '<option value="meaning" selected>Meaning</option>' in form
    assert "Table 2 subset: mean Meaning ≥" in form and "Table 2 subset: mean Grammar ≥" in form
    assert "Table 2 subset: mean Topic" not in form  # categories have no mean
    assert "Raw: Meaning 0–100, Grammar 0–2, Topic categories." in form
    fields = dict(re.findall(r'name="([a-z_]+)" value="([^"]*)"', form))
    fields = {k: v for k, v in fields.items() if k != "csrfmiddlewaretoken"}
    r = client.post(
        f"/studies/{custom_study.pk}/reports/create/",
        {
            "criterion": "meaning",
            "normalize": "",
            "include_controls_in_mean": "on",
            "confidence_level": "0.95",
            "significance_level": "0.05",
            "seed": "0",
            "n_boot": "50",
            "min_shared": "4",
            "subset_meaning": "50",
            **{k: v for k, v in fields.items() if k.startswith("subset_") and k != "subset_meaning"},
        },
    )
    assert r.status_code == 302, r.content.decode()[:2000]
    report = Report.objects.get(study=custom_study)
    assert report.settings["subset_min"] == {"meaning": 50} and report.settings["criterion"] == "meaning"
    report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    assert report.result["summary"]["n_judgments"] == 3 * 10 * 3


def test_a_subset_on_a_categorical_criterion_is_refused_with_the_reason(custom_study):
    with pytest.raises(Exception, match="categorical"):
        report_create(study=custom_study, settings={"subset_min": {"topic": 1}}, enqueue=False)


def test_figures_label_and_bound_each_criterion_on_its_own_scale(custom_study):
    report = report_create(
        study=custom_study, settings={"n_boot": 50, "criterion": "meaning", "include_metrics": False}, enqueue=False
    )
    report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    svgs = {p.slug: p.svg for p in ReportPlot.objects.filter(report=report)}
    assert all("1–5" not in svg for svg in svgs.values())
    assert "meaning (0–100)" in svgs["criterion-vs-overall"] and "grammar (0–2)" in svgs["criterion-vs-overall"]
    assert "mean human meaning (0–100)" in svgs["system-ranking"]
    dist = svgs["judge-distributions"]
    # each panel its own axis: grammar's three points, topic's category names, meaning's cells of ten
    assert "grammar (0–2)" in dist and "topic (categories)" in dist and "shifted" in dist and "90–100" in dist
    ticks = re.findall(r">(\d+)</text>", dist)
    assert "33" not in ticks and "42" not in ticks  # no slider value as a category tick


def test_the_comparison_report_offers_its_own_settings_and_every_export(judged_comparison, researcher, client):  # noqa: F811
    study = judged_comparison
    client.force_login(researcher)
    page = client.get(f"/studies/{study.pk}/report/").content.decode()
    form = page[page.index('class="settings-form"') :]
    assert "Table 2 subset" not in form and "Target criterion" not in form and "Controls in the human" not in form
    assert 'name="confidence_level"' in form and 'name="seed"' in form
    r = client.post(f"/studies/{study.pk}/reports/create/", {"confidence_level": "0.9", "seed": "3", "n_boot": "50"})
    assert r.status_code == 302
    report = Report.objects.get(study=study)
    assert set(report.settings) <= {"confidence_level", "seed", "n_boot"} | set(DEFAULT_SETTINGS)
    report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    page = client.get(f"/studies/{study.pk}/reports/{report.pk}/").content.decode()
    for fmt in ("html", "tex", "json", "zip"):
        url = f"/studies/{study.pk}/reports/{report.pk}/export.{fmt}"
        assert url in page, fmt
        got = client.get(url)
        assert got.status_code == 200 and len(got.content) > 100, fmt
