"""The blinding oracle (issue 38 items 11-14): for every protocol of the registry whose attention
checks are drawn among the judge's items (``has_screening`` and ``attention_page`` its own judge
page: side by side, ESA, ranking), an attention check, a control and a genuine item answer the
same submission in the same way, through the API (JSON) and the judge's HTML page:

* malformed answers, forged serve stamps, malformed keys, a closed study and the attention
  side door: byte-identical status, the same body keys and the same error texts;
* valid answers: the same status and body shape, revisions 1 then 2 after a resubmission, the
  same key replayed (200) or reused with other values (409), and a readback (GET of the item)
  that returns what was sent, revision included;
* a walk through the whole order: each served item's Previous link is what was served just
  before (a check is not skipped) and the next-item answer's outer ``done``/``total`` are the
  item's own.

The absolute protocol's checks have their own page (an instruction, "for Fluency choose 2"),
so a judge knows them by design and nothing there is blinded; what is comparable is checked for
it: a check's answer is refused after close like an item's, and the next-item answer's counts
are the item's own. A protocol added to the registry without a driver here fails
:func:`test_every_protocol_with_screening_has_an_oracle_driver`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from annotation.enums import StudyStatus
from annotation.judging import scales, screening
from annotation.judging.models import Assignment, AttentionCheck, JudgingDesign
from annotation.judging.protocols.registry import protocol_get, protocols_all
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from annotation.judging.tokens import serve_stamp_make
from annotation.models import Study
from tests.factories import study_with_data

pytestmark = pytest.mark.django_db

#: Every message a judge's page may show for the submissions below: a page tells a check apart
#: if the set of those it shows differs.
PAGE_MESSAGES = (
    "The serve stamp is missing or does not belong to this item",
    "Some spans are not valid",
    "key must be",
    "not open for judging",
    "in the order twice",
    "unknown question",
    "This key was already used",
    "There is no such",
)


@dataclass(frozen=True)
class Driver:
    """What the oracle needs to know of one protocol's judge API and page."""

    design: dict
    systems: tuple[str, ...]
    next_path: str  # under /api/judging/studies/<pk>/
    entry_key: str  # the item in the next-item answer
    detail_path: str  # with {token}
    submit_path: str
    token_field: str
    page: str  # /judge/studies/<pk>/<page>/
    valid: Callable[[dict, dict], dict]  # (served entry, next answer) → the answer's fields
    other: Callable[[dict, dict], dict]  # another valid answer
    malformed: dict
    sent_back: Callable[[dict], Any]  # the answer as the item's readback shows it
    form: Callable[[dict], dict] = field(default=lambda answer: answer)  # the page's fields for an answer


def _esa_form(answer: dict) -> dict:
    return {"spans": json.dumps(answer["spans"]), "score": str(answer["score"])}


def _rank_form(answer: dict) -> dict:
    ranks: dict[str, str] = {}
    for rank, element in enumerate(answer["order"], 1):
        for place in element if isinstance(element, list) else [element]:
            ranks[f"rank_{place}"] = str(rank)
    return ranks


def _answers(next_answer: dict, value: str) -> dict:
    return {"answers": {q["slug"]: value for q in next_answer["questions"]}}


DRIVERS: dict[str, Driver] = {
    "esa": Driver(
        design={"protocol": "esa", "esa_prefill": "aligner"},
        systems=("alpha", "beta"),
        next_path="esa/next/",
        entry_key="item",
        detail_path="esa/items/{token}/",
        submit_path="esa/judgments/",
        token_field="item",
        page="esa",
        # The spans as served (the proposals, kept: "proposed": true) and a score.
        valid=lambda entry, _next: {"spans": entry["spans"], "score": 60},
        other=lambda entry, _next: {"spans": [], "score": 61},
        malformed={"spans": [{"side": "candidate", "start": 0, "end": 100000, "severity": "major"}], "score": 50},
        sent_back=lambda d: {"spans": d["spans"], "score": d["score"]},
        form=_esa_form,
    ),
    "ranking": Driver(
        design={"protocol": "ranking", "ranking_k": 3},
        systems=("alpha", "beta", "gamma", "delta"),
        next_path="rankings/next/",
        entry_key="ranking",
        detail_path="rankings/{token}/",
        submit_path="rankings/",
        token_field="ranking",
        page="rank",
        valid=lambda entry, _next: {"order": list(range(1, len(entry["candidates"]) + 1))},
        other=lambda entry, _next: {"order": list(range(len(entry["candidates"]), 0, -1))},
        malformed={"order": [1, 1]},
        sent_back=lambda d: {"order": d["order"]},
        form=_rank_form,
    ),
    "comparison": Driver(
        design={"protocol": "comparison"},
        systems=("alpha", "beta", "gamma"),
        next_path="pairs/next/",
        entry_key="pair",
        detail_path="pairs/{token}/",
        submit_path="comparisons/",
        token_field="pair",
        page="compare",
        valid=lambda _entry, nxt: _answers(nxt, "A"),
        other=lambda _entry, nxt: _answers(nxt, "B"),
        malformed={"answers": {"no-such-question": "A"}},
        sent_back=lambda d: {"answers": d["answers"]},
        form=lambda answer: dict(answer["answers"]),
    ),
}


