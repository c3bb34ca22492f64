"""The byte scan of test_blinding, extended to training, feedback, attention-check and
screened-out pages and their API: nothing names a system, a control, an expected score,
the study or a database id; an attention check shows nothing of any item. Side by side:
an attention pair, drawn among the real pairs, is the same page and API object as a
real pair but for its texts."""

from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from annotation.judging import screening, training
from annotation.judging.models import AttentionCheck
from annotation.judging.selectors.judge import assignment_for_judge
from tests.annotation.judging.protocols.side_by_side.test_blinding import secret_comparison

from .test_blinding import (
    EXPECTED_PATTERNS,
    FORBIDDEN_WORDS,
    RATING,
    SENTENCES,
    Recorder,
    forbidden_ids,
    hidden,
    scrub_random_values,
    secret_study,
    study_tokens,
    tokens_answer_alike,
)

pytestmark = pytest.mark.django_db
__all__ = ["secret_comparison", "secret_study"]


def scan(rec: Recorder, study) -> list[str]:
    ids = forbidden_ids(study)
    tokens = study_tokens(study)
    leaks = []
    for where, blob in rec.blobs:
        blob = scrub_random_values(blob, tokens)
        low = blob.lower()
        leaks += [f"{where}: {w!r}" for w in FORBIDDEN_WORDS if w.lower() in low]
        leaks += [f"{where}: id {i}" for i in ids if i in blob]
        leaks += [f"{where}: expected-score pattern {p!r}" for p in EXPECTED_PATTERNS if re.search(p, blob)]
    return leaks


def test_training_attention_and_screened_out_pages_leak_nothing(secret_study):
    from django.test import Client

    study, judge = secret_study
    for i in (1, 2):
        training.training_item_add(
            study=study,
            row={
                "original": f"Training original {i}.",
                "candidate": f"Training candidate {i}.",
                "adequacy": 5,
                "fluency": 4,
                "explanation": "The meaning is all there.",
            },
        )
    screening.screening_settings_update(
        study=study,
        changes={
            "training_required": 2,
            "training_retries": 0,
            "attention_count": 4,
            "attention_policy": "end",
            "attention_max_failures": 1,
        },
    )
    rec, client = Recorder(), Client()
    client.force_login(judge)
    api = APIClient()
    api.force_authenticate(judge)
    base = f"/judge/studies/{study.pk}"
    client.post(f"{base}/instructions/")
    rec.add("rate → training", client.get(f"{base}/"))
    rec.add("api training", api.get(f"/api/judging/studies/{study.pk}/training/"))
    rec.add("api next before training", api.get(f"/api/judging/studies/{study.pk}/items/next/"))
    for _ in range(2):
        page = rec.add("training page", client.get(f"{base}/training/"))
        rec.add(
            "training answer",
            client.post(
                f"{base}/training/",
                {
                    "token": hidden(page, "token"),
                    **{k: str(v) for k, v in RATING.items()} | {"adequacy": "5", "fluency": "4"},
                },
            ),
        )
        rec.add("feedback", client.get(f"{base}/training/feedback/"))
    assert assignment_for_judge(study=study, judge=judge).training_passed_at is not None

    # rate real items until the first attention check, and look at it
    check_pages = []
    while True:
        r = client.get(f"{base}/")
        if r.status_code == 302 and r.url.endswith("/check/"):
            check_pages.append(rec.add("attention page", client.get(r.url)))
            rec.add("api attention", api.get(f"/api/judging/studies/{study.pk}/attention/"))
            break
        page = rec.add("item page", r)
        rec.add(
            "submit",
            client.post(
                f"{base}/submit/",
                {"token": hidden(page, "token"), "serve": hidden(page, "serve"), "key": hidden(page, "key"), **RATING},
            ),
        )
    assert "This page is an instruction" in check_pages[0]
    assert not any(s[:20] in check_pages[0] for s in SENTENCES)  # no item text on a check
    check = AttentionCheck.objects.filter(assignment__judge=judge, answered_at__isnull=True).first()
    wrong = int(check.expected) % 5 + 1
    rec.add("attention answer", client.post(f"{base}/check/", {"token": check.token, "value": wrong}))
    rec.add("screened out page", client.get(f"{base}/screened-out/"))
    rec.add("rate after", client.get(f"{base}/"))
    rec.add("api next after", api.get(f"/api/judging/studies/{study.pk}/items/next/"))
    assert assignment_for_judge(study=study, judge=judge).screened_out_at is not None
    assert scan(rec, study) == []


