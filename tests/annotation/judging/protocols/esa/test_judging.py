"""Error span annotation: opening (candidates, controls, aligner proposals), span and score
checks, submission on the shared core (idempotent, revisions), the judge's page and API,
QC rows and the exports."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from annotation.judging.errors import CannotOpen, JudgmentInvalid, KeyReused
from annotation.judging.models import Assignment
from annotation.judging.protocols.esa import services as esa
from annotation.judging.protocols.esa.imports import esa_judgments_import
from annotation.judging.protocols.esa.models import EsaItem, EsaJudgment
from annotation.judging.protocols.esa.unit import ESA
from annotation.judging.protocols.registry import protocol_get
from annotation.judging.services.assignments import assignment_ensure_for_judge
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open, study_judging_reset
from metrics.core.spans.offsets import span_problem
from metrics.core.spans.prefill import propose_spans
from metrics.core.spans.words import word_offsets
from tests.annotation.judging.conftest import new_key
from tests.factories import study_with_data

pytestmark = pytest.mark.django_db

SYSTEMS = ("alpha", "beta")


def _open(study, **changes):
    design_update(study=study, changes={"protocol": "esa", "seed": 7, **changes})
    study_judging_open(study=study)
    study.refresh_from_db()
    return study


@pytest.fixture
def esa_study(researcher, add_judge):
    """3 originals × 2 systems, judges ann and bob, an identical copy and an unrelated control per original."""
    study = study_with_data(owner=researcher, n_originals=3, systems=SYSTEMS, name="ESA study")
    add_judge(study, "ann")
    add_judge(study, "bob")
    return _open(study, control_counts={"identical": 1, "random": 1, "unigram": 0}, esa_prefill="aligner")


def _items(study, username):
    return list(
        EsaItem.objects.filter(assignment__study=study, assignment__judge__username=username)
        .select_related("candidate__system", "candidate__original")
        .order_by("position")
    )


def _judge(django_user_model, name):
    return django_user_model.objects.get(username=name)


def test_the_unit_is_registered_as_esa():
    assert protocol_get("esa") is ESA


def test_opening_gives_every_judge_every_candidate_and_the_controls_in_a_seeded_order(esa_study):
    ann, bob = _items(esa_study, "ann"), _items(esa_study, "bob")
    assert len(ann) == len(bob) == 3 * 2 + 3 * 2
    for it in ann:
        assert it.is_control == it.candidate.system.name.startswith("control:")
    assert sum(it.is_control for it in ann) == 6
    assert [it.candidate_id for it in ann] != [it.candidate_id for it in bob]
    assert Assignment.objects.get(study=esa_study, judge__username="ann").n_items == len(ann)
    assert ESA.items_remaining(assignment=ann[0].assignment) == len(ann)


def test_proposals_are_the_unaligned_words_of_the_alignment_they_came_from(esa_study):
    seen = 0
    for it in _items(esa_study, "ann"):
        original, candidate = it.candidate.original.text, it.candidate.text
        proposal = propose_spans(original, candidate)
        links = proposal.alignment.sure | proposal.alignment.possible
        aligned_o, aligned_c = {i for i, _ in links}, {j for _, j in links}
        ow, cw = word_offsets(original), word_offsets(candidate)
        covered = {"candidate": set(), "original": set()}
        for s in it.proposed:
            assert s["severity"] == "minor"
            assert s["category"] == ("addition" if s["side"] == "candidate" else "omission")
            text = candidate if s["side"] == "candidate" else original
            assert text[s["start"] : s["end"]].strip() == text[s["start"] : s["end"]]
            covered[s["side"]].update(range(s["start"], s["end"]))
            seen += 1
        # every unaligned word (not punctuation) is inside a proposal, and no aligned word is
        for side, words, aligned in (("candidate", cw, aligned_c), ("original", ow, aligned_o)):
            text = candidate if side == "candidate" else original
            for k, (a, b) in enumerate(words):
                if not any(ch.isalnum() for ch in text[a:b]):
                    continue
                assert (a in covered[side]) == (k not in aligned), (side, text[a:b])
        assert it.proposed == [esa.span_dict(s) for s in proposal.spans]
    assert seen > 0


def test_identical_copies_get_no_proposal(esa_study):
    for it in _items(esa_study, "ann"):
        if it.candidate.text == it.candidate.original.text:
            assert it.proposed == []


def test_no_proposals_without_prefill(researcher, add_judge):
    study = study_with_data(owner=researcher, n_originals=2, systems=SYSTEMS, name="No prefill")
    add_judge(study, "ann")
    _open(study, control_counts={"identical": 0, "random": 0, "unigram": 0})
    assert all(it.proposed == [] for it in _items(study, "ann"))


def test_opening_without_candidates_is_refused(researcher, add_judge):
    study = study_with_data(owner=researcher, n_originals=0, systems=SYSTEMS, name="Empty")
    add_judge(study, "ann")
    design_update(study=study, changes={"protocol": "esa"})
    with pytest.raises(CannotOpen):
        study_judging_open(study=study)


def test_a_submission_is_stored_idempotently_and_a_second_is_a_revision(esa_study, django_user_model):
    ann = _judge(django_user_model, "ann")
    entry = esa.esa_item_next_for_judge(assignment=Assignment.objects.get(study=esa_study, judge=ann))
    end = len(entry.candidate.split()[0])
    spans = [
        {"side": "candidate", "start": 0, "end": end, "severity": "major", "category": "fluency"},
        {"side": "candidate", "start": 0, "end": 0, "severity": "minor", "missing": True},
    ]
    key = new_key()
    j1, created = esa.esa_submit(
        study=esa_study, judge=ann, token=entry.token, key=key, spans=spans, score=35, serve_stamp=entry.serve_stamp
    )
    assert created and j1.score == 35 and j1.revision == 1 and len(j1.spans) == 2
    j2, created = esa.esa_submit(
        study=esa_study, judge=ann, token=entry.token, key=key, spans=spans, score=35, serve_stamp=entry.serve_stamp
    )
    assert not created and j2.pk == j1.pk
    with pytest.raises(KeyReused):
        esa.esa_submit(
            study=esa_study, judge=ann, token=entry.token, key=key, spans=[], score=35, serve_stamp=entry.serve_stamp
        )
    j3, created = esa.esa_submit(
        study=esa_study, judge=ann, token=entry.token, key=new_key(), spans=[], score=90, serve_stamp=entry.serve_stamp
    )
    assert created and j3.revision == 2
    assert list(
        EsaJudgment.objects.filter(item__token=entry.token, is_latest=True).values_list("score", flat=True)
    ) == [90]
    again = esa.esa_item_for_judge(study=esa_study, judge=ann, token=entry.token)
    assert again.is_revision and again.score == 90 and again.spans == []


@pytest.mark.parametrize(
    ("spans", "score", "needle"),
    [
        ([{"side": "candidate", "start": 0, "end": 999, "severity": "minor"}], 50, "not inside the text"),
        ([{"side": "nowhere", "start": 0, "end": 1, "severity": "minor"}], 50, "side must be"),
        ([{"side": "candidate", "start": 0, "end": 1, "severity": "fatal"}], 50, "severity must be"),
        (
            [{"side": "candidate", "start": 0, "end": 1, "severity": "minor", "category": "nope"}],
            50,
            "unknown category",
        ),
        ([{"side": "candidate", "start": 0, "end": 1, "severity": "minor"}] * 2, 50, "marked twice"),
        ("not a list", 50, "spans must be a list"),
        ([], None, "Set the score"),
        ([], 101, "from 0 to 100"),
        ([], "abc", "from 0 to 100"),
    ],
)
def test_bad_spans_and_scores_are_refused_with_a_clear_message(esa_study, django_user_model, spans, score, needle):
    ann = _judge(django_user_model, "ann")
    entry = esa.esa_item_next_for_judge(assignment=Assignment.objects.get(study=esa_study, judge=ann))
    with pytest.raises(JudgmentInvalid) as err:
        esa.esa_submit(
            study=esa_study,
            judge=ann,
            token=entry.token,
            key=new_key(),
            spans=spans,
            score=score,
            serve_stamp=entry.serve_stamp,
        )
    assert needle in err.value.message
    assert not EsaJudgment.objects.exists()


@pytest.mark.parametrize(
    "text", ["Cafe\u0301 au lait 😀 with 👩‍👩‍👧 family.", "هذا نصٌّ عربيٌّ قصير.", "naïve résumé 𝒳 done"]
)
def test_unicode_spans_round_trip_and_a_split_character_is_refused(researcher, add_judge, django_user_model, text):
    study = study_with_data(owner=researcher, n_originals=1, systems=("alpha",), name="Unicode")
    cand = study.originals.first().candidates.first()
    cand.text = text
    cand.save()
    add_judge(study, "ann")
    _open(study, control_counts={"identical": 0, "random": 0, "unigram": 0})
    ann = _judge(django_user_model, "ann")
    entry = esa.esa_item_next_for_judge(assignment=Assignment.objects.get(study=study, judge=ann))
    words = word_offsets(text)
    (a, _), (_, b) = words[1], words[2]
    spans = [{"side": "candidate", "start": a, "end": b, "severity": "minor", "category": None}]
    judgment, _ = esa.esa_submit(
        study=study, judge=ann, token=entry.token, key=new_key(), spans=spans, score=60, serve_stamp=entry.serve_stamp
    )
    judgment.refresh_from_db()
    assert text[judgment.spans[0]["start"] : judgment.spans[0]["end"]] == text[a:b]
    marks = [i for i, ch in enumerate(text) if ch in "\u0301\u064c\u0651" or ch == "\u200d"]
    if marks:  # a span ending just before a combining mark or inside an emoji sequence splits a character
        with pytest.raises(JudgmentInvalid, match="splits the character"):
            esa.esa_submit(
                study=study,
                judge=ann,
                token=entry.token,
                key=new_key(),
                spans=[{"side": "candidate", "start": 0, "end": marks[0], "severity": "minor"}],
                score=60,
                serve_stamp=entry.serve_stamp,
            )


def _annotate_all(study, judge, *, score=70, major_on_controls=False):
    assignment = Assignment.objects.get(study=study, judge=judge)
    while (entry := esa.esa_item_next_for_judge(assignment=assignment)) is not None:
        item = EsaItem.objects.select_related("candidate__system").get(token=entry.token)
        kind = item.candidate.system.name
        spans = [dict(s, proposed=True) for s in item.proposed]
        sc = score
        if "random" in kind:
            sc = 5 if not major_on_controls else 80
        if major_on_controls and "identical" in kind:
            spans = [{"side": "candidate", "start": 0, "end": len(entry.candidate.split()[0]), "severity": "major"}]
        esa.esa_submit(
            study=study,
            judge=judge,
            token=entry.token,
            key=new_key(),
            spans=spans,
            score=sc,
            serve_stamp=entry.serve_stamp,
        )


def test_qc_rows_check_the_controls_per_judge(esa_study, django_user_model):
    _annotate_all(esa_study, _judge(django_user_model, "ann"))
    _annotate_all(esa_study, _judge(django_user_model, "bob"), major_on_controls=True)
    rows = {r["judge"]: r for r in ESA.qc_rows(study=esa_study)}
    assert rows["ann"]["passes"] and rows["ann"]["n"] == 6 and rows["ann"]["passed"] == 6
    assert not rows["bob"]["passes"] and rows["bob"]["passed"] == 0
    assert any("identical" in f for f in rows["bob"]["failures"])


def test_exports_hold_the_stored_spans(esa_study, django_user_model, client, researcher):
    _annotate_all(esa_study, _judge(django_user_model, "ann"))
    client.force_login(researcher)
    lines = b"".join(client.get(f"/studies/{esa_study.pk}/judging/export/esa-spans.jsonl").streaming_content)
    rows = [json.loads(x) for x in lines.decode().splitlines()]
    stored = {
        (j.item.candidate.original.external_id, j.item.candidate.system.name): j
        for j in EsaJudgment.objects.filter(study=esa_study).select_related(
            "item__candidate__original", "item__candidate__system"
        )
    }
    assert len(rows) == len(stored) == 12
    for r in rows:
        j = stored[(r["original_id"], r["system"])]
        assert r["score"] == j.score
        assert [(s["side"], s["start"], s["end"], s["severity"]) for s in r["error_spans"] if not s.get("missing")] == [
            (s["side"], s["start"], s["end"], s["severity"]) for s in j.spans if not s["missing"]
        ]
    csv_text = b"".join(client.get(f"/studies/{esa_study.pk}/judging/export/esa.csv").streaming_content).decode()
    assert csv_text.splitlines()[0].startswith("judge,position,original_id,system")
    assert len(csv_text.strip().splitlines()) == 13
    client.force_login(_judge(django_user_model, "ann"))
    assert client.get(f"/studies/{esa_study.pk}/judging/export/esa.csv").status_code in (302, 403, 404)


# --- the judge's page and API -----------------------------------------------------------


def _start(client, study, user):
    client.force_login(user)
    client.post(f"/judge/studies/{study.pk}/instructions/")


def _hidden(page: str, name: str) -> str:
    import re

    return re.search(rf'name="{name}"[^>]*value="([^"]*)"', page).group(1)


def test_the_page_submits_and_resumes(esa_study, django_user_model, client):
    ann = _judge(django_user_model, "ann")
    _start(client, esa_study, ann)
    page = client.get(f"/judge/studies/{esa_study.pk}/esa/").content.decode()
    assert 'id="esa-data"' in page and "judging/esa/esa.js" in page
    token = _hidden(page, "token")
    bad = client.post(
        f"/judge/studies/{esa_study.pk}/esa/submit/",
        {"token": token, "serve": _hidden(page, "serve"), "key": _hidden(page, "key"), "spans": "[]", "score": ""},
    )
    assert bad.status_code == 400 and "Set the score" in bad.content.decode()
    ok = client.post(
        f"/judge/studies/{esa_study.pk}/esa/submit/",
        {
            "token": token,
            "serve": _hidden(page, "serve"),
            "key": new_key(),
            "score": "42",
            "spans": json.dumps([{"side": "candidate", "start": 0, "end": 1, "severity": "minor"}]),
        },
    )
    assert ok.status_code == 302
    assert EsaJudgment.objects.get(item__token=token).score == 42
    nxt = client.get(f"/judge/studies/{esa_study.pk}/esa/").content.decode()
    assert _hidden(nxt, "token") != token
    revise = client.get(f"/judge/studies/{esa_study.pk}/esa/{token}/").content.decode()
    assert 'value="42"' in revise


def test_the_arabic_page_runs_right_to_left_and_the_texts_take_their_own_direction(
    researcher, add_judge, django_user_model, client
):
    study = study_with_data(owner=researcher, n_originals=2, systems=SYSTEMS, name="Arabic")
    study.language = "ar"
    study.save()
    add_judge(study, "ann")
    _open(study, control_counts={"identical": 0, "random": 0, "unigram": 0})
    _start(client, study, _judge(django_user_model, "ann"))
    page = client.get(f"/judge/studies/{study.pk}/esa/").content.decode()
    assert '<html lang="ar" dir="rtl">' in page
    # the study's own sentences are isolated: an English one on this page still runs left to right (issue 42)
    assert 'id="esa-candidate" data-side="candidate" dir="auto"' in page


def test_the_api_gives_the_next_item_and_takes_spans_idempotently(esa_study, django_user_model):
    api = APIClient()
    api.force_authenticate(_judge(django_user_model, "ann"))
    nxt = api.get(f"/api/judging/studies/{esa_study.pk}/esa/next/").json()
    assert not nxt["finished"] and nxt["total"] == 12 and "fluency" in nxt["categories"]
    item = nxt["item"]
    assert set(item) >= {"token", "original", "candidate", "spans", "score", "serve_stamp"}
    body = {
        "item": item["token"],
        "key": "esa-api-key-1",
        "score": 55,
        "serve_stamp": item["serve_stamp"],
        "spans": [{"side": "original", "start": 0, "end": len(item["original"].split()[0]), "severity": "major"}],
    }
    r1 = api.post(f"/api/judging/studies/{esa_study.pk}/esa/judgments/", body, format="json")
    assert r1.status_code == 201 and r1.json()["revision"] == 1 and r1.json()["done"] == 1
    r2 = api.post(f"/api/judging/studies/{esa_study.pk}/esa/judgments/", body, format="json")
    assert r2.status_code == 200 and not r2.json()["created"]
    bad = api.post(
        f"/api/judging/studies/{esa_study.pk}/esa/judgments/",
        body | {"key": "esa-api-key-2", "spans": [{"side": "candidate", "start": 5, "end": 2, "severity": "minor"}]},
        format="json",
    )
    assert bad.status_code == 400 and "span 1" in json.dumps(bad.json())
    detail = api.get(f"/api/judging/studies/{esa_study.pk}/esa/items/{item['token']}/").json()
    assert detail["score"] == 55 and detail["revision"] == 1
    other = APIClient()
    other.force_authenticate(_judge(django_user_model, "bob"))
    assert other.get(f"/api/judging/studies/{esa_study.pk}/esa/items/{item['token']}/").status_code == 404


# --- importing span files -----------------------------------------------------------------


def test_a_span_file_is_imported_all_or_nothing_with_lines_and_columns(esa_study, django_user_model):
    from annotation.importing.reading import StudyImportError
    from annotation.models import Candidate

    cand = Candidate.objects.select_related("original").get(
        original__study=esa_study, original__external_id="s0", system__name="alpha"
    )
    good = {
        "judge": "ann",
        "original_id": "s0",
        "system": "alpha",
        "score": 61,
        "error_spans": [
            {"side": "candidate", "start": 0, "end": len(cand.text.split()[0]), "severity": "major"},
            {"missing": True, "severity": "minor"},
        ],
    }
    other = {"judge": "carol", "original_id": "s1", "system": "beta", "score": 20, "error_spans": []}
    bad = {
        "judge": "ann",
        "original_id": "s1",
        "system": "alpha",
        "score": 61,
        "error_spans": [{"side": "candidate", "start": 0, "end": 9999, "severity": "minor"}],
    }
    data = "\n".join(json.dumps(x) for x in (good, other, bad)).encode()
    with pytest.raises(StudyImportError) as err:
        esa_judgments_import(study=esa_study, data=data, filename="spans.jsonl")
    assert err.value.issues[0].line == 3 and "error_spans[0]" in (err.value.issues[0].column or "")
    assert not EsaJudgment.objects.exists()
    data = "\n".join(json.dumps(x) for x in (good, other)).encode()
    summary = esa_judgments_import(study=esa_study, data=data, filename="spans.jsonl")
    assert (summary.rows, summary.revisions, summary.judges_created) == (2, 0, 1)
    j = EsaJudgment.objects.get(judge__username="ann")
    assert j.source == "import" and j.score == 61 and j.item.candidate_id == cand.pk and j.item.done_at
    assert [(s["side"], s["start"], s["severity"], s["missing"]) for s in j.spans] == [
        ("candidate", 0, "major", False),
        ("candidate", 0, "minor", True),
    ]
    again = esa_judgments_import(study=esa_study, data=json.dumps(good | {"score": 30}).encode(), filename="b.jsonl")
    assert again.revisions == 1
    assert EsaJudgment.objects.get(judge__username="ann", is_latest=True).score == 30


def test_the_import_command_refuses_a_study_of_another_protocol(study, tmp_path):
    from django.core.management import CommandError, call_command

    path = tmp_path / "s.jsonl"
    path.write_text('{"judge": "x", "original_id": "s0", "system": "human", "score": 1, "error_spans": []}\n')
    with pytest.raises(CommandError, match="not judged with error span annotation"):
        call_command("import_esa_spans", str(path), "--study", study.name)


def test_the_qc_page_shows_the_control_checks_and_the_design_page_the_exports(
    esa_study, django_user_model, client, researcher
):
    _annotate_all(esa_study, _judge(django_user_model, "bob"), major_on_controls=True)
    client.force_login(researcher)
    html = client.get(f"/studies/{esa_study.pk}/judging/qc/").content.decode()
    assert "Error span control checks" in html and 'data-judge="bob"' in html and "flag-fail" in html
    design = client.get(f"/studies/{esa_study.pk}/judging/design/").content.decode()
    assert "esa-spans.jsonl" in design and "esa.csv" in design


def test_a_judge_added_late_gets_every_item_with_its_proposals(esa_study, add_judge):
    late = add_judge(esa_study, "cy")
    assignment = assignment_ensure_for_judge(study=esa_study, judge=late)
    items = _items(esa_study, "cy")
    assert assignment.joined_late and len(items) == assignment.n_items == 12
    ann = {it.candidate_id: it.proposed for it in _items(esa_study, "ann")}
    assert all(it.proposed == ann[it.candidate_id] for it in items)


def test_reset_is_refused_once_an_esa_judgment_exists(esa_study, django_user_model):
    ann = _judge(django_user_model, "ann")
    entry = esa.esa_item_next_for_judge(assignment=Assignment.objects.get(study=esa_study, judge=ann))
    esa.esa_submit(
        study=esa_study, judge=ann, token=entry.token, key=new_key(), spans=[], score=50, serve_stamp=entry.serve_stamp
    )
    with pytest.raises(CannotOpen):
        study_judging_reset(study=esa_study)
    assert EsaJudgment.objects.count() == 1


def test_a_released_participant_gives_back_unannotated_items(esa_study, django_user_model):
    ann = _judge(django_user_model, "ann")
    assignment = Assignment.objects.get(study=esa_study, judge=ann)
    entry = esa.esa_item_next_for_judge(assignment=assignment)
    esa.esa_submit(
        study=esa_study, judge=ann, token=entry.token, key=new_key(), spans=[], score=50, serve_stamp=entry.serve_stamp
    )
    assert ESA.assignment_release_unfinished(assignment=assignment) == 11
    assignment.refresh_from_db()
    assert assignment.n_items == 1 and ESA.items_remaining(assignment=assignment) == 0


def test_the_csv_export_neutralises_formulas(researcher, add_judge, django_user_model, client):
    import csv
    import io

    study = study_with_data(owner=researcher, n_originals=1, systems=("alpha",), name="Formulas")
    cand = study.originals.first().candidates.first()
    cand.text = '=HYPERLINK("x") said plainly'
    cand.save()
    add_judge(study, "ann")
    _open(study, control_counts={"identical": 0, "random": 0, "unigram": 0})
    _annotate_all(study, _judge(django_user_model, "ann"))
    client.force_login(researcher)
    text = b"".join(client.get(f"/studies/{study.pk}/judging/export/esa.csv").streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["candidate"].startswith("'=")


CLUSTER_ORIGINALS = (
    "My family 👩\u200d👩\u200d👧 went home to 🇪🇸 happily.",
    "We drank a cafe\u0301 in the old town 👍🏽.",
    "كَتَبَ الوَلَدُ الدَّرسَ فِي المَدرَسَةِ.",
    "The ❤️ of the city beats at night 🇪🇸.",
)


@pytest.fixture
def cluster_study(researcher, add_judge):
    """Originals and candidates with a ZWJ family, a flag, e + U+0301, a skin tone, Arabic
    with harakat; unigram controls built from them."""
    from tests.factories import CandidateFactory, OriginalFactory, SystemFactory

    study = study_with_data(owner=researcher, n_originals=0, systems=(), name="Clusters")
    system = SystemFactory(study=study, name="alpha")
    for n, text in enumerate(CLUSTER_ORIGINALS):
        original = OriginalFactory(study=study, external_id=f"c{n}", text=text)
        CandidateFactory(original=original, system=system, text=" ".join(reversed(text.split())))
    add_judge(study, "ann")
    return study


def test_an_aligner_prefilled_study_with_emoji_flags_and_combining_marks_opens(cluster_study):
    _open(cluster_study, control_counts={"identical": 1, "random": 1, "unigram": 2}, esa_prefill="aligner")
    items = _items(cluster_study, "ann")
    assert len(items) == 4 + 4 * 4
    unigrams = [it.candidate.text for it in items if it.candidate.system.name == "control:unigram"]
    assert unigrams and not any(" \u200d" in t or "🇪 🇸" in t or " \u064e" in t for t in unigrams)
    for it in items:
        texts = {"candidate": it.candidate.text, "original": it.candidate.original.text}
        for s in it.proposed:
            assert span_problem(texts[s["side"]], s["start"], s["end"]) is None
    assert any(it.proposed for it in items)


def test_an_aligner_refusal_opens_the_item_without_suggestions_not_a_500(cluster_study, monkeypatch):
    def refuse(original, candidate, **kwargs):
        raise ValueError("tokens2 holds ' \\u200d', which is not a non-empty token without spaces")

    monkeypatch.setattr(esa, "propose_spans", refuse)
    _open(cluster_study, control_counts={"identical": 1, "random": 0, "unigram": 1}, esa_prefill="aligner")
    items = _items(cluster_study, "ann")
    assert len(items) == 4 * 3 and all(it.proposed == [] for it in items)


def test_overlapping_spans_of_one_side_are_refused_naming_both(esa_study, django_user_model):
    api = APIClient()
    api.force_authenticate(_judge(django_user_model, "ann"))
    item = api.get(f"/api/judging/studies/{esa_study.pk}/esa/next/").json()["item"]
    body = {"item": item["token"], "key": "esa-overlap-1", "score": 40, "serve_stamp": item["serve_stamp"]}
    spans = [
        {"side": "candidate", "start": 0, "end": 8, "severity": "minor"},
        {"side": "original", "start": 0, "end": 8, "severity": "minor"},
        {"side": "candidate", "start": 5, "end": 12, "severity": "major"},
    ]
    bad = api.post(f"/api/judging/studies/{esa_study.pk}/esa/judgments/", body | {"spans": spans}, format="json")
    assert bad.status_code == 400
    message = json.dumps(bad.json())
    assert "spans 1 [0, 8) and 3 [5, 12) of the candidate overlap" in message
    assert not EsaJudgment.objects.exists()


def test_spans_that_touch_or_lie_on_different_sides_are_not_an_overlap():
    text = "one two three"
    clean = esa.spans_clean(
        spans=[
            {"side": "candidate", "start": 4, "end": 7, "severity": "major"},
            {"side": "candidate", "start": 0, "end": 4, "severity": "minor"},
            {"side": "original", "start": 2, "end": 9, "severity": "minor"},
            {"missing": True, "severity": "minor"},
        ],
        original=text,
        candidate=text,
        categories=[],
    )
    assert len(clean) == 4


@pytest.mark.parametrize("mode", [{}, {"judges_mode": "k", "judges_per_item": 1}])
def test_a_judge_added_to_an_esa_study_opened_with_no_judges_gets_every_item_as_a_sole_judge_would(
    researcher, add_judge, mode
):
    """The design's share of a sole judge is every item (fully crossed, or k per item with
    nobody else to share them): the absolute protocol's late judge gets the same."""
    study = study_with_data(owner=researcher, n_originals=3, systems=SYSTEMS, name="Field ESA")
    _open(study, control_counts={"identical": 1, "random": 1, "unigram": 0}, **mode)
    late = assignment_ensure_for_judge(study=study, judge=add_judge(study, "cy"))
    assert late.joined_late and late.n_items == len(_items(study, "cy")) == 12