def _among_items() -> list[str]:
    return [u.slug for u in protocols_all() if u.has_screening and u.attention_page != "judging:attention"]


def test_every_protocol_with_screening_has_an_oracle_driver():
    units = [u for u in protocols_all() if u.has_screening]
    assert {u.slug for u in units} - {"absolute"} <= set(DRIVERS)
    assert set(_among_items()) == set(DRIVERS)  # the absolute check is the one with its own page


class Judge:
    """One judge's API and page clients on one study, and the three targets: a waiting attention
    check, an unanswered control and an unanswered genuine item."""

    def __init__(self, *, slug: str, owner, add_judge) -> None:
        self.slug, self.driver, self.unit = slug, DRIVERS[slug], protocol_get(slug)
        study = study_with_data(owner=owner, n_originals=4, systems=self.driver.systems, name=f"Oracle {slug}")
        self.judge = add_judge(study, "oracle-judge")
        design_update(
            study=study,
            changes={**self.driver.design, "seed": 5, "control_counts": {"identical": 1, "random": 1, "unigram": 0}},
        )
        study_judging_open(study=study)
        screening.screening_settings_update(
            study=study, changes={"attention_count": 2, "attention_policy": "warn", "attention_max_failures": 9}
        )
        self.study = Study.objects.get(pk=study.pk)
        self.api, self.client = APIClient(), Client()
        self.api.force_authenticate(self.judge)
        self.client.force_login(self.judge)
        self.client.post(f"/judge/studies/{self.study.pk}/instructions/")
        self.base = f"/api/judging/studies/{self.study.pk}/"
        self.first = self.api.get(self.base + self.driver.next_path).json()  # plans the checks
        assignment = Assignment.objects.get(study=self.study, judge=self.judge)
        items = self.unit.item_model.objects.filter(assignment=assignment, done_at__isnull=True).order_by("position")
        self.targets = {
            "check": AttentionCheck.objects.filter(assignment=assignment).order_by("after_done", "id").first().token,
            "control": items.filter(is_control=True).first().token,
            "genuine": items.filter(is_control=False).first().token,
        }

    def entry(self, token: str) -> dict:
        response = self.api.get(self.base + self.driver.detail_path.format(token=token))
        assert response.status_code == 200, (token, response.content)
        return response.json()

    def submit(self, token: str, answer: dict, *, key: str, stamp: str | None = None):
        payload = {
            self.driver.token_field: token,
            "key": key,
            "serve_stamp": serve_stamp_make(token) if stamp is None else stamp,
            **answer,
        }
        return self.api.post(self.base + self.driver.submit_path, payload, format="json")

    def post_page(self, token: str, answer: dict, *, key: str, stamp: str | None = None):
        form = {"token": token, "key": key, "serve": serve_stamp_make(token) if stamp is None else stamp}
        return self.client.post(f"/judge/studies/{self.study.pk}/{self.driver.page}/submit/", {**form, **answer})

    def set_status(self, status: str) -> None:
        Study.objects.filter(pk=self.study.pk).update(status=status)
        self.study.refresh_from_db()


@pytest.fixture(params=sorted(DRIVERS))
def oracle(request, researcher, add_judge) -> Judge:
    return Judge(slug=request.param, owner=researcher, add_judge=add_judge)


def _shape(response) -> tuple:
    """Status, body keys, per-field error keys and the detail with numbers blanked (a span's
    offsets name the text's length)."""
    body = response.json()
    detail = re.sub(r"\d+", "N", str(body.get("detail", "")))
    return response.status_code, sorted(body), sorted(body.get("errors") or {}), detail


def _alike(answers: dict[str, Any], what: str) -> None:
    first = next(iter(answers.values()))
    assert all(a == first for a in answers.values()), f"{what}: a check answers otherwise: {answers}"