def test_attention_pages_look_the_same_whatever_comes_next(secret_study):
    """Two judges' checks differ only in the criterion, value and token: nothing tells
    what item is next or where the judge is."""
    from django.test import Client

    study, judge = secret_study
    screening.screening_settings_update(study=study, changes={"attention_count": 5})
    a = assignment_for_judge(study=study, judge=judge)
    screening.attention_plan(assignment=a, settings=screening.settings_for_study(study=study))
    client = Client()
    client.force_login(judge)
    client.post(f"/judge/studies/{study.pk}/instructions/")
    shapes = set()
    for check in AttentionCheck.objects.filter(assignment=a).order_by("after_done"):
        page = client.get(f"/judge/studies/{study.pk}/check/").content.decode()
        page = re.sub(r'value="[A-Za-z0-9_\-:.=]{8,}"', 'value="OPAQUE"', page)
        page = re.sub(r"“[^”]*”, choose \d+ \([^)]*\)", "CRITERION", page)
        page = re.sub(r'<div class="criterion.*?</div>\s*</div>', "SCALE", page, flags=re.S)
        shapes.add(page)
        screening.attention_answer(assignment=a, token=check.token, value=int(check.expected))
    assert len(shapes) == 1


# --- side by side (issue 24): training pairs, attention pairs among the real ones ------------------


def test_side_by_side_training_and_attention_pairs_leak_nothing_and_look_like_pairs(secret_comparison):
    """A side-by-side judge's training pages, feedback, and the attention pairs drawn among the real
    pairs (page and API) name no system, control or id; an attention pair's page is the same page as
    a real pair's but for its texts, and its API object has the same fields."""
    from django.test import Client

    from annotation.judging.protocols.side_by_side.models import ComparisonItem
    from tests.annotation.judging.protocols.side_by_side.test_blinding import FORBIDDEN, normalised

    study, judge = secret_comparison
    for i, ref in enumerate(("A", "B"), 1):
        training.training_item_add(
            study=study,
            row={
                "original": f"Training original {i}.",
                "a": f"Training A {i}.",
                "b": f"Training B {i}.",
                "preference": ref,
                "explanation": "The meaning is all there.",
            },
        )
    screening.screening_settings_update(
        study=study,
        changes={
            "training_required": 2,
            "training_retries": 0,
            "attention_count": 4,
            "attention_policy": "end",
            "attention_max_failures": 2,
        },
    )
    rec, client, api = Recorder(), Client(), APIClient()
    client.force_login(judge)
    api.force_authenticate(judge)
    base = f"/judge/studies/{study.pk}"
    client.post(f"{base}/instructions/")
    rec.add("compare → training", client.get(f"{base}/compare/"))
    rec.add("api training", api.get(f"/api/judging/studies/{study.pk}/training/"))
    rec.add("api pairs before training", api.get(f"/api/judging/studies/{study.pk}/pairs/next/"))
    for ref in ("A", "B"):
        page = rec.add("training page", client.get(f"{base}/training/"))
        rec.add(
            "training answer", client.post(f"{base}/training/", {"token": hidden(page, "token"), "preference": ref})
        )
        rec.add("feedback", client.get(f"{base}/training/feedback/"))
    assert assignment_for_judge(study=study, judge=judge).training_passed_at is not None

    pair_pages, check_pages, api_pairs, api_checks = [], [], [], []
    while True:
        api_next = api.get(f"/api/judging/studies/{study.pk}/pairs/next/")
        rec.add("api next", api_next)
        r = client.get(f"{base}/compare/")
        page = rec.add("compare page", r)
        if 'name="token"' not in page:
            break
        token = hidden(page, "token")
        check = AttentionCheck.objects.filter(token=token).first()
        (check_pages if check else pair_pages).append(page)
        (api_checks if check else api_pairs).append(api_next.json()["pair"])
        answer = ("A" if check.expected == 0.0 else "B") if check else "tie"
        rec.add(
            "submit",
            client.post(
                f"{base}/compare/submit/",
                {"token": token, "serve": hidden(page, "serve"), "key": hidden(page, "key"), "preference": answer},
            ),
        )
    rec.add("attention page → compare", client.get(f"{base}/check/"))
    assert len(check_pages) == 4 and all(c.passed for c in AttentionCheck.objects.filter(assignment__judge=judge))
    # the same page as a real pair's, but for its texts (the first pair page has no way back)
    assert {normalised(p) for p in check_pages} == {normalised(p) for p in pair_pages[1:]}
    assert {tuple(sorted(p)) for p in api_checks} == {tuple(sorted(p)) for p in api_pairs}
    tokens_answer_alike(
        rec=rec,
        api=api,
        client=client,
        judge=judge,
        study=study,
        item_model=ComparisonItem,
        api_path="pairs",
        page_path="compare",
    )

    ids = forbidden_ids(study)
    tokens = (
        set(ComparisonItem.objects.filter(assignment__study=study).values_list("token", flat=True))
        | set(AttentionCheck.objects.filter(assignment__study=study).values_list("token", flat=True))
        | set(study.training_items.values_list("token", flat=True))
    )
    leaks = []
    for where, blob in rec.blobs:
        blob = scrub_random_values(blob, tokens)
        low = blob.lower()
        leaks += [f"{where}: {w!r}" for w in FORBIDDEN if w.lower() in low]
        leaks += [f"{where}: id {i}" for i in ids if i in blob]
    assert leaks == []
