"""The blinding byte scan of test_blinding.py, extended to side-by-side comparison: every byte
a judge receives on the comparison page, its JSON API and the JS/CSS it loads is scanned for
system names, control words, the study's name and database ids; pair pages look alike
whatever the pair; tokens are opaque and the sides do not follow system names or ids."""

from __future__ import annotations

import re

import pytest
from django.core.management.color import no_style
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient
from scipy.stats import binomtest

from annotation.enums import Role
from annotation.judging.protocols.side_by_side.models import ComparisonItem
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
)

pytestmark = pytest.mark.django_db

SYSTEMS = ["sys-alpha-secret", "sys-beta-secret", "sys-gamma-secret"]
FORBIDDEN = [*FORBIDDEN_WORDS, *SYSTEMS, "left_system", "right_system", "is_control", "preferred"]


@pytest.fixture
def secret_comparison(make_user):
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
        study=study, changes={"protocol": "comparison", "control_counts": {"identical": 1, "random": 1, "unigram": 0}}
    )
    study_judging_open(study=study)
    return study, judge


def comparison_session(study, judge) -> tuple[Recorder, list[str]]:
    rec, pages = Recorder(), []
    client, api = Client(), APIClient()
    client.force_login(judge)
    api.force_authenticate(judge)
    for path in ("/judge/", f"/judge/studies/{study.pk}/", f"/judge/studies/{study.pk}/instructions/"):
        rec.add(path, client.get(path))
    rec.add("start", client.post(f"/judge/studies/{study.pk}/instructions/"))
    tokens = []
    answers = ["A", "tie", "B"]
    while True:
        rec.add("api next", api.get(f"/api/judging/studies/{study.pk}/pairs/next/"))
        page = rec.add("compare page", client.get(f"/judge/studies/{study.pk}/compare/"))
        if 'name="token"' not in page:
            break
        pages.append(page)
        tokens.append(hidden(page, "token"))
        rec.add(
            "submit",
            client.post(
                f"/judge/studies/{study.pk}/compare/submit/",
                {
                    "token": tokens[-1],
                    "serve": hidden(page, "serve"),
                    "key": hidden(page, "key"),
                    "preference": answers[len(tokens) % 3],
                },
            ),
        )
    for token in tokens[:3]:
        rec.add("revise page", client.get(f"/judge/studies/{study.pk}/compare/{token}/"))
        pair = api.get(f"/api/judging/studies/{study.pk}/pairs/{token}/")
        rec.add("api pair", pair)
    pair = pair.json()
    rec.add(
        "api submit",
        api.post(
            f"/api/judging/studies/{study.pk}/comparisons/",
            {
                "pair": pair["token"],
                "key": "blind-cmp-revision",
                "answers": {"preference": "B"},
                "serve_stamp": pair["serve_stamp"],
            },
            format="json",
        ),
    )
    rec.add(
        "api submit error",
        api.post(
            f"/api/judging/studies/{study.pk}/comparisons/",
            {"pair": pair["token"], "key": "blind-cmp-error", "answers": {"preference": "C"}, "serve_stamp": "x"},
            format="json",
        ),
    )
    rec.add("home after", client.get("/judge/"))
    return rec, pages


def test_nothing_a_comparison_judge_receives_names_a_system_a_control_or_an_id(secret_comparison):
    study, judge = secret_comparison
    rec, pages = comparison_session(study, judge)
    assert len(pages) == 6 * 3 + 6 * 2  # three system pairs and two control pairs per original
    assert any(ref.endswith("judging/side_by_side/side_by_side.js") for ref, _ in rec.blobs)
    assert any(ref.endswith("judging/side_by_side/side_by_side.css") for ref, _ in rec.blobs)
    ids = forbidden_ids(study)
    tokens = set(ComparisonItem.objects.filter(assignment__study=study).values_list("token", flat=True))
    leaks = []
    for where, blob in rec.blobs:
        blob = scrub_random_values(blob, tokens)
        low = blob.lower()
        leaks += [f"{where}: {w!r}" for w in FORBIDDEN if w.lower() in low]
        leaks += [f"{where}: id {i}" for i in ids if i in blob]
    assert leaks == []


def normalised(page: str) -> str:
    texts = re.findall(r'<p class="sentence-text"[^>]*>(.*?)</p>', page, re.S)
    assert len(texts) == 3  # the original, A and B
    for t in texts:
        page = page.replace(t, "TEXT")
    page = re.sub(r'value="[A-Za-z0-9_\-:.=]{8,}"', 'value="OPAQUE"', page)
    page = re.sub(r"/compare/[A-Za-z0-9_\-]+/", "/compare/OPAQUE/", page)
    return re.sub(r"\d+", "N", page)


def test_a_pair_page_looks_the_same_for_controls_and_genuine_pairs(secret_comparison):
    study, judge = secret_comparison
    _, pages = comparison_session(study, judge)
    assert len({normalised(p) for p in pages[1:]}) == 1


def test_sides_and_order_follow_neither_names_nor_ids(secret_comparison):
    study, judge = secret_comparison
    items = list(
        ComparisonItem.objects.filter(assignment__judge=judge)
        .order_by("position")
        .values_list("left_id", "right_id", "left__system__name", "right__system__name", "token", "is_control")
    )
    # A side that followed ids or names would put the smaller one left on (nearly) every pair; a
    # fair draw does so on about half. A binomial test at 0.001 tells them apart whatever ids the
    # database gave (a fixed band of 25-75 % failed for a fair draw about once in 100 orders).
    left_smaller_id = [lid < rid for lid, rid, *_ in items]
    assert binomtest(sum(left_smaller_id), len(items), 0.5).pvalue > 0.001
    left_smaller_name = [ln < rn for _, _, ln, rn, *_ in items]
    assert binomtest(sum(left_smaller_name), len(items), 0.5).pvalue > 0.001
    tokens = [t for *_, t, _ in items]
    assert tokens != sorted(tokens) and all(re.fullmatch(r"[A-Za-z0-9_\-]{20,}", t) for t in tokens)
    control_positions = [i for i, row in enumerate(items) if row[-1]]
    assert min(control_positions) < len(items) // 3 and max(control_positions) > 2 * len(items) // 3
