"""The protocol conformance suite's fixtures: every registered protocol (and a probe the suite
registers itself), a small study built for it, and a judge's answer through its own API.

A test of tests/conformance/ that asks for ``protocol`` runs once per unit of the registry,
read at collection time (:func:`pytest_generate_tests`), so a protocol added later is tested
without anyone listing it. What the suite cannot ask the unit sits in two small tables:
:data:`DESIGNS` (design fields, by slug) and :data:`ADAPTERS` (the judge's API and the
protocol's export and import, by unit class); a protocol missing from either fails with a
message that says what to add, never a skip.
"""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.enums import Role
from annotation.judging import scales
from annotation.judging.models import JudgingDesign
from annotation.judging.protocols.absolute.unit import AbsoluteProtocol
from annotation.judging.protocols.base import JudgingProtocol
from annotation.judging.protocols.esa.imports import esa_judgments_import
from annotation.judging.protocols.esa.unit import EsaProtocol
from annotation.judging.protocols.ranking.imports import rankings_import_file
from annotation.judging.protocols.ranking.unit import RankingProtocol
from annotation.judging.protocols.registry import protocol_get, protocols_all, register, unregister
from annotation.judging.protocols.side_by_side.unit import SideBySideProtocol
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from annotation.models import Study
from annotation.services.membership import study_member_add
from tests.factories import UserFactory, study_with_data

# --- the probe: a protocol the suite registers itself -----------------------------------------

#: Within the 16 characters of ``JudgingDesign.protocol``.
PROBE_SLUG = "test-probe"


class ProbeProtocol(AbsoluteProtocol):
    """A test-only protocol: the absolute one under a slug of its own. Registered only while
    the suite collects and runs its tests, it shows that whatever the registry holds is tested."""

    slug = PROBE_SLUG
    name = "conformance probe"
    label = "Conformance probe (tests only): absolute rating under another slug"


PROBE = ProbeProtocol()


@contextmanager
def probe_registered() -> Iterator[JudgingProtocol]:
    """The probe in the registry, and accepted by ``JudgingDesign.protocol`` (whose choices are
    the stored enum's), for the duration of the block; both are as before afterwards, so the
    rest of the test run (which checks that the registry equals the stored choices) never sees it."""
    field = JudgingDesign._meta.get_field("protocol")
    saved = field.choices
    protocols_all()  # the built-in units load first: the probe comes last, as a later package would
    register(PROBE)
    field.choices = [*saved, (PROBE.slug, PROBE.label)]
    try:
        yield PROBE
    finally:
        field.choices = saved
        unregister(PROBE)


def pytest_generate_tests(metafunc):
    """Every test that asks for ``protocol`` runs once per registered unit (the probe included)."""
    if "protocol" in metafunc.fixturenames:
        with probe_registered():
            slugs = [unit.slug for unit in protocols_all()]
        metafunc.parametrize("protocol_slug", slugs, ids=slugs)


@pytest.fixture
def protocol(protocol_slug) -> Iterator[JudgingProtocol]:
    """The unit under test (the probe registered while the test runs)."""
    with probe_registered():
        yield protocol_get(protocol_slug)


# --- what the suite cannot ask the unit: the design of a small study ----------------------------

NO_CONTROLS = {"identical": 0, "random": 0, "unigram": 0}

#: Design fields by protocol slug: what a small study of 3 originals × 2 systems needs beyond
#: the defaults. A protocol missing here fails with a message: add its design.
DESIGNS: dict[str, dict] = {
    "absolute": {},
    "comparison": {},
    "esa": {"esa_prefill": "none"},
    "ranking": {"ranking_k": 2},
    PROBE_SLUG: {},
}

SYSTEMS = ("alpha", "beta")
N_ORIGINALS = 3


def design_of(unit: JudgingProtocol, **changes) -> dict:
    if unit.slug not in DESIGNS:
        pytest.fail(
            f"protocol {unit.slug!r} is registered but the conformance suite does not know its design: "
            "add the protocol's design to the conformance suite (DESIGNS in tests/conformance/conftest.py)"
        )
    return {"protocol": unit.slug, "seed": 17, "control_counts": NO_CONTROLS, **DESIGNS[unit.slug], **changes}


_names = itertools.count(1)


