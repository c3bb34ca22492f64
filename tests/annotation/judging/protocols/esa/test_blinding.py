"""The blinding byte scan of test_blinding.py, extended to error span annotation: every byte a
judge receives on the ESA page, its JSON API and the JS/CSS it loads is scanned for system
names, control words, the study's name and database ids; item pages look alike whether the
item is a control or not; tokens are opaque and the order follows neither names nor ids."""

from __future__ import annotations

import json
import re

import pytest
from django.core.management.color import no_style
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from annotation.enums import Role
from annotation.judging.protocols.esa.models import EsaItem
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from annotation.models import Candidate, Original, Study, System
from annotation.services.membership import study_member_add
from tests.annotation.judging.test_blinding import (
    EXTERNAL_IDS,
    FORBIDDEN_WORDS,
    SENTENCES,
    STUDY_NAME,
    Recorder,
    forbidden_ids,
    hidden,
    scrub_random_values,
    tokens_answer_alike,
)

pytestmark = pytest.mark.django_db

SYSTEMS = ["sys-alpha-secret", "sys-beta-secret"]
FORBIDDEN = [*FORBIDDEN_WORDS, *SYSTEMS, "is_control", "control_kind", '"system"']


@pytest.fixture
def secret_esa(make_user):
    owner = make_user("owner", researcher=True)
    study = Study.objects.create(name=STUDY_NAME, owner=owner)
    systems = [System.objects.create(pk=735550001 + i, study=study, name=n) for i, n in enumerate(SYSTEMS)]
    for i, (ext, text) in enumerate(zip(EXTERNAL_IDS, SENTENCES)):
        o = Original.objects.create(pk=824460001 + i, study=study, external_id=ext, text=text, position=i)
        for k, s in enumerate(systems):
            Candidate.objects.create(
                pk=913370001 + 10 * i + k, original=o, system=s, text=f"{text[:-1]} said in way number {k + 1}."
            )
    with connection.cursor() as cursor:
        for sql in connection.ops.sequence_reset_sql(no_style(), [Candidate, Original, System]):
            cursor.execute(sql)
    judge = make_user("ann")
    study_member_add(study=study, user=judge, role=Role.JUDGE)
    design_update(
        study=study,
        changes={
            "protocol": "esa",
            "esa_prefill": "aligner",
            "control_counts": {"identical": 1, "random": 1, "unigram": 0},
        },
    )
    study_judging_open(study=study)
    return study, judge


def esa_session(study, judge) -> tuple[Recorder, list[str]]:
    rec, pages = Recorder(), []
    client, api = Client(), APIClient()
    client.force_login(judge)
    api.force_authenticate(judge)
    for path in ("/judge/", f"/judge/studies/{study.pk}/", f"/judge/studies/{study.pk}/instructions/"):
        rec.add(path, client.get(path))
    rec.add("start", client.post(f"/judge/studies/{study.pk}/instructions/"))
    tokens = []
    while True:
        rec.add("api next", api.get(f"/api/judging/studies/{study.pk}/esa/next/"))
        page = rec.add("esa page", client.get(f"/judge/studies/{study.pk}/esa/"))
        if 'name="token"' not in page:
            break
        pages.append(page)
        tokens.append(hidden(page, "token"))
        data = json.loads(
            re.search(r'<script id="esa-data" type="application/json">(.*?)</script>', page, re.S).group(1)
        )
        rec.add(
            "submit",
            client.post(
                f"/judge/studies/{study.pk}/esa/submit/",
                {
                    "token": tokens[-1],
                    "serve": hidden(page, "serve"),
                    "key": hidden(page, "key"),
                    "spans": json.dumps(data["spans"]),
                    "score": str(10 * (len(tokens) % 10)),
                },
            ),
        )
    for token in tokens[:3]:
        rec.add("revise page", client.get(f"/judge/studies/{study.pk}/esa/{token}/"))
        item = api.get(f"/api/judging/studies/{study.pk}/esa/items/{token}/")
        rec.add("api item", item)
    item = item.json()
    rec.add(
        "api submit",
        api.post(
            f"/api/judging/studies/{study.pk}/esa/judgments/",
            {
                "item": item["token"],
                "key": "blind-esa-revision",
                "spans": [],
                "score": 33,
                "serve_stamp": item["serve_stamp"],
            },
            format="json",
        ),
    )
    rec.add(
        "api submit error",
        api.post(
            f"/api/judging/studies/{study.pk}/esa/judgments/",
            {
                "item": item["token"],
                "key": "blind-esa-error",
                "spans": [{"side": "x"}],
                "score": 300,
                "serve_stamp": "x",
            },
            format="json",
        ),
    )
    rec.add("home after", client.get("/judge/"))
    return rec, pages


