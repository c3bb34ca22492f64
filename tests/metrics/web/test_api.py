"""The metric-run REST API: catalog, create, get, cancel, retry, scores, export, resources, permissions."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.services.membership import study_member_add
from metrics.models import MetricResource, MetricRun
from metrics.services.resources import metric_resource_create
from metrics.services.runs import metric_run_create
from metrics.services.worker import metric_run_execute

pytestmark = pytest.mark.django_db


def _base(study):
    return f"/api/studies/{study.pk}/metric-runs/"


def _finished(study, slug="bleu", **kwargs):
    run = metric_run_create(study=study, metric=slug, enqueue=False, **kwargs)
    return metric_run_execute(run_id=run.pk)


def test_the_catalog_lists_registered_metrics_with_parameters_and_defaults(api_client, researcher):
    api_client.force_authenticate(researcher)
    data = api_client.get("/api/metrics/").json()
    bleu = next(m for m in data if m["slug"] == "bleu")
    tokenize = next(p for p in bleu["params"] if p["name"] == "tokenize")
    assert tokenize["default"] == "13a" and "13a" in tokenize["choices"] and tokenize["type"] == "str"
    assert [m["slug"] for m in data] == sorted(m["slug"] for m in data)
    assert {"pinc", "chrf", "ter"} <= {m["slug"] for m in data}


def test_creating_a_run_returns_it_queued_with_its_chunks(api_client, researcher, metric_study):
    api_client.force_authenticate(researcher)
    r = api_client.post(
        _base(metric_study) + "create/",
        {"metric": "chrf", "params": {"beta": 3}, "against": "reference", "chunk_size": 8},
        format="json",
    )
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["status"] == "queued" and body["chunks_total"] == 3 and body["chunk_size"] == 8
    assert body["params"]["beta"] == 3 and body["params"]["against"] == "reference"
    assert MetricRun.objects.get(pk=body["id"]).created_by == researcher


@pytest.mark.parametrize(
    ("payload", "field", "text"),
    [
        ({"metric": "nope"}, "metric", "unknown metric"),
        ({"metric": "bleu", "params": {"max_ngram_order": "four"}}, "detail", "must be int"),
        ({"metric": "pinc", "against": "reference"}, "against", "no 'against' parameter"),
        ({"metric": "bleu", "resources": {"x": 999}}, "resources", "not yours"),
    ],
)
def test_bad_create_requests_are_400_with_the_reason(api_client, researcher, metric_study, payload, field, text):
    api_client.force_authenticate(researcher)
    r = api_client.post(_base(metric_study) + "create/", payload, format="json")
    assert r.status_code == 400
    assert text in " ".join(r.json()[field])
    assert not MetricRun.objects.exists()


def test_a_run_can_be_read_listed_cancelled_and_retried(api_client, researcher, metric_study):
    run = metric_run_create(study=metric_study, metric="bleu", enqueue=False)
    api_client.force_authenticate(researcher)
    assert [r["id"] for r in api_client.get(_base(metric_study)).json()] == [run.pk]
    assert api_client.get(f"{_base(metric_study)}{run.pk}/").json()["status"] == "queued"
    r = api_client.post(f"{_base(metric_study)}{run.pk}/cancel/")
    assert r.status_code == 200 and r.json()["status"] == "cancelled" and r.json()["cancel_requested"]
    r = api_client.post(f"{_base(metric_study)}{run.pk}/retry/")
    assert r.status_code == 200 and r.json()["status"] == "queued"
    assert api_client.post(f"{_base(metric_study)}{run.pk}/retry/").status_code == 400


def test_a_finished_run_reports_its_score_interval_and_systems(api_client, researcher, metric_study):
    run = _finished(metric_study)
    api_client.force_authenticate(researcher)
    body = api_client.get(f"{_base(metric_study)}{run.pk}/").json()
    assert body["corpus_score"] == pytest.approx(run.corpus_score)
    assert body["ci_low"] <= body["ci_high"] and body["signature"] == run.signature
    assert {s["system"] for s in body["systems"]} == {"human", "machine", "control:identical"}
    assert body["chunks_done"] == body["chunks_total"] and body["percent"] == 100


def test_scores_are_paginated_and_filterable_by_system(api_client, researcher, metric_study):
    run = _finished(metric_study)
    api_client.force_authenticate(researcher)
    page = api_client.get(f"{_base(metric_study)}{run.pk}/scores/?page_size=5").json()
    assert page["count"] == 21 and len(page["results"]) == 5 and page["next"]
    row = page["results"][0]
    assert set(row) == {"item", "original", "system", "is_control", "score", "stats"} and len(row["stats"]) == 10
    machine = api_client.get(f"{_base(metric_study)}{run.pk}/scores/?system=machine").json()
    assert machine["count"] == 7 and {r["system"] for r in machine["results"]} == {"machine"}


def test_export_gives_csv_or_json(api_client, researcher, metric_study):
    run = _finished(metric_study)
    api_client.force_authenticate(researcher)
    r = api_client.get(f"{_base(metric_study)}{run.pk}/export/")
    assert r["Content-Type"].startswith("text/csv")
    assert len(list(csv.DictReader(io.StringIO(r.content.decode())))) == 21
    r = api_client.get(f"{_base(metric_study)}{run.pk}/export/?export_format=json")
    assert r.json()["run"]["id"] == run.pk and len(r.json()["scores"]) == 21


def test_a_resource_uploaded_through_the_api_can_be_used_by_a_run(api_client, researcher, metric_study):
    api_client.force_authenticate(researcher)
    upload = SimpleUploadedFile("table.tsv", b"english\tpivot\tcount\nthe\tel\t3\ncat\tgato\t2\n")
    r = api_client.post(
        f"/api/studies/{metric_study.pk}/metric-resources/upload/",
        {"file": upload, "kind": "phrase_table", "name": "toy"},
        format="multipart",
    )
    assert r.status_code == 201, r.content
    res_id = r.json()["id"]
    assert [x["id"] for x in api_client.get("/api/metric-resources/").json()] == [res_id]
    r = api_client.post(
        _base(metric_study) + "create/", {"metric": "pivot-f1", "resources": {"phrase_table": res_id}}, format="json"
    )
    assert r.status_code == 201, r.content
    run = metric_run_execute(run_id=r.json()["id"])
    assert run.status == "succeeded", run.error
    assert f"res:phrase_table={MetricResource.objects.get(pk=res_id).sha256[:12]}" in run.signature


def test_another_researchers_resource_cannot_be_used(api_client, researcher, make_user, metric_study):
    from django.core.files.base import ContentFile

    stranger = make_user("stranger", researcher=True)
    theirs = metric_resource_create(
        name="private", kind="other", owner=stranger, file=ContentFile(b"x\n", name="x.txt")
    )
    api_client.force_authenticate(researcher)
    assert api_client.get("/api/metric-resources/").json() == []
    r = api_client.post(
        _base(metric_study) + "create/", {"metric": "pivot-f1", "resources": {"phrase_table": theirs.pk}}, format="json"
    )
    assert r.status_code == 400


@pytest.mark.parametrize("role", ["judge", "annotator", None])
def test_judges_annotators_and_other_researchers_get_403(api_client, make_user, metric_study, role):
    run = _finished(metric_study)
    other = make_user("nosy", researcher=True)
    if role:
        study_member_add(study=metric_study, user=other, role=role)
    api_client.force_authenticate(other)
    for url in (
        _base(metric_study),
        f"{_base(metric_study)}{run.pk}/",
        f"{_base(metric_study)}{run.pk}/scores/",
        f"{_base(metric_study)}{run.pk}/export/",
    ):
        assert api_client.get(url).status_code == 403, url
    assert api_client.post(_base(metric_study) + "create/", {"metric": "bleu"}, format="json").status_code == 403
    assert api_client.post(f"{_base(metric_study)}{run.pk}/cancel/").status_code == 403
    assert (
        api_client.post(f"/api/studies/{metric_study.pk}/pem-models/train/", {"name": "x"}, format="json").status_code
        == 403
    )
    assert MetricRun.objects.count() == 1


def test_anonymous_clients_are_refused(api_client, metric_study):
    assert api_client.get(_base(metric_study)).status_code in (401, 403)
    assert api_client.get("/api/metrics/").status_code in (401, 403)


def test_the_openapi_schema_documents_the_metrics_api_under_unique_component_names(researcher):
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    names = set(schema["components"]["schemas"])
    assert {"MetricRunOutput", "MetricScoreOutput", "MetricInfo", "PemModelOutput"} <= names
    assert "/api/studies/{study_id}/metric-runs/create/" in schema["paths"]