def test_a_refused_submission_reads_the_same_for_a_check_a_control_and_an_item(oracle):
    d, entries = oracle.driver, {n: oracle.entry(t) for n, t in oracle.targets.items()}
    valid = {n: d.valid(entries[n], oracle.first) for n in entries}
    cases: dict[str, Callable[[str, str], Any]] = {
        "malformed and forged": lambda n, t: oracle.submit(t, d.malformed, key=f"bad-{n}-001", stamp="forged"),
        "forged stamp": lambda n, t: oracle.submit(t, valid[n], key=f"bad-{n}-002", stamp="forged"),
        "stamp of another item": lambda n, t: oracle.submit(
            t, valid[n], key=f"bad-{n}-003", stamp=serve_stamp_make("someone-else-token")
        ),
        "bad key": lambda n, t: oracle.submit(t, valid[n], key="bad key!!"),
        "attention side door": lambda n, t: oracle.api.post(
            oracle.base + "attention/", {"token": t, "value": 1}, format="json"
        ),
    }
    for case, send in cases.items():
        answers = {n: send(n, t) for n, t in oracle.targets.items()}
        _alike({n: r.content if case != "malformed and forged" else _shape(r) for n, r in answers.items()}, case)
        assert next(iter(answers.values())).status_code in (400, 409), case
    oracle.set_status(StudyStatus.CLOSED)
    closed = {n: oracle.submit(t, valid[n], key=f"closed-{n}-1") for n, t in oracle.targets.items()}
    _alike({n: (r.status_code, r.content) for n, r in closed.items()}, "closed study")
    assert closed["check"].status_code == 409
    oracle.set_status(StudyStatus.OPEN)
    assert not AttentionCheck.objects.filter(token=oracle.targets["check"], answered_at__isnull=False).exists()


def test_a_valid_submission_its_revisions_replays_and_readback_are_the_same_for_a_check(oracle):
    d = oracle.driver
    entries = {n: oracle.entry(t) for n, t in oracle.targets.items()}
    first = {n: d.valid(entries[n], oracle.first) for n in entries}
    second = {n: d.other(entries[n], oracle.first) for n in entries}
    created = {n: oracle.submit(t, first[n], key=f"one-{n}-key") for n, t in oracle.targets.items()}
    _alike(
        {n: (r.status_code, sorted(r.json()), r.json()["revision"], r.json()["created"]) for n, r in created.items()},
        "first",
    )
    assert created["check"].status_code == 201 and created["check"].json()["revision"] == 1
    again = {n: oracle.submit(t, second[n], key=f"two-{n}-key") for n, t in oracle.targets.items()}
    _alike({n: (r.status_code, sorted(r.json()), r.json()["revision"]) for n, r in again.items()}, "resubmission")
    assert again["check"].json()["revision"] == 2
    replay = {n: oracle.submit(t, second[n], key=f"two-{n}-key") for n, t in oracle.targets.items()}
    _alike({n: (r.status_code, r.json()["revision"], r.json()["created"]) for n, r in replay.items()}, "replay")
    assert replay["check"].status_code == 200
    reused = {n: oracle.submit(t, first[n], key=f"two-{n}-key") for n, t in oracle.targets.items()}
    _alike({n: (r.status_code, r.content) for n, r in reused.items()}, "key reused")
    assert reused["check"].status_code == 409
    older = {n: oracle.submit(t, first[n], key=f"one-{n}-key") for n, t in oracle.targets.items()}
    _alike({n: (r.status_code, r.json()["revision"], r.json()["created"]) for n, r in older.items()}, "older key")
    assert (older["check"].status_code, older["check"].json()["revision"]) == (200, 1)
    across = oracle.submit(oracle.targets["genuine"], second["genuine"], key="two-check-key")  # the check's key
    assert across.status_code == 409
    for n, t in oracle.targets.items():
        back = oracle.entry(t)
        assert back["revision"] == 2, (n, back)
        assert d.sent_back(back) == d.sent_back({**back, **second[n]}), (n, back)  # what was sent last
    readbacks = {n: (sorted(oracle.entry(t)), oracle.entry(t)["revision"]) for n, t in oracle.targets.items()}
    _alike(readbacks, "readback")


def test_kept_proposals_read_back_as_kept_for_a_check_too(oracle):
    """What the judge sent, ``proposed`` flags included, is what a readback returns (ESA: the
    proposals a judge keeps stay ``proposed: true``; the other protocols have none)."""
    d = oracle.driver
    for n, t in oracle.targets.items():
        sent = d.valid(oracle.entry(t), oracle.first)
        assert oracle.submit(t, sent, key=f"kept-{n}-key").status_code == 201
        assert d.sent_back(oracle.entry(t)) == d.sent_back({**oracle.entry(t), **sent}), n