def test_nothing_an_esa_judge_receives_names_a_system_a_control_or_an_id(secret_esa):
    study, judge = secret_esa
    rec, pages = esa_session(study, judge)
    assert len(pages) == 6 * 2 + 6 * 2  # two systems and two controls per original
    assert any(ref.endswith("judging/esa/esa.js") for ref, _ in rec.blobs)
    assert any(ref.endswith("judging/esa/offsets.js") for ref, _ in rec.blobs)
    assert any(ref.endswith("judging/esa/esa.css") for ref, _ in rec.blobs)
    ids = forbidden_ids(study)
    tokens = set(EsaItem.objects.filter(assignment__study=study).values_list("token", flat=True))
    leaks = []
    for where, blob in rec.blobs:
        blob = scrub_random_values(blob, tokens)
        low = blob.lower()
        leaks += [f"{where}: {w!r}" for w in FORBIDDEN if w.lower() in low]
        leaks += [f"{where}: id {i}" for i in ids if i in blob]
    assert leaks == []


def normalised(page: str) -> str:
    page = re.sub(r'<script id="esa-data" type="application/json">.*?</script>', "DATA", page, flags=re.S)
    texts = re.findall(r'<p class="sentence-text esa-text"[^>]*>(.*?)</p>', page, re.S)
    assert len(texts) == 2  # the original and the candidate
    for t in texts:
        page = page.replace(t, "TEXT")
    page = re.sub(r'value="[A-Za-z0-9_\-:.=]{8,}"', 'value="OPAQUE"', page)
    page = re.sub(r"/esa/[A-Za-z0-9_\-]+/", "/esa/OPAQUE/", page)
    return re.sub(r"\d+", "N", page)


def test_an_item_page_looks_the_same_for_controls_and_genuine_items(secret_esa):
    study, judge = secret_esa
    _, pages = esa_session(study, judge)
    assert len({normalised(p) for p in pages[1:]}) == 1


def test_order_and_tokens_follow_neither_names_nor_ids(secret_esa):
    study, judge = secret_esa
    items = list(
        EsaItem.objects.filter(assignment__judge=judge)
        .order_by("position")
        .values_list("candidate_id", "candidate__system__name", "token", "is_control")
    )
    ids = [c for c, *_ in items]
    assert ids != sorted(ids) and ids != sorted(ids, reverse=True)
    tokens = [t for _, _, t, _ in items]
    assert tokens != sorted(tokens) and all(re.fullmatch(r"[A-Za-z0-9_\-]{20,}", t) for t in tokens)
    control_positions = [i for i, row in enumerate(items) if row[-1]]
    assert min(control_positions) < len(items) // 3 and max(control_positions) > 2 * len(items) // 3


# --- training items and attention items (issue 25) ----------------------------------------------


