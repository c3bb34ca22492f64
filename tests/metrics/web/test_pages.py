"""The researcher's metrics pages: list, start, cancel, retry, details, export, permissions."""

from __future__ import annotations

import csv
import io
import json

import pytest

from annotation.services.membership import study_member_add
from metrics.models import MetricRun, MetricScore
from metrics.services.runs import metric_run_create
from metrics.services.worker import metric_run_execute

pytestmark = pytest.mark.django_db


def _url(study, suffix=""):
    return f"/studies/{study.pk}/metrics/{suffix}"


def _finished_run(study, slug="bleu", **kwargs):
    run = metric_run_create(study=study, metric=slug, enqueue=False, **kwargs)
    return metric_run_execute(run_id=run.pk)


def test_the_metrics_tab_lists_runs_with_score_progress_and_signature(client, researcher, metric_study):
    done = _finished_run(metric_study)
    queued = metric_run_create(study=metric_study, metric="pinc", enqueue=False)
    client.force_login(researcher)
    r = client.get(_url(metric_study))
    assert r.status_code == 200
    html = r.content.decode()
    assert f'href="/studies/{metric_study.pk}/metrics/"' in html  # the study tab exists
    assert f'id="run-{done.pk}"' in html and f"{done.corpus_score:.4f}" in html
    assert done.signature in html
    assert f'<progress max="100" value="0" aria-label="Progress of run {queued.pk}"' in html
    assert 'id="metric-poll"' in html and f"/metrics/runs/{queued.pk}/status/" in html
    assert "style=" not in html and "<script>" not in html  # CSP: no inline styles or scripts


def test_the_start_form_shows_every_metric_with_its_parameter_defaults(client, researcher, metric_study):
    client.force_login(researcher)
    html = client.get(_url(metric_study)).content.decode()
    assert 'data-metric="bleu"' in html and 'data-metric="pinc"' in html
    assert 'name="p__bleu__tokenize"' in html and "(default: 13a)" in html
    assert 'name="p__bleu__against"' not in html  # against is chosen once, for the run


def test_posting_the_start_form_queues_a_run_with_those_parameters(client, researcher, metric_study):
    client.force_login(researcher)
    r = client.post(
        _url(metric_study),
        {
            "metric": "bleu",
            "against": "reference",
            "p__bleu__lowercase": "true",
            "p__bleu__tokenize": "13a",
            "p__bleu__smooth_value": "",
            "p__pinc__max_n": "9",
        },
    )
    assert r.status_code == 302
    run = MetricRun.objects.get()
    assert run.status == "queued" and run.created_by == researcher
    assert run.params["lowercase"] is True and run.params["against"] == "reference" and run.against == "reference"


def test_a_bad_parameter_is_shown_on_the_form_and_nothing_is_queued(client, researcher, metric_study):
    client.force_login(researcher)
    r = client.post(_url(metric_study), {"metric": "bleu", "against": "original", "p__bleu__max_ngram_order": "x"})
    assert r.status_code == 200
    assert "parameter &#x27;max_ngram_order&#x27; must be int" in r.content.decode()
    assert not MetricRun.objects.exists()


def test_cancel_and_retry_buttons_change_the_run(client, researcher, metric_study):
    run = metric_run_create(study=metric_study, metric="bleu", enqueue=False)
    client.force_login(researcher)
    assert client.post(_url(metric_study, f"runs/{run.pk}/cancel/")).status_code == 302
    run.refresh_from_db()
    assert run.status == "cancelled"
    assert "Retry" in client.get(_url(metric_study)).content.decode()
    client.post(_url(metric_study, f"runs/{run.pk}/retry/"))
    run.refresh_from_db()
    assert run.status == "queued" and not run.cancel_requested


def test_the_status_endpoint_reports_chunks_done_and_the_score(client, researcher, metric_study):
    run = _finished_run(metric_study, chunk_size=10)
    client.force_login(researcher)
    data = client.get(_url(metric_study, f"runs/{run.pk}/status/")).json()
    assert data["status"] == "succeeded" and data["percent"] == 100
    assert (data["done"], data["total"]) == (3, 3) and data["corpus_score"] == pytest.approx(run.corpus_score)


