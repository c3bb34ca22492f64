"""ESA proposals from an imported span file (design pre-fill ``imported``): the import (all or
nothing, lines and columns, Unicode offsets), opening copies them onto every judge's items,
the judge's page and API show them blinded, and the report's proposal precision counts them."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from annotation.importing.reading import StudyImportError
from annotation.judging.errors import CannotOpen
from annotation.judging.models import Assignment
from annotation.judging.protocols.esa import selectors as esa_reads
from annotation.judging.protocols.esa import services as esa
from annotation.judging.protocols.esa.imports import esa_proposals_import
from annotation.judging.protocols.esa.models import EsaItem, EsaProposal
from annotation.judging.protocols.esa.parsers import parse_esa_proposals_file
from annotation.judging.protocols.esa.report import esa_result
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from metrics.core.spans.offsets import span_problem, utf16_length
from metrics.core.spans.prefill import proposal_outcomes
from tests.annotation.judging.conftest import new_key
from tests.factories import study_with_data

pytestmark = pytest.mark.django_db

SYSTEMS = ("sys-secret-alpha", "sys-secret-beta")
#: Candidate texts with combining marks, emoji (a ZWJ family) and Arabic with harakat.
TEXTS = {
    ("s0", SYSTEMS[0]): "Cafe\u0301 au lait 😀 with 👩\u200d👩\u200d👧 family.",
    ("s0", SYSTEMS[1]): "هذا نصٌّ عربيٌّ قصير.",
    ("s1", SYSTEMS[0]): "naïve résumé 𝒳 done",
    ("s1", SYSTEMS[1]): "A plain candidate sentence.",
}
#: What each proposal marks on the candidate: (original_id, system) → [(substring, severity, category)].
MARKS = {
    ("s0", SYSTEMS[0]): [("Cafe\u0301", "major", "fluency"), ("👩\u200d👩\u200d👧", "minor", None)],
    ("s0", SYSTEMS[1]): [("نصٌّ", "minor", "meaning changed")],
    ("s1", SYSTEMS[0]): [("𝒳", "minor", None)],
}


def _span(text: str, sub: str, severity: str, category: str | None, *, utf16: bool = False) -> dict:
    start = text.index(sub)
    end = start + len(sub)
    if utf16:
        start, end = utf16_length(text[:start]), utf16_length(text[:end])
    return {"side": "candidate", "start": start, "end": end, "severity": severity, "category": category}


def _file(*, utf16: bool = False) -> bytes:
    lines = []
    for (o, s), marks in MARKS.items():
        line = {"original_id": o, "system": s, "error_spans": [_span(TEXTS[(o, s)], *m, utf16=utf16) for m in marks]}
        if utf16:
            line["offsets"] = "utf16"
        lines.append(json.dumps(line, ensure_ascii=False))
    return "\n".join(lines).encode()


@pytest.fixture
def study(researcher, add_judge):
    """2 originals × 2 systems with Unicode candidates, judges ann and bob, one random control per
    original; the design pre-fills from an imported file, not opened yet."""
    study = study_with_data(owner=researcher, n_originals=2, systems=SYSTEMS, name="Proposals")
    for c in study.originals.all().prefetch_related("candidates__system"):
        for cand in c.candidates.all():
            cand.text = TEXTS[(c.external_id, cand.system.name)]
            cand.save()
    add_judge(study, "ann")
    add_judge(study, "bob")
    design_update(
        study=study,
        changes={
            "protocol": "esa",
            "seed": 5,
            "esa_prefill": "imported",
            "control_counts": {"identical": 0, "random": 1, "unigram": 0},
        },
    )
    return study


def _open(study):
    study_judging_open(study=study)
    study.refresh_from_db()


def _items(study, username):
    return list(
        EsaItem.objects.filter(assignment__study=study, assignment__judge__username=username)
        .select_related("candidate__system", "candidate__original")
        .order_by("position")
    )


@pytest.mark.parametrize("utf16", [False, True])
def test_offsets_survive_the_round_trip_through_unicode(study, django_user_model, client, researcher, utf16):
    summary = esa_proposals_import(study=study, data=_file(utf16=utf16), filename="tool-proposals.jsonl")
    assert summary.candidates == 3 and summary.spans == 4 and summary.replaced == 0
    _open(study)
    for username in ("ann", "bob"):
        items = _items(study, username)
        assert len(items) == 4 + 2
        for it in items:
            key = (it.candidate.original.external_id, it.candidate.system.name)
            if it.is_control:  # built at opening: proposals shaped like the file's, so it is not told apart
                for s in it.proposed:
                    assert (s["severity"], s["category"]) in {(m[1], m[2]) for marks in MARKS.values() for m in marks}
                    text = it.candidate.text if s["side"] == "candidate" else it.candidate.original.text
                    assert span_problem(text, s["start"], s["end"]) is None
                continue
            text = it.candidate.text
            assert [(text[s["start"] : s["end"]], s["severity"], s["category"]) for s in it.proposed] == MARKS.get(
                key, []
            )
    # the judge keeps every proposal; the JSONL export gives the same substrings back
    ann = django_user_model.objects.get(username="ann")
    assignment = Assignment.objects.get(study=study, judge=ann)
    while (entry := esa.esa_item_next_for_judge(assignment=assignment)) is not None:
        esa.esa_submit(
            study=study,
            judge=ann,
            token=entry.token,
            key=new_key(),
            spans=entry.spans,
            score=50,
            serve_stamp=entry.serve_stamp,
        )
    client.force_login(researcher)
    body = b"".join(client.get(f"/studies/{study.pk}/judging/export/esa-spans.jsonl").streaming_content).decode()
    rows = {(r["original_id"], r["system"]): r for r in map(json.loads, body.splitlines())}
    for key, marks in MARKS.items():
        text = TEXTS[key]
        for field in ("error_spans", "proposed_spans"):
            assert [(text[s["start"] : s["end"]], s["severity"]) for s in rows[key][field]] == [
                (m[0], m[1]) for m in marks
            ]


def test_an_import_error_names_line_and_column_and_stores_nothing(study):
    esa_proposals_import(study=study, data=_file(), filename="first.jsonl")
    before = sorted(EsaProposal.objects.filter(study=study).values_list("candidate_id", "spans"))
    text = TEXTS[("s0", SYSTEMS[0])]
    mark = text.index("\u0301")
    bad = "\n".join(
        [
            json.dumps({"original_id": "s1", "system": SYSTEMS[1], "error_spans": []}),
            json.dumps(
                {
                    "original_id": "s0",
                    "system": SYSTEMS[0],
                    "error_spans": [{"side": "candidate", "start": 0, "end": mark, "severity": "minor"}],
                }
            ),
            json.dumps({"original_id": "s9", "system": SYSTEMS[0], "error_spans": []}),
            json.dumps(
                {
                    "original_id": "s1",
                    "system": SYSTEMS[0],
                    "error_spans": [{"side": "candidate", "start": 0, "end": 2, "severity": "fatal"}],
                }
            ),
            '{"original_id": "s1", "system": ',
            json.dumps({"original_id": "s1", "system": SYSTEMS[1], "error_spans": [], "colour": "red"}),
        ]
    ).encode()
    with pytest.raises(StudyImportError) as exc:
        esa_proposals_import(study=study, data=bad, filename="bad.jsonl")
    where = [(i.line, i.column) for i in exc.value.issues]
    assert (2, "error_spans[0]") in where and (3, "original_id") in where
    assert (4, "error_spans[0].severity") in where and any(line == 5 for line, _ in where)
    assert any(line == 6 for line, _ in where) and not any(line == 1 for line, _ in where)
    assert "splits" in " ".join(i.message for i in exc.value.issues if i.line == 2)
    assert sorted(EsaProposal.objects.filter(study=study).values_list("candidate_id", "spans")) == before
    dup = _file() + b"\n" + _file().splitlines()[0]
    with pytest.raises(StudyImportError) as exc:
        esa_proposals_import(study=study, data=dup, filename="dup.jsonl")
    assert [(i.line, i.column) for i in exc.value.issues] == [(4, "original_id")]
    with pytest.raises(StudyImportError, match="the limit is 10"):  # before anything is decoded
        parse_esa_proposals_file(b"\xff" * 100, filename="big.jsonl", texts={}, max_bytes=10)
    assert sorted(EsaProposal.objects.filter(study=study).values_list("candidate_id", "spans")) == before


def test_proposals_are_refused_where_they_cannot_be_used_and_opening_needs_them(study, researcher, add_judge):
    with pytest.raises(CannotOpen, match="import the proposed spans"):
        study_judging_open(study=study)
    other = study_with_data(owner=researcher, n_originals=2, systems=SYSTEMS, name="Aligner")
    design_update(study=other, changes={"protocol": "esa", "esa_prefill": "aligner"})
    with pytest.raises(StudyImportError, match="does not pre-fill from an imported file"):
        esa_proposals_import(study=other, data=_file(), filename="p.jsonl")
    esa_proposals_import(study=study, data=_file(), filename="p.jsonl")
    again = esa_proposals_import(study=study, data=_file(), filename="p.jsonl")
    assert again.replaced == 3 and EsaProposal.objects.filter(study=study).count() == 3
    _open(study)
    with pytest.raises(StudyImportError, match="judging is open"):
        esa_proposals_import(study=study, data=_file(), filename="p.jsonl")


def test_the_command_and_the_api_import_and_name_bad_lines(study, researcher, tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_bytes(b'{"original_id": "s0", "system": "nope", "error_spans": []}')
    with pytest.raises(CommandError, match="line 1"):
        call_command("import_esa_proposals", str(path), "--study", study.name)
    assert not EsaProposal.objects.filter(study=study).exists()
    path.write_bytes(_file())
    call_command("import_esa_proposals", str(path), "--study", study.name)
    assert EsaProposal.objects.filter(study=study).count() == 3

    api = APIClient()
    api.force_authenticate(researcher)
    url = f"/api/judging/studies/{study.pk}/esa/proposals/import/"
    from django.core.files.uploadedfile import SimpleUploadedFile

    bad = api.post(url, {"file": SimpleUploadedFile("p.jsonl", b'{"original_id": "s0"}\n')}, format="multipart")
    assert bad.status_code == 400
    assert {(e["line"], e["column"]) for e in bad.json()["errors"]} == {(1, "system"), (1, "error_spans")}
    ok = api.post(url, {"file": SimpleUploadedFile("p.jsonl", _file())}, format="multipart")
    assert ok.status_code == 201 and ok.json() == {"candidates": 3, "spans": 4, "replaced": 3}


def test_the_design_page_offers_the_upload(study, researcher, client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(researcher)
    page = client.get(f"/studies/{study.pk}/judging/design/").content.decode()
    assert 'id="esa-proposals-file"' in page and "An imported file of proposed spans" in page
    r = client.post(
        f"/studies/{study.pk}/judging/esa/proposals/",
        {"file": SimpleUploadedFile("p.jsonl", b'{"original_id": "s0", "system": "x", "error_spans": []}')},
    )
    assert r.status_code == 302 and not EsaProposal.objects.filter(study=study).exists()
    r = client.post(
        f"/studies/{study.pk}/judging/esa/proposals/", {"file": SimpleUploadedFile("p.jsonl", _file())}, follow=True
    )
    assert "Imported 4 proposed spans for 3 candidates" in r.content.decode()
    assert EsaProposal.objects.filter(study=study).count() == 3


def test_proposals_appear_pre_filled_and_blinded_on_the_judges_page_and_api(study, django_user_model, client):
    esa_proposals_import(study=study, data=_file(), filename="gpt-secret-proposer.jsonl")
    _open(study)
    ann = django_user_model.objects.get(username="ann")
    client.force_login(ann)
    client.post(f"/judge/studies/{study.pk}/instructions/")
    api = APIClient()
    api.force_authenticate(ann)
    seen = 0
    for _ in range(6):
        page = client.get(f"/judge/studies/{study.pk}/esa/").content.decode()
        nxt = api.get(f"/api/judging/studies/{study.pk}/esa/next/")
        body = nxt.content.decode()
        item = nxt.json()["item"]
        for text in (page, body):
            for secret in ("sys-secret", "gpt-secret-proposer", "control", "imported", "aligner"):
                assert secret not in text
        it = EsaItem.objects.select_related("candidate__original", "candidate__system").get(token=item["token"])
        if not it.is_control:
            key = (it.candidate.original.external_id, it.candidate.system.name)
            expected = [_span(TEXTS[key], *m) | {"missing": False, "proposed": True} for m in MARKS.get(key, [])]
            assert item["spans"] == expected
            data = json.loads(page.split('id="esa-data" type="application/json">')[1].split("</script>")[0])
            assert data["candidate"] == item["candidate"] and data["spans"] == expected
            assert data["pending"] == bool(expected)
            seen += bool(expected)
        esa.esa_submit(
            study=study,
            judge=ann,
            token=item["token"],
            key=new_key(),
            spans=item["spans"],
            score=60,
            serve_stamp=item["serve_stamp"],
        )
    assert seen == 3


def test_the_reports_proposal_precision_counts_the_imported_proposals(study, django_user_model):
    esa_proposals_import(study=study, data=_file(), filename="p.jsonl")
    _open(study)
    ann = django_user_model.objects.get(username="ann")
    assignment = Assignment.objects.get(study=study, judge=ann)
    while (entry := esa.esa_item_next_for_judge(assignment=assignment)) is not None:
        item = EsaItem.objects.get(token=entry.token)
        # keep the first proposal of each genuine item, drop the rest
        spans = [] if item.is_control else entry.spans[:1]
        esa.esa_submit(
            study=study,
            judge=ann,
            token=entry.token,
            key=new_key(),
            spans=spans,
            score=60,
            serve_stamp=entry.serve_stamp,
        )
    annotations, _ = esa_reads.esa_annotations(study=study)
    genuine = [a for a in annotations if not a.is_control]
    outcomes = proposal_outcomes(genuine).to_dict()
    assert outcomes["proposed"] == 4 and outcomes["accepted"] == 3 and outcomes["deleted"] == 1
    assert outcomes["precision_strict"] == pytest.approx(3 / 4)
    # the report counts them as it counts the aligner's (its controls' aligner proposals were deleted)
    on_controls = sum(len(it.proposed) for it in _items(study, "ann") if it.is_control)
    report = esa_result(study=study, settings={"n_boot": 50})["proposals"]
    assert report["proposed"] == 4 + on_controls and report["accepted"] == 3
    assert report["precision_strict"] == pytest.approx(3 / (4 + on_controls))


def test_attention_items_of_an_imported_design_get_proposals_shaped_like_the_files_as_controls_do(
    study, django_user_model
):
    """No file can name an attention item (its texts are drawn for the judge): like a control it
    gets proposals shaped like a genuine item's imported ones (never the aligner's addition or
    omission), lest its proposals give it away."""
    from annotation.judging import screening
    from annotation.judging.models import AttentionCheck
    from annotation.judging.protocols.esa import screening as esa_screening

    esa_proposals_import(study=study, data=_file(), filename="proposals.jsonl")
    _open(study)
    screening.screening_settings_update(study=study, changes={"attention_count": 2, "attention_policy": "warn"})
    ann = django_user_model.objects.get(username="ann")
    assignment = Assignment.objects.get(study=study, judge=ann)
    file_forms = {(m[1], m[2]) for marks in MARKS.values() for m in marks}
    for kind, bound in (("copy", 50.0), ("unrelated", 25.0)):
        check = AttentionCheck.objects.create(
            assignment=assignment, token=f"tok-{kind}", criterion=kind, expected=bound, after_done=0
        )
        original, candidate = esa_screening.attention_texts(check)
        entry = esa_screening.attention_item(check=check)
        expected = [
            s | {"proposed": True}
            for s in esa.proposals_for(design=study.judging_design, original=original.text, candidate=candidate)
        ]
        assert entry.spans == expected
        assert {(s["severity"], s["category"]) for s in entry.spans} <= file_forms
        for s in entry.spans:
            assert span_problem(candidate if s["side"] == "candidate" else original.text, s["start"], s["end"]) is None


CATEGORIES = ("meaning changed", "meaning added", "meaning omitted", "fluency")


def test_imported_proposals_on_controls_cannot_be_told_from_a_genuine_items(researcher, add_judge):
    """Over many items, what is proposed (categories, severities, sides, how many spans, none
    or some) separates no control from a genuine item: controls get the shapes of genuine items'
    imported proposals, never the aligner's addition/omission."""
    study = study_with_data(owner=researcher, n_originals=24, systems=SYSTEMS, name="Many")
    add_judge(study, "ann")
    design_update(
        study=study,
        changes={
            "protocol": "esa",
            "seed": 11,
            "esa_prefill": "imported",
            "control_counts": {"identical": 1, "random": 1, "unigram": 1},
        },
    )
    lines = []
    for n, (original, system, text) in enumerate(
        study.originals.values_list("external_id", "candidates__system__name", "candidates__text").order_by("pk")
    ):
        words = [(w, text.index(w)) for w in text.split()[:3]]
        spans = [
            {
                "side": "candidate",
                "start": at,
                "end": at + len(w),
                "severity": ("minor", "major")[(n + k) % 2],
                "category": CATEGORIES[(n + k) % 4],
            }
            for k, (w, at) in enumerate(words[: n % 3])  # 0, 1 or 2 spans
        ]
        if n % 5 == 4:
            spans.append({"side": "original", "start": 0, "end": 8, "severity": "major", "category": "meaning omitted"})
        lines.append({"original_id": original, "system": system, "error_spans": spans})
    esa_proposals_import(study=study, data="\n".join(map(json.dumps, lines)).encode(), filename="p.jsonl")
    _open(study)
    items = _items(study, "ann")
    controls, genuine = [it for it in items if it.is_control], [it for it in items if not it.is_control]
    assert len(controls) == 72 and len(genuine) == 48

    def categories(group):
        return {s["category"] for it in group for s in it.proposed}

    def forms(group):
        return {(s["side"], s["severity"], s["category"], s["missing"]) for it in group for s in it.proposed}

    assert categories(controls) == categories(genuine) == set(CATEGORIES)
    assert forms(controls) <= forms(genuine)
    assert {len(it.proposed) for it in controls} <= {len(it.proposed) for it in genuine}
    share = {name: sum(bool(it.proposed) for it in g) / len(g) for name, g in (("c", controls), ("g", genuine))}
    assert 0 < share["c"] < 1 and 0 < share["g"] < 1  # neither group is the only one with (or without) spans
    assert abs(share["c"] - share["g"]) < 0.25
    for it in controls:
        for s in it.proposed:
            text = it.candidate.text if s["side"] == "candidate" else it.candidate.original.text
            assert span_problem(text, s["start"], s["end"]) is None
    # the same texts get the same proposals (the identical control of an original is one candidate)
    assert (
        esa.proposals_for(
            design=study.judging_design,
            original=controls[0].candidate.original.text,
            candidate=controls[0].candidate.text,
        )
        == controls[0].proposed
    )