def test_esa_training_and_attention_items_leak_nothing_and_look_like_items(secret_esa):
    """An ESA judge's training pages, feedback, and the attention items drawn among the real items
    (page and API) name no system, control, expected score or id; an attention item's page is the
    same page as a real item's but for its texts, and its API object has the same fields."""
    from annotation.judging import screening, training
    from annotation.judging.models import AttentionCheck
    from annotation.judging.selectors.judge import assignment_for_judge

    study, judge = secret_esa
    for i, (lo, hi, major) in enumerate(((70, 100, "no"), (0, 20, "yes")), 1):
        training.training_item_add(
            study=study,
            row={
                "original": f"Training original {i}.",
                "candidate": f"Training candidate {i}.",
                "score_min": str(lo),
                "score_max": str(hi),
                "major": major,
                "explanation": "The meaning is all there.",
            },
        )
    screening.screening_settings_update(
        study=study,
        changes={"training_required": 1, "training_retries": 0, "attention_count": 4, "attention_policy": "warn"},
    )
    rec, client, api = Recorder(), Client(), APIClient()
    client.force_login(judge)
    api.force_authenticate(judge)
    base = f"/judge/studies/{study.pk}"
    client.post(f"{base}/instructions/")
    rec.add("esa → training", client.get(f"{base}/esa/"))
    rec.add("api training", api.get(f"/api/judging/studies/{study.pk}/training/"))
    rec.add("api next before training", api.get(f"/api/judging/studies/{study.pk}/esa/next/"))
    for score in ("85", "85"):  # the first right, the second wrong (no major span, too high)
        page = rec.add("training page", client.get(f"{base}/training/"))
        rec.add(
            "training error",
            client.post(f"{base}/training/", {"token": hidden(page, "token"), "spans": "[", "score": "101"}),
        )
        rec.add(
            "training answer",
            client.post(f"{base}/training/", {"token": hidden(page, "token"), "spans": "[]", "score": score}),
        )
        rec.add("feedback", client.get(f"{base}/training/feedback/"))
    assert assignment_for_judge(study=study, judge=judge).training_passed_at is not None

    item_pages, check_pages, api_items, api_checks = [], [], [], []
    while True:
        api_next = rec.add("api next", api.get(f"/api/judging/studies/{study.pk}/esa/next/"))
        page = rec.add("esa page", client.get(f"{base}/esa/"))
        if 'name="token"' not in page:
            break
        token = hidden(page, "token")
        check = AttentionCheck.objects.filter(token=token).first()
        (check_pages if check else item_pages).append(page)
        (api_checks if check else api_items).append(json.loads(api_next)["item"])
        data = json.loads(
            re.search(r'<script id="esa-data" type="application/json">(.*?)</script>', page, re.S).group(1)
        )
        rec.add(
            "submit",
            client.post(
                f"{base}/esa/submit/",
                {
                    "token": token,
                    "serve": hidden(page, "serve"),
                    "key": hidden(page, "key"),
                    "spans": json.dumps(data["spans"]),
                    "score": "40",
                },
            ),
        )  # fails every copy check: the warning too
    rec.add("attention page → esa", client.get(f"{base}/check/"))
    assert (
        len(check_pages) == 4
        and AttentionCheck.objects.filter(assignment__judge=judge, answered_at__isnull=False).count() == 4
    )

    # the same page as a real item's, but for its texts (the first item page has no way back)
    # (after a failed check the next page carries the warning: compared without the messages)
    def shape(p):
        return re.sub(r"\s+", " ", normalised(re.sub(r'<ul class="messages".*?</ul>', "", p, flags=re.S)))

    assert {shape(p) for p in check_pages} == {shape(p) for p in item_pages[1:]}
    assert any('class="messages"' in p for p in item_pages)
    assert {tuple(sorted(p)) for p in api_checks} == {tuple(sorted(p)) for p in api_items}
    span_fields = {tuple(sorted(s)) for p in api_items for s in p["spans"]}
    assert {tuple(sorted(s)) for p in api_checks for s in p["spans"]} <= span_fields
    tokens_answer_alike(
        rec=rec,
        api=api,
        client=client,
        judge=judge,
        study=study,
        item_model=EsaItem,
        api_path="esa/items",
        page_path="esa",
    )

    ids = forbidden_ids(study)
    tokens = (
        set(EsaItem.objects.filter(assignment__study=study).values_list("token", flat=True))
        | set(AttentionCheck.objects.filter(assignment__study=study).values_list("token", flat=True))
        | set(study.training_items.values_list("token", flat=True))
    )
    leaks = []
    for where, blob in rec.blobs:
        blob = scrub_random_values(blob, tokens)
        low = blob.lower()
        leaks += [f"{where}: {w!r}" for w in [*FORBIDDEN, "attention"] if w.lower() in low]
        leaks += [f"{where}: id {i}" for i in ids if i in blob]
        leaks += [
            f"{where}: reference {r!r}"
            for r in ("score_min", "score_max", '"major": true', '"major": false', "70–100", "0–20")
            if r in blob
        ]
    assert leaks == [], leaks[:10]
