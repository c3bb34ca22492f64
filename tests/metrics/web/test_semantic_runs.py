"""Semantic metrics in the product: the CLI listing, the catalog API, the Metrics tab and metric runs.

Without the optional extra they must be listed as unavailable with the install command
(simulated here by hiding the packages); with it they run like any other metric.
"""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from annotation.models import Candidate
from metrics.core.registry import create_metric
from metrics.core.semantic import metrics as semantic_metrics
from metrics.core.semantic.models import missing_requirements
from metrics.models import MetricRunChunk, MetricScore
from metrics.services.runs import metric_run_create
from metrics.services.worker import metric_run_execute

pytestmark = pytest.mark.django_db

SEMANTIC = ("bertscore", "embed-cosine", "parascore")
needs_semantic = pytest.mark.skipif(
    bool(missing_requirements()),
    reason="needs the optional semantic extra (torch, sentence-transformers, bert-score): make install-semantic",
)


@pytest.fixture
def without_torch(monkeypatch):
    # Patched where the metrics look it up (the package only re-exports it).
    monkeypatch.setattr(
        semantic_metrics, "missing_requirements", lambda: ["torch", "sentence_transformers", "bert_score"]
    )


def _cli(*args) -> str:
    out = StringIO()
    call_command("metrics", *args, stdout=out)
    return out.getvalue()


def test_the_metrics_command_lists_missing_semantic_metrics_as_unavailable_with_the_install_command(without_torch):
    text = _cli()
    for slug in SEMANTIC:
        block = ("\n" + text).split(f"\n{slug}: ", 1)[1].split("\n", 2)[:2]
        assert block[1].strip().startswith("UNAVAILABLE here:") and "make install-semantic" in block[1]
    entries = {e["slug"]: e for e in json.loads(_cli("--json"))}
    assert all("make install-semantic" in entries[s]["unavailable"] for s in SEMANTIC)
    assert entries["bleu"]["unavailable"] is None and entries["chrf"]["unavailable"] is None


def test_the_catalog_api_says_which_metrics_are_unavailable_and_why(api_client, researcher, without_torch):
    api_client.force_authenticate(researcher)
    data = {m["slug"]: m for m in api_client.get("/api/metrics/").json()}
    assert all("make install-semantic" in data[s]["unavailable"] for s in SEMANTIC)
    assert data["pinc"]["unavailable"] is None
    assert [p["name"] for p in data["parascore"]["params"]][:3] == ["reference_free", "omega", "gamma"]


def test_the_metrics_tab_shows_unavailable_metrics_with_the_install_command(
    client, researcher, metric_study, without_torch
):
    client.force_login(researcher)
    html = client.get(f"/studies/{metric_study.pk}/metrics/").content.decode()
    assert "<strong>bertscore</strong> — needs torch" in html
    # (llm-judge may be unavailable too, for its own reason: no endpoint set, no in-process model.)
    assert html.count('class="error metric-unavailable"') >= 3 and "make install-semantic" in html


def test_the_metrics_tab_never_preselects_an_unavailable_metric(client, researcher, metric_study, without_torch):
    """Without the extra the first option was 'bertscore — unavailable…', chosen by default (issue 28)."""
    import re

    client.force_login(researcher)
    html = client.get(f"/studies/{metric_study.pk}/metrics/").content.decode()
    select = re.search(r'<select name="metric"[^>]*>(.*?)</select>', html, re.S).group(1)
    options = re.findall(r"<option ([^>]*)>([^<]*)</option>", select)
    first_value = re.search(r'value="([^"]+)"', options[0][0]).group(1)
    assert first_value not in SEMANTIC
    for attrs, _label in options:
        value = re.search(r'value="([^"]+)"', attrs).group(1)
        assert value not in SEMANTIC or "disabled" in attrs, (value, attrs)
        assert not ("disabled" in attrs and "selected" in attrs), (value, attrs)
    assert "bertscore (unavailable)" in select


def test_starting_an_unavailable_metric_is_a_400_naming_the_install_command(
    api_client, researcher, metric_study, without_torch
):
    api_client.force_authenticate(researcher)
    r = api_client.post(
        f"/api/studies/{metric_study.pk}/metric-runs/create/", {"metric": "embed-cosine"}, format="json"
    )
    assert r.status_code == 400 and "make install-semantic" in r.content.decode()


def test_starting_an_unavailable_metric_on_the_tab_shows_the_reason(client, researcher, metric_study, without_torch):
    client.force_login(researcher)
    r = client.post(f"/studies/{metric_study.pk}/metrics/", {"metric": "parascore", "against": "original"})
    assert r.status_code == 200 and "make install-semantic" in r.content.decode()


@needs_semantic
def test_a_semantic_run_scores_every_candidate_in_one_large_chunk_like_the_metric_itself(metric_study):
    run = metric_run_create(study=metric_study, metric="embed-cosine", params={"device": "cpu"}, enqueue=False)
    assert run.chunk_size == 2000 and run.progress_total == 1
    run = metric_run_execute(run_id=run.pk)
    assert run.status == "succeeded", run.error
    cands = list(Candidate.objects.filter(original__study=metric_study).select_related("original").order_by("pk"))
    stored = dict(MetricScore.objects.filter(run=run).values_list("candidate_id", "score"))
    expected = create_metric("embed-cosine", {"device": "cpu"}).score(
        [c.original.text for c in cands], [c.text for c in cands]
    )
    np.testing.assert_allclose([stored[c.pk] for c in cands], expected.scores, atol=1e-6)
    assert "model:sentence-transformers/all-MiniLM-L6-v2" in run.signature


@needs_semantic
def test_bertscore_with_idf_is_never_split_into_chunks(metric_study):
    run = metric_run_create(study=metric_study, metric="bertscore", params={"idf": "true"}, chunk_size=4, enqueue=False)
    assert run.progress_total == 1 == MetricRunChunk.objects.filter(run=run).count()
    assert run.chunk_size == run.n == 21


@needs_semantic
def test_parascore_against_references_runs_through_the_api(api_client, researcher, metric_study):
    api_client.force_authenticate(researcher)
    r = api_client.post(
        f"/api/studies/{metric_study.pk}/metric-runs/create/",
        {"metric": "parascore", "params": {"device": "cpu"}},
        format="json",
    )
    assert r.status_code == 201, r.content
    run = metric_run_execute(run_id=r.json()["id"])
    assert run.status == "succeeded", run.error
    assert 0.5 < run.corpus_score < 1.05


def _pairs(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text(
        "original\tcandidate\nThe cat sat on the mat.\tA cat was sitting on the mat.\n"
        "He went home early.\tHe left for home early.\n",
        encoding="utf-8",
    )
    return str(path)


def test_scoring_with_an_unavailable_metric_is_a_one_line_error_naming_the_install_command(tmp_path, without_torch):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="make install-semantic"):
        call_command("score", "--metric", "bertscore", "--input", _pairs(tmp_path), "--json", stdout=StringIO())


@needs_semantic
def test_the_score_command_runs_each_semantic_metric(tmp_path):
    for slug, extra in (
        ("embed-cosine", []),
        ("bertscore", ["--param", "idf=true"]),
        ("parascore", ["--param", "reference_free=true"]),
    ):
        out = StringIO()
        call_command("score", "--metric", slug, *extra, "--input", _pairs(tmp_path), "--json", stdout=out)
        body = json.loads(out.getvalue())
        assert body["metric"] == slug and len(body["scores"]) == 2 and all(0.5 < s < 1.05 for s in body["scores"])