def test_the_run_page_shows_per_system_means_and_paginated_candidate_scores(client, researcher, metric_study):
    run = _finished_run(metric_study)
    client.force_login(researcher)
    html = client.get(_url(metric_study, f"runs/{run.pk}/")).content.decode()
    assert 'id="system-scores"' in html and "control:identical" in html and "100.0000" in html
    assert "page 1 of 1 (21 scores)" in html
    html = client.get(_url(metric_study, f"runs/{run.pk}/?system=machine")).content.decode()
    assert "page 1 of 1 (7 scores)" in html


def test_the_run_page_shows_why_a_run_failed(client, researcher):
    from .conftest import make_study

    study = make_study(researcher, missing_reference_at=0, with_control=False, name="No refs")
    run = _finished_run(study, against="reference")
    client.force_login(researcher)
    html = client.get(_url(study, f"runs/{run.pk}/")).content.decode()
    assert 'id="run-error"' in html and "original &#x27;v0&#x27;" in html
    assert "original &#x27;v0&#x27;" in client.get(_url(study)).content.decode()


def test_csv_export_neutralises_formula_cells(client, researcher, metric_study):
    from annotation.models import Candidate

    cand = Candidate.objects.filter(original__study=metric_study, system__name="human").first()
    cand.text = '=HYPERLINK("http://evil")'
    cand.save()
    run = _finished_run(metric_study)
    client.force_login(researcher)
    r = client.get(_url(metric_study, f"runs/{run.pk}/export.csv"))
    assert r["Content-Type"].startswith("text/csv") and "attachment" in r["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(r.content.decode())))
    assert len(rows) == 21
    evil = next(row for row in rows if row["item"] == str(cand.pk))
    assert evil["candidate"] == '\'=HYPERLINK("http://evil")'
    assert float(evil["score"]) == pytest.approx(MetricScore.objects.get(run=run, candidate=cand).score)
    assert all(not row[k].startswith(("=", "+", "-", "@")) for row in rows for k in ("original", "candidate", "system"))


def test_json_export_carries_the_run_and_every_score(client, researcher, metric_study):
    run = _finished_run(metric_study)
    client.force_login(researcher)
    data = json.loads(client.get(_url(metric_study, f"runs/{run.pk}/export.json")).content)
    assert data["run"]["signature"] == run.signature and data["run"]["corpus_score"] == pytest.approx(run.corpus_score)
    assert len(data["scores"]) == 21 and {"item", "system", "score", "stats"} <= set(data["scores"][0])


@pytest.mark.parametrize("role", ["judge", "annotator", None])
def test_only_the_studys_researchers_may_open_its_metric_pages(client, make_user, metric_study, role):
    run = _finished_run(metric_study)
    other = make_user("outsider", researcher=True)
    if role:
        study_member_add(study=metric_study, user=other, role=role)
    client.force_login(other)
    for path in ("", f"runs/{run.pk}/", f"runs/{run.pk}/status/", f"runs/{run.pk}/export.csv"):
        assert client.get(_url(metric_study, path)).status_code == 403
    assert client.post(_url(metric_study, f"runs/{run.pk}/cancel/")).status_code == 403
    assert client.post(_url(metric_study), {"metric": "bleu", "against": "original"}).status_code == 403
    assert MetricRun.objects.count() == 1


def test_anonymous_visitors_are_sent_to_log_in(client, metric_study):
    r = client.get(_url(metric_study))
    assert r.status_code == 302 and "/accounts/login/" in r["Location"]


def test_uploading_a_resource_offers_it_in_the_start_form(client, researcher, metric_study):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(researcher)
    upload = SimpleUploadedFile("table.tsv", b"english\tpivot\tcount\nthe\tel\t3\n")
    r = client.post(_url(metric_study, "resources/"), {"name": "toy table", "kind": "phrase_table", "file": upload})
    assert r.status_code == 302
    html = client.get(_url(metric_study)).content.decode()
    assert "toy table" in html and 'id="metric-resources"' in html
