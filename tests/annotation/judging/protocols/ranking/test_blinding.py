"""The blinding byte scan of test_blinding.py, extended to k-way ranking: every byte a judge
receives on the ranking page, its JSON API and the JS/CSS it loads is scanned for system
names, control words, the study's name and database ids; ranking pages look alike whatever
the set; tokens are opaque and the screen order follows neither system names nor ids."""

from __future__ import annotations

import re

import pytest
from django.core.management.color import no_style
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from annotation.enums import Role
from annotation.judging.protocols.ranking.models import RankingItem
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

SYSTEMS = ["sys-alpha-secret", "sys-beta-secret", "sys-gamma-secret", "sys-delta-secret"]
FORBIDDEN = [*FORBIDDEN_WORDS, *SYSTEMS, "is_control", "candidate_id", "candidates_ids", 'system"', "system'"]


@pytest.fixture
def secret_ranking(make_user):
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
            "protocol": "ranking",
            "ranking_k": 3,
            "ranking_scores": True,
            "control_counts": {"identical": 1, "random": 1, "unigram": 0},
        },
    )
    study_judging_open(study=study)
    return study, judge


def ranking_session(study, judge) -> tuple[Recorder, list[str]]:
    rec, pages = Recorder(), []
    client, api = Client(), APIClient()
    client.force_login(judge)
    api.force_authenticate(judge)
    for path in ("/judge/", f"/judge/studies/{study.pk}/", f"/judge/studies/{study.pk}/instructions/"):
        rec.add(path, client.get(path))
    rec.add("start", client.post(f"/judge/studies/{study.pk}/instructions/"))
    tokens = []
    while True:
        rec.add("api next", api.get(f"/api/judging/studies/{study.pk}/rankings/next/"))
        page = rec.add("rank page", client.get(f"/judge/studies/{study.pk}/rank/"))
        if 'name="token"' not in page:
            break
        pages.append(page)
        tokens.append(hidden(page, "token"))
        n = page.count('class="rank-card')
        ranks = {f"rank_{p}": str(1 + (p + len(tokens)) % n) for p in range(1, n + 1)}
        scores = {f"score_{p}": str(10 * p) for p in range(1, n + 1)}
        if len(tokens) == 2:  # a refused submission is shown back to the judge
            rec.add(
                "refused submit",
                client.post(
                    f"/judge/studies/{study.pk}/rank/submit/",
                    {"token": tokens[-1], "serve": hidden(page, "serve"), "key": hidden(page, "key"), **ranks},
                ),
            )
        rec.add(
            "submit",
            client.post(
                f"/judge/studies/{study.pk}/rank/submit/",
                {"token": tokens[-1], "serve": hidden(page, "serve"), "key": hidden(page, "key"), **ranks, **scores},
            ),
        )
    for token in tokens[:3]:
        rec.add("revise page", client.get(f"/judge/studies/{study.pk}/rank/{token}/"))
        entry = api.get(f"/api/judging/studies/{study.pk}/rankings/{token}/")
        rec.add("api ranking", entry)
    entry = entry.json()
    k = len(entry["candidates"])
    rec.add(
        "api submit",
        api.post(
            f"/api/judging/studies/{study.pk}/rankings/",
            {
                "ranking": entry["token"],
                "key": "blind-rank-revision",
                "order": [[1, 2], *range(3, k + 1)],
                "scores": {str(p): 50 for p in range(1, k + 1)},
                "serve_stamp": entry["serve_stamp"],
            },
            format="json",
        ),
    )
    rec.add(
        "api submit error",
        api.post(
            f"/api/judging/studies/{study.pk}/rankings/",
            {"ranking": entry["token"], "key": "blind-rank-error", "order": [1, 1], "serve_stamp": "x"},
            format="json",
        ),
    )
    rec.add("home after", client.get("/judge/"))
    return rec, pages


def test_nothing_a_ranking_judge_receives_names_a_system_a_control_or_an_id(secret_ranking):
    study, judge = secret_ranking
    rec, pages = ranking_session(study, judge)
    assert len(pages) == 6 * 2 + 6 * 2  # two sets of 3 of 4 systems and two control sets per original
    assert any(ref.endswith("judging/ranking/ranking.js") for ref, _ in rec.blobs)
    assert any(ref.endswith("judging/ranking/ranking.css") for ref, _ in rec.blobs)
    ids = forbidden_ids(study)
    tokens = set(RankingItem.objects.filter(assignment__study=study).values_list("token", flat=True))
    leaks = []
    for where, blob in rec.blobs:
        blob = scrub_random_values(blob, tokens)
        low = blob.lower()
        leaks += [f"{where}: {w!r}" for w in FORBIDDEN if w.lower() in low]
        leaks += [f"{where}: id {i}" for i in ids if i in blob]
    assert leaks == []


def normalised(page: str) -> str:
    texts = re.findall(r'<p class="sentence-text"[^>]*>(.*?)</p>', page, re.S)
    assert len(texts) == 4  # the original and three paraphrases
    for t in texts:
        page = page.replace(t, "TEXT")
    page = re.sub(r'value="[A-Za-z0-9_\-:.=]{8,}"', 'value="OPAQUE"', page)
    page = re.sub(r"/rank/[A-Za-z0-9_\-]+/", "/rank/OPAQUE/", page)
    return re.sub(r"\d+", "N", page)