def _csv(rows):
    return [[str(c) for c in r] for r in rows]


def test_progress_dashboard_and_csvs_count_esa_judgments(esa_study, django_user_model):
    from annotation.judging.selectors.export_rows import export_tidy_rows, export_wide_rows
    from annotation.judging.selectors.judge import studies_for_judge
    from annotation.judging.selectors.progress import study_progress
    from metrics.dashboard.selectors import dashboard_live

    ann = django_user_model.objects.get(username="ann")
    _annotate_all(esa_study, ann, score=70)
    progress = study_progress(study=esa_study)
    judges = {j["judge"]: j for j in progress["judges"]}
    assert (judges["ann"]["done"], judges["bob"]["done"]) == (12, 0)
    assert judges["ann"]["last_submitted_at"] is not None
    assert progress["judgments"] == 12 and progress["done"] == 12
    assert sum(s["rated"] for s in progress["systems"]) == 12
    assert {r["study"].pk: r["done"] for r in studies_for_judge(judge=ann)}[esa_study.pk] == 12
    live = dashboard_live(study=esa_study)
    assert live["totals"]["judgments"] == 12
    assert {j["judge"]: j["judgments"] for j in live["judges"]} == {"ann": 12, "bob": 0}
    assert live["coverage"]["items"] == 12 and live["coverage"]["coverage"] == 0.5  # one of two judges
    assert live["time"]["last_judgment_at"] is not None
    assert {r["judge"]: r["verdict"] for r in live["qc"]}["ann"] != "no data"
    tidy = _csv(export_tidy_rows(study=esa_study))
    assert len(tidy) == 1 + 12 * 2  # a score and a spans count per judgment
    header = tidy[0]
    scores = [r for r in tidy[1:] if r[header.index("criterion")] == "score"]
    assert {r[header.index("score")] for r in scores} <= {"70", "5", "70.0", "5.0"}
    assert {r[header.index("criterion")] for r in tidy[1:]} == {"score", "spans"}
    wide = _csv(export_wide_rows(study=esa_study))
    assert wide[0][-2:] == ["ann:score", "ann:spans"] and len(wide) == 1 + 12