def judge_add(study: Study, username: str) -> User:
    user = UserFactory(username=username)
    study_member_add(study=study, user=user, role=Role.JUDGE)
    return user


def study_build(
    unit: JudgingProtocol,
    owner: User,
    *,
    judges=("ann", "bob"),
    opened: bool = True,
    name: str | None = None,
    **design,
) -> Study:
    """A study of 3 originals × 2 systems judged with ``unit``, with ``judges``, opened unless
    ``opened`` is False. Studies built for one test share their texts (the factory's), so one
    study's export imports into another."""
    study = study_with_data(
        owner=owner, n_originals=N_ORIGINALS, systems=SYSTEMS, name=name or f"Conformance {next(_names)}"
    )
    for username in judges:
        judge_add(study, username)
    design_update(study=study, changes=design_of(unit, **design))
    if opened:
        study_judging_open(study=study)
    study.refresh_from_db()
    return study


# --- what the suite cannot ask the unit: the judge's API, the export and the import ------------


_keys = itertools.count(1)


def new_key() -> str:
    return f"conformance-key-{next(_keys):06d}"


@dataclass(frozen=True)
class Adapter:
    """How a judge answers one item of a protocol through its own API, and how its judgments
    leave (an export the researcher downloads) and come back (the protocol's import, if any)."""

    #: The judge's "next" endpoint and submit endpoint, under /api/judging/studies/<id>/.
    next_path: str
    submit_path: str
    #: The key of the served item in the "next" answer.
    item_key: str
    #: A valid answer to the served item: the submit body without token, key and stamp.
    answer: Callable[[Study, dict, dict], dict]
    #: The submit body's name of the item's token.
    token_field: str
    #: The researcher's export of the judgments (URL name) and its file name on re-import.
    export: str
    export_filename: str
    #: The protocol's own import of that export, ``f(*, study, data, filename)``; None: it has none.
    reimport: Callable[..., object] | None
    #: A valid training item as the researcher's API takes it.
    training_item: Callable[[Study], dict]
    #: A valid answer to a served training item: the ``scores`` of the judge's training answer.
    training_answer: Callable[[Study, dict], dict]
    #: The export turned into what the import reads, where the two differ (the import tests
    #: start from a file the import takes; the round-trip test sends the export as it is).
    as_import: Callable[[bytes], bytes] = lambda data: data


def _absolute_answer(study: Study, served: dict, item: dict) -> dict:
    criteria = JudgingDesign.objects.get(study=study).criteria
    return {"scores": {c["slug"]: scales.scale_unit(c["scale"]).attention_values[0] for c in criteria}}


def _absolute_training(study: Study) -> dict:
    c = JudgingDesign.objects.get(study=study).criteria[0]
    return {
        "original": "Training original.",
        "candidate": "Training paraphrase.",
        "expected": {c["slug"]: scales.scale_unit(c["scale"]).attention_values[0]},
    }


def _tidy_as_long(data: bytes) -> bytes:
    """The tidy export's rows in the judgments import's long format (its ``score`` is ``value``)."""
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["judge", "original_id", "system", "criterion", "value"])
    for r in rows:
        writer.writerow([r["judge"], r["original_id"], r["system"], r["criterion"], r["score"]])
    return out.getvalue().encode()


def _shared_import(*, study: Study, data: bytes, filename: str):
    from annotation.judging.protocols.absolute.imports import judgments_import_file

    return judgments_import_file(study=study, data=data, filename=filename)