def test_the_page_refuses_and_takes_a_check_as_it_does_an_item(oracle):
    d = oracle.driver
    entries = {n: oracle.entry(t) for n, t in oracle.targets.items()}
    forms = {n: d.form(d.valid(entries[n], oracle.first)) for n in entries}

    def seen(response) -> tuple:
        html = response.content.decode()
        return response.status_code, response.get("Location"), tuple(m for m in PAGE_MESSAGES if m in html)

    cases: dict[str, Callable[[str, str], Any]] = {
        "forged stamp": lambda n, t: oracle.post_page(t, forms[n], key=f"page-{n}-01", stamp="forged"),
        "malformed and forged": lambda n, t: oracle.post_page(t, d.form(d.malformed), key=f"page-{n}-02", stamp="x"),
        "bad key": lambda n, t: oracle.post_page(t, forms[n], key="bad key!!"),
    }
    for case, send in cases.items():
        answers = {n: seen(send(n, t)) for n, t in oracle.targets.items()}
        _alike(answers, f"page: {case}")
        assert answers["check"][0] == 400, case
        assert answers["check"][2] or case == "malformed and forged", case  # the refusal is named
    oracle.set_status(StudyStatus.CLOSED)
    _alike({n: seen(oracle.post_page(t, forms[n], key=f"page-{n}-03")) for n, t in oracle.targets.items()}, "closed")
    oracle.set_status(StudyStatus.OPEN)
    for key in ("page-04", "page-05"):  # two answers: revisions 1 and 2
        _alike({n: seen(oracle.post_page(t, forms[n], key=f"{key}-{n}")) for n, t in oracle.targets.items()}, key)
    _alike({n: oracle.entry(t)["revision"] for n, t in oracle.targets.items()}, "page revisions")
    assert oracle.entry(oracle.targets["check"])["revision"] == 2
    revise = {
        n: oracle.client.get(f"/judge/studies/{oracle.study.pk}/{d.page}/{t}/").status_code
        for n, t in oracle.targets.items()
    }
    _alike(revise, "revise page")


def test_previous_links_and_totals_do_not_skip_or_leave_out_a_check(oracle):
    d, served, checks_seen = oracle.driver, [], 0
    while True:
        nxt = oracle.api.get(oracle.base + d.next_path).json()
        entry = nxt[d.entry_key]
        if entry is None:
            break
        assert (nxt["done"], nxt["total"]) == (entry["done"], entry["total"]), "next answer counts ≠ the item's"
        assert entry["previous"] == (served[-1] if served else None), f"position {entry['position']}"
        assert entry["position"] == len(served) + 1
        checks_seen += AttentionCheck.objects.filter(token=entry["token"]).exists()
        assert oracle.submit(entry["token"], d.valid(entry, nxt), key=f"walk-{len(served):04d}").status_code == 201
        served.append(entry["token"])
        assert oracle.entry(entry["token"])["previous"] == (served[-2] if len(served) > 1 else None)
    assert checks_seen == 2 and nxt["done"] == nxt["total"] == len(served)
    done_page = oracle.client.get(f"/judge/studies/{oracle.study.pk}/{d.page}/").content.decode()
    assert f"{len(served)} / {len(served)}" in done_page  # the end page counts what every item counted


def test_the_absolute_check_page_is_refused_after_close_like_an_item(researcher, add_judge):
    """The absolute protocol's checks are instructions on their own page (not blinded among
    items): after close the check's answer is refused as an item's is, and the next-item
    answer's counts are its item's."""
    study = study_with_data(owner=researcher, n_originals=4, systems=("alpha", "beta"), name="Oracle absolute")
    judge = add_judge(study, "abs-judge")
    design_update(study=study, changes={"seed": 5, "control_counts": {"identical": 1, "random": 1, "unigram": 0}})
    study_judging_open(study=study)
    screening.screening_settings_update(study=study, changes={"attention_count": 2, "attention_policy": "warn"})
    api = APIClient()
    api.force_authenticate(judge)
    base = f"/api/judging/studies/{study.pk}/"
    nxt = api.get(base + "items/next/").json()
    assert (nxt["done"], nxt["total"]) == (nxt["item"]["done"], nxt["item"]["total"])
    check = AttentionCheck.objects.filter(assignment__study=study).first()
    item = nxt["item"]
    criteria = JudgingDesign.objects.get(study=study).criteria
    scores = {c["slug"]: (scales.scale_values(c["scale"]) or [50])[0] for c in criteria}
    Study.objects.filter(pk=study.pk).update(status=StudyStatus.CLOSED)
    on_check = api.post(base + "attention/", {"token": check.token, "value": 1}, format="json")
    on_item = api.post(
        base + "judgments/",
        {"item": item["token"], "key": "closed-abs-1", "scores": scores, "serve_stamp": item["serve_stamp"]},
        format="json",
    )
    assert (on_check.status_code, on_check.json()["detail"]) == (on_item.status_code, on_item.json()["detail"])
    assert on_check.status_code == 409