def test_a_ranking_page_looks_the_same_for_controls_and_genuine_sets(secret_ranking):
    study, judge = secret_ranking
    _, pages = ranking_session(study, judge)
    assert len({normalised(p) for p in pages[1:]}) == 1


def test_the_screen_order_follows_neither_names_nor_ids(secret_ranking):
    study, judge = secret_ranking
    items = list(RankingItem.objects.filter(assignment__judge=judge).order_by("position"))
    names = dict(Candidate.objects.filter(original__study=study).values_list("id", "system__name"))
    by_id = [it.candidates == sorted(it.candidates) for it in items]
    by_name = [[names[c] for c in it.candidates] == sorted(names[c] for c in it.candidates) for it in items]
    assert sum(by_id) < len(items) / 2 and sum(by_name) < len(items) / 2  # 1/6 by chance for 3 candidates
    firsts = {names[it.candidates[0]] for it in items}
    assert len(firsts) >= 4  # no system (nor control) is always shown first
    tokens = [it.token for it in items]
    assert tokens != sorted(tokens) and all(re.fullmatch(r"[A-Za-z0-9_\-]{20,}", t) for t in tokens)


# --- training sets and attention sets (issue 25) ---------------------------------------------------


def test_ranking_training_and_attention_sets_leak_nothing_and_look_like_sets(secret_ranking):
    """A ranking judge's training pages, feedback, and the attention sets drawn among the real sets
    (page and API) name no system, control or id; an attention set's page is the same page as a
    real set's but for its texts, and its API object has the same fields."""
    from annotation.judging import screening, training
    from annotation.judging.models import AttentionCheck
    from annotation.judging.protocols.ranking.screening import attention_layout

    study, judge = secret_ranking
    for i in (1, 2):
        training.training_item_add(
            study=study,
            row={
                "original": f"Training original {i}.",
                "p1": f"Training one {i}.",
                "p2": f"Training two {i}.",
                "p3": f"Training three {i}.",
                "reference": "1 > 2 = 3",
                "explanation": "The meaning is all there.",
            },
            from_text=True,
        )
    screening.screening_settings_update(
        study=study,
        changes={
            "training_required": 1,
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
    rec.add("rank → training", client.get(f"{base}/rank/"))
    rec.add("api training", api.get(f"/api/judging/studies/{study.pk}/training/"))
    rec.add("api sets before training", api.get(f"/api/judging/studies/{study.pk}/rankings/next/"))
    for ranks in (("1", "2", "3"), ("3", "2", "1")):  # one right, one wrong
        page = rec.add("training page", client.get(f"{base}/training/"))
        rec.add(
            "training answer",
            client.post(
                f"{base}/training/",
                {"token": hidden(page, "token"), **{f"rank_{p}": r for p, r in enumerate(ranks, 1)}},
            ),
        )
        rec.add("feedback", client.get(f"{base}/training/feedback/"))
    set_pages, check_pages, api_sets, api_checks = [], [], [], []
    while True:
        api_next = api.get(f"/api/judging/studies/{study.pk}/rankings/next/")
        rec.add("api next", api_next)
        page = rec.add("rank page", client.get(f"{base}/rank/"))
        if 'name="token"' not in page:
            break
        token = hidden(page, "token")
        check = AttentionCheck.objects.filter(token=token).first()
        (check_pages if check else set_pages).append(page)
        (api_checks if check else api_sets).append(api_next.json()["ranking"])
        n = page.count('class="rank-card')
        if check:
            _item, _texts, copy, unrelated = attention_layout(check=check)
            rest = [p for p in range(1, n + 1) if p not in (copy, unrelated)]
            ranks = {f"rank_{p}": str(r) for r, p in enumerate([copy, *rest, unrelated], 1)}
        else:
            ranks = {f"rank_{p}": str(p) for p in range(1, n + 1)}
        rec.add(
            "submit",
            client.post(
                f"{base}/rank/submit/",
                {
                    "token": token,
                    "serve": hidden(page, "serve"),
                    "key": hidden(page, "key"),
                    **ranks,
                    **{f"score_{p}": "50" for p in range(1, n + 1)},
                },
            ),
        )
    assert len(check_pages) == 4 and all(c.passed for c in AttentionCheck.objects.filter(assignment__judge=judge))
    # the same page as a real set's, but for its texts (the first set page has no way back)
    assert {normalised(p) for p in check_pages} == {normalised(p) for p in set_pages[1:]}
    assert {tuple(sorted(e)) for e in api_checks} == {tuple(sorted(e)) for e in api_sets}
    tokens_answer_alike(
        rec=rec,
        api=api,
        client=client,
        judge=judge,
        study=study,
        item_model=RankingItem,
        api_path="rankings",
        page_path="rank",
    )

    ids = forbidden_ids(study)
    tokens = (
        set(RankingItem.objects.filter(assignment__study=study).values_list("token", flat=True))
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
    assert any("judging/ranking/ranking.js" in ref for ref, _ in rec.blobs)
