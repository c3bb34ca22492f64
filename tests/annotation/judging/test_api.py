"""Judging API: the judge's loop, validation, idempotency, and the researcher's endpoints."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import User

from annotation.judging.protocols.absolute.models import Judgment
from annotation.judging.selectors.exclusions import judges_excluded

from .conftest import api_login, api_next, api_submit, rate_all_via_service, scores

pytestmark = pytest.mark.django_db


@pytest.fixture
def ann_api(api_client, opened_study):
    return api_login(api_client, User.objects.get(username="ann"))


def test_judge_loop_next_submit_next(ann_api, opened_study):
    r = api_next(ann_api, opened_study)
    assert r.status_code == 200
    body = r.json()
    assert body["finished"] is False and body["done"] == 0 and body["total"] == 25
    item = body["item"]
    assert set(item) == {
        "token",
        "position",
        "total",
        "done",
        "original",
        "paraphrase",
        "scores",
        "revision",
        "previous",
        "serve_stamp",
        "context_shown",
        "context_before",
        "context_after",
    }
    assert item["context_shown"] is False and item["context_before"] == item["context_after"] == []
    assert item["position"] == 1 and item["previous"] is None and item["scores"] is None
    r = api_submit(ann_api, opened_study, item, values=scores(4, 4, 2, 3), active_seconds=3.5)
    assert r.status_code == 201, r.json()
    out = r.json()
    assert out["created"] is True and out["revision"] == 1 and out["done"] == 1 and out["scores"]["overall"] == 3
    nxt = api_next(ann_api, opened_study).json()["item"]
    assert nxt["position"] == 2 and nxt["previous"] == item["token"]


def test_the_same_key_twice_gives_one_judgment_and_200(ann_api, opened_study):
    item = api_next(ann_api, opened_study).json()["item"]
    first = api_submit(ann_api, opened_study, item, key="retry-after-timeout")
    again = api_submit(ann_api, opened_study, item, key="retry-after-timeout")
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["created"] is False and Judgment.objects.count() == 1
    clash = api_submit(ann_api, opened_study, item, key="retry-after-timeout", values=scores(1, 1, 1, 1))
    assert clash.status_code == 409 and "already used" in clash.json()["detail"]


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"adequacy": 3, "fluency": 3, "dissimilarity": 3}, "overall"),
        ({"adequacy": 0, "fluency": 3, "dissimilarity": 3, "overall": 3}, "adequacy"),
        ({"adequacy": 6, "fluency": 3, "dissimilarity": 3, "overall": 3}, "adequacy"),
        ({"adequacy": "x", "fluency": 3, "dissimilarity": 3, "overall": 3}, "adequacy"),
        ({"adequacy": 2.5, "fluency": 3, "dissimilarity": 3, "overall": 3}, "adequacy"),
    ],
)
def test_invalid_scores_are_400_naming_the_criterion(ann_api, opened_study, values, field):
    item = api_next(ann_api, opened_study).json()["item"]
    r = api_submit(ann_api, opened_study, item, values=values)
    assert r.status_code == 400
    assert field in r.json()["scores"]
    assert not Judgment.objects.exists()


def test_unknown_criterion_missing_fields_and_forged_stamp_are_400(ann_api, opened_study):
    item = api_next(ann_api, opened_study).json()["item"]
    r = api_submit(ann_api, opened_study, item, values=scores() | {"elegance": 4})
    assert r.status_code == 400 and "unknown criterion" in str(r.json())
    r = ann_api.post(f"/api/judging/studies/{opened_study.pk}/judgments/", {"item": item["token"]}, format="json")
    assert r.status_code == 400 and {"key", "scores", "serve_stamp"} <= set(r.json())
    r = api_submit(ann_api, opened_study, dict(item, serve_stamp="forged"))
    assert r.status_code == 400 and "serve stamp" in r.json()["detail"]


def test_revise_previous_and_item_detail(ann_api, opened_study):
    first = api_next(ann_api, opened_study).json()["item"]
    api_submit(ann_api, opened_study, first, values=scores(1, 1, 1, 1))
    second = api_next(ann_api, opened_study).json()["item"]
    prev = ann_api.get(f"/api/judging/studies/{opened_study.pk}/items/{second['token']}/previous/").json()
    assert prev["token"] == first["token"] and prev["scores"] == scores(1, 1, 1, 1) and prev["revision"] == 1
    last = ann_api.get(f"/api/judging/studies/{opened_study.pk}/items/last/").json()
    assert last["token"] == first["token"]
    r = api_submit(ann_api, opened_study, prev, values=scores(5, 5, 5, 5))
    assert r.status_code == 201 and r.json()["revision"] == 2
    detail = ann_api.get(f"/api/judging/studies/{opened_study.pk}/items/{first['token']}/").json()
    assert detail["scores"] == scores(5, 5, 5, 5) and detail["revision"] == 2
    r = ann_api.get(f"/api/judging/studies/{opened_study.pk}/items/{first['token']}/previous/")
    assert r.status_code == 404 and "first item" in r.json()["detail"]


def test_finished_and_closed(ann_api, opened_study, researcher, api_client):
    rate_all_via_service(opened_study, User.objects.get(username="ann"))
    body = api_next(ann_api, opened_study).json()
    assert body == {"finished": True, "done": 25, "total": 25, "item": None}
    from annotation.judging.services.opening import study_judging_close

    study_judging_close(study=opened_study)
    r = api_next(ann_api, opened_study)
    assert r.status_code == 409 and "not open" in r.json()["detail"]


# --- researcher endpoints ----------------------------------------------------------------------


@pytest.fixture
def rita_api(api_client, researcher):
    return api_login(api_client, researcher)


def test_design_get_update_open_and_frozen(rita_api, study, add_judge):
    add_judge(study, "ann")
    base = f"/api/judging/studies/{study.pk}/"
    d = rita_api.get(base + "design/").json()
    assert d["frozen"] is False and d["control_counts"] == {"identical": 1, "random": 1, "unigram": 1}
    r = rita_api.patch(
        base + "design/update/",
        {"seed": 5, "control_counts": {"identical": 1, "random": 2, "unigram": 0}},
        format="json",
    )
    assert r.status_code == 200 and r.json()["seed"] == 5 and r.json()["control_counts"]["random"] == 2
    r = rita_api.patch(base + "design/update/", {"expected_scores": {"identical": {"adequacy": 7}}}, format="json")
    assert r.status_code == 400
    r = rita_api.patch(base + "design/update/", {"expected_scores": {"identical": {"overall": 3}}}, format="json")
    assert r.status_code == 200
    assert r.json()["expected_scores"]["identical"] == {"adequacy": 5, "fluency": 5, "dissimilarity": 1, "overall": 3}
    r = rita_api.post(base + "open/")
    # a small study opens at once: 201 with the finished job and its summary
    assert r.status_code == 201 and r.json()["status"] == "succeeded"
    assert r.json()["summary"] == {"controls_created": 15, "items": 25, "judges": 1, "assignment_items": 25}
    assert rita_api.get(base + f"open/{r.json()['id']}/").json() == r.json()
    r = rita_api.patch(base + "design/update/", {"seed": 6}, format="json")
    assert r.status_code == 409 and "frozen" in r.json()["detail"]
    r = rita_api.patch(base + "design/update/", {"qc_alpha": 0.01}, format="json")
    assert r.status_code == 200 and r.json()["frozen"] is True
    assert rita_api.post(base + "open/").status_code == 409


def test_progress_qc_exclusion_and_close(rita_api, opened_study):
    ann = User.objects.get(username="ann")
    rate_all_via_service(opened_study, ann)
    base = f"/api/judging/studies/{opened_study.pk}/"
    prog = rita_api.get(base + "progress/").json()
    assert {j["judge"]: j["done"] for j in prog["judges"]} == {"ann": 25, "bob": 0}
    assert {s["system"]: s["rated"] for s in prog["systems"]}["control:random"] == 5
    qc = rita_api.get(base + "qc/").json()
    rows = {j["judge"]: j for j in qc["judges"]}
    assert rows["ann"]["rated"] and rows["ann"]["passed"] is False and rows["ann"]["flags"]
    assert rows["ann"]["control_mad"]["adequacy"] == pytest.approx((2 * 5 + 2 * 5 + 2 * 5) / 15)  # 3 vs 5,1,1
    assert rows["bob"]["rated"] is False and rows["bob"]["passed"] is None
    before = qc["fingerprint"]
    r = rita_api.post(base + "judges/ann/exclude/", {"reason": "flat"}, format="json")
    assert r.status_code == 200 and r.json()["changed"] and r.json()["fingerprint"] != before
    assert rita_api.post(base + "judges/ann/exclude/", {}, format="json").json()["changed"] is False
    assert judges_excluded(study=opened_study) == {"ann"}
    assert rita_api.post(base + "judges/ann/include/", {}, format="json").json()["excluded"] is False
    assert rita_api.post(base + "judges/nobody/exclude/", {}, format="json").status_code == 404
    assert rita_api.post(base + "close/").json() == {"status": "closed"}


def test_exports_are_csv(rita_api, opened_study):
    rate_all_via_service(opened_study, User.objects.get(username="ann"))
    r = rita_api.get(f"/api/judging/studies/{opened_study.pk}/export/tidy/", HTTP_ACCEPT="text/csv")
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(r.streaming_content).decode())))
    assert len(rows) == 25 * 4
    r = rita_api.get(f"/api/judging/studies/{opened_study.pk}/export/wide/")
    rows = list(csv.DictReader(io.StringIO(b"".join(r.streaming_content).decode())))
    assert len(rows) == 25 and "ann:overall" in rows[0]


def test_the_openapi_schema_builds_without_warnings():
    from io import StringIO

    from django.core.management import call_command

    out, err = StringIO(), StringIO()
    call_command("spectacular", "--validate", stdout=out, stderr=err)
    judging_warnings = [line for line in err.getvalue().splitlines() if "judging" in line.lower() or "Judging" in line]
    assert judging_warnings == []
    assert "/api/judging/studies/{study_id}/judgments/" in out.getvalue()