ADAPTERS: dict[type, Adapter] = {
    AbsoluteProtocol: Adapter(
        next_path="items/next/",
        submit_path="judgments/",
        item_key="item",
        token_field="item",
        answer=_absolute_answer,
        export="judging:export_tidy",
        export_filename="tidy.csv",
        reimport=_shared_import,
        training_item=_absolute_training,
        training_answer=lambda study, shown: _absolute_answer(study, shown, shown)["scores"],
        as_import=_tidy_as_long,
    ),
    SideBySideProtocol: Adapter(
        next_path="pairs/next/",
        submit_path="comparisons/",
        item_key="pair",
        token_field="pair",
        answer=lambda study, served, item: {"answers": {q["slug"]: "A" for q in served["questions"]}},
        export="judging:export_comparisons",
        export_filename="comparisons.csv",
        reimport=None,
        training_item=lambda study: {
            "original": "Training original.",
            "a": "Training A.",
            "b": "Training B.",
            "expected": {"preference": "A"},
        },
        training_answer=lambda study, shown: {"preference": "A"},
    ),
    EsaProtocol: Adapter(
        next_path="esa/next/",
        submit_path="esa/judgments/",
        item_key="item",
        token_field="item",
        answer=lambda study, served, item: {"spans": [], "score": 70},
        export="judging:export_esa_jsonl",
        export_filename="esa-spans.jsonl",
        reimport=esa_judgments_import,
        training_item=lambda study: {
            "original": "Training original.",
            "candidate": "Training paraphrase.",
            "expected": {"score_min": 60, "score_max": 90, "major": False},
        },
        training_answer=lambda study, shown: {"spans": [], "score": 70},
    ),
    RankingProtocol: Adapter(
        next_path="rankings/next/",
        submit_path="rankings/",
        item_key="ranking",
        token_field="ranking",
        answer=lambda study, served, item: {
            "order": [c["place"] for c in item["candidates"]],
            **({"scores": {str(c["place"]): 50 for c in item["candidates"]}} if item.get("asks_scores") else {}),
        },
        export="judging:export_rankings_jsonl",
        export_filename="rankings.jsonl",
        reimport=rankings_import_file,
        training_item=lambda study: {
            "original": "Training original.",
            "candidate": "One.",
            "expected": {"candidates": ["Two."], "reference": [2, 1]},
        },
        training_answer=lambda study, shown: {"order": [c["place"] for c in shown["candidates"]]},
    ),
}


def adapter_of(unit: JudgingProtocol) -> Adapter:
    """The unit's adapter, by its class or the nearest base class the suite knows (the probe,
    an absolute unit under another slug, answers as the absolute protocol does)."""
    for cls in type(unit).__mro__:
        if cls in ADAPTERS:
            return ADAPTERS[cls]
    pytest.fail(
        f"protocol {unit.slug!r} ({type(unit).__name__}) is registered but the conformance suite cannot "
        "answer it: add the protocol's adapter to the conformance suite (ADAPTERS in tests/conformance/conftest.py)"
    )


# --- a judge at work ----------------------------------------------------------------------------


def api_for(user: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def study_url(study: Study, path: str = "") -> str:
    return f"/api/judging/studies/{study.pk}/{path}"


def next_served(unit: JudgingProtocol, client: APIClient, study: Study):
    """The judge's "next" answer (the response)."""
    return client.get(study_url(study, adapter_of(unit).next_path))


def answer_next(unit: JudgingProtocol, client: APIClient, study: Study, *, active_seconds: float = 4.0):
    """Answer the judge's next item through the protocol's own API with a valid answer.
    Returns (the served item, the submit response); the item is None when nothing was served
    (then the response is the "next" one)."""
    adapter = adapter_of(unit)
    served = client.get(study_url(study, adapter.next_path))
    if served.status_code != 200 or served.json().get(adapter.item_key) is None:
        return None, served
    body = served.json()
    item = body[adapter.item_key]
    submit = {
        adapter.token_field: item["token"],
        "key": new_key(),
        "serve_stamp": item["serve_stamp"],
        "active_seconds": active_seconds,
        **adapter.answer(study, body, item),
    }
    return item, client.post(study_url(study, adapter.submit_path), submit, format="json")


def answer_all(unit: JudgingProtocol, user: User, study: Study) -> int:
    """Answer every item of ``user``'s assignment; returns how many were stored."""
    client = api_for(user)
    n = 0
    while True:
        item, r = answer_next(unit, client, study)
        if item is None:
            return n
        assert r.status_code == 201, (unit.slug, r.status_code, r.content[:300])
        n += 1


def export_bytes(unit: JudgingProtocol, researcher: User, study: Study) -> bytes:
    """The protocol's judgments export as the researcher downloads it (a page: their session)."""
    client = Client()
    client.force_login(researcher)
    r = client.get(reverse(adapter_of(unit).export, kwargs={"study_id": study.pk}))
    assert r.status_code == 200, (unit.slug, r.status_code)
    return b"".join(r.streaming_content) if r.streaming else r.content
