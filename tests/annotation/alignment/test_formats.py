"""Alignments leave and come back through the pages and the API in every format, unchanged."""

import json

import pytest
from django.urls import reverse

from annotation.alignment import selectors
from annotation.alignment.models import AlignmentAssignment, AlignmentPair, AlignmentSystem
from annotation.alignment.services.assignments import assignments_create
from annotation.alignment.services.drafts import assignment_submit
from annotation.services.studies import study_create
from metrics.core.alignment.model import FORMATS

from .conftest import upload

pytestmark = pytest.mark.django_db


def _export(client, study, source, fmt):
    r = client.get(reverse("alignment:export", kwargs={"study_id": study.pk}), {"source": source, "format": fmt})
    assert r.status_code == 200, r.content
    return r.content.decode(), r["Content-Disposition"]


def _import(client, study, name, fmt, text, filename="a.txt"):
    return client.post(
        reverse("alignment:import_system", kwargs={"study_id": study.pk}),
        {"system-name": name, "system-format": fmt, "system-file": upload(filename, text)},
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_system_exported_and_imported_again_keeps_every_link(client, researcher, study, system, fmt):
    client.force_login(researcher)
    text, disposition = _export(client, study, f"system:{system.pk}", fmt)
    assert "attachment" in disposition
    r = _import(client, study, f"copy-{fmt}", fmt, text)
    assert r.status_code == 302, r.content.decode()[:2000]
    copy = AlignmentSystem.objects.get(study=study, name=f"copy-{fmt}")
    assert selectors.system_alignments(system=copy) == selectors.system_alignments(system=system)


def test_pharaoh_export_is_one_line_per_pair_with_p_for_possible(client, researcher, study, system):
    client.force_login(researcher)
    text, _ = _export(client, study, f"system:{system.pk}", "pharaoh")
    assert text.splitlines() == ["0-0 1p1 2-2 5-4", "0-0 1-1 2p2 4-4 5-5", "0-0 1-1 5p2"]
    naacl, _ = _export(client, study, f"system:{system.pk}", "naacl")
    assert naacl.splitlines()[:2] == ["1 1 1 S", "1 2 2 P"]


def test_the_gold_round_trips_through_pharaoh(client, researcher, study, pairs, annotator):
    assignments_create(study=study)
    for a, sure in zip(
        AlignmentAssignment.objects.filter(annotator=annotator).order_by("pair__position"),
        ([[0, 0], [5, 4]], [[1, 1]], [[1, 1], [2, 1], [3, 1], [4, 1]]),
    ):
        assignment_submit(
            assignment=a,
            sure=sure,
            possible=[[6, 6]] if a.pair.external_id != "p3" else [],
            revision=0,
            active_seconds=10,
        )
    client.force_login(researcher)
    text, _ = _export(client, study, "gold", "pharaoh")
    assert text.splitlines()[2] == "1-1 2-1 3-1 4-1"
    assert _import(client, study, "gold-copy", "pharaoh", text).status_code == 302
    copy = selectors.system_alignments(system=AlignmentSystem.objects.get(study=study, name="gold-copy"))
    assert copy == selectors.gold_alignments(study=study)


def test_the_pairs_export_reimports_into_another_study_with_the_same_tokens(client, researcher, study, pairs):
    client.force_login(researcher)
    r = client.get(reverse("alignment:pairs_export", kwargs={"study_id": study.pk, "fmt": "jsonl"}))
    other = study_create(name="Copy", owner=researcher)
    r2 = client.post(
        reverse("alignment:import_pairs", kwargs={"study_id": other.pk}),
        {"pairs-file": upload("pairs.jsonl", r.content)},
    )
    assert r2.status_code == 302

    def shape(s):
        return list(
            AlignmentPair.objects.filter(study=s)
            .order_by("position")
            .values_list("external_id", "group__external_id", "tokens1", "tokens2")
        )

    assert shape(other) == shape(study)
    tsv = client.get(reverse("alignment:pairs_export", kwargs={"study_id": study.pk, "fmt": "tsv"})).content.decode()
    assert tsv.splitlines()[2] == "He gave up the ghost .\tHe died ."


def test_json_export_carries_the_tokens(client, researcher, study, system):
    client.force_login(researcher)
    doc = json.loads(_export(client, study, f"system:{system.pk}", "json")[0])
    assert doc[2] == {
        "tokens1": ["He", "gave", "up", "the", "ghost", "."],
        "tokens2": ["He", "died", "."],
        "sure": [[0, 0], [1, 1]],
        "possible": [[5, 2]],
    }


@pytest.mark.parametrize(
    "fmt, text, message",
    [
        ("pharaoh", "0-0\n0-9\n\n", "a.txt, line 2, column '1': link '0-9' of pair 2 lies outside the 7×7 grid"),
        ("pharaoh", "0-0\n", "a.txt, line 2: 1 alignment lines for 3 sentence pairs"),
        ("pharaoh", "0-0 x\n\n\n", "a.txt, line 1, column '5': 'x' is not a link"),
        ("naacl", "1 1 1 S\n4 1 1 S\n", "a.txt, line 2, column '1': sentence id 4 is beyond the 3 sentence pairs"),
        ("csv", "pair,i,j,kind\n0,0,0,maybe\n", "a.txt, line 2, column '4': kind 'maybe' must be 'sure' or 'possible'"),
    ],
)
def test_a_bad_alignment_file_is_refused_with_its_line_and_nothing_is_stored(
    client, researcher, study, pairs, fmt, text, message
):
    client.force_login(researcher)
    r = _import(client, study, "broken", fmt, text)
    assert r.status_code == 400
    assert message.replace("'", "&#x27;") in r.content.decode()
    assert not AlignmentSystem.objects.filter(study=study, name="broken").exists()


def test_an_existing_system_name_needs_replace(client, researcher, study, system):
    client.force_login(researcher)
    r = _import(client, study, "fast_align", "pharaoh", "0-0\n\n\n")
    assert r.status_code == 400 and "already has a system" in r.content.decode()
    r = client.post(
        reverse("alignment:import_system", kwargs={"study_id": study.pk}),
        {
            "system-name": "fast_align",
            "system-format": "pharaoh",
            "system-replace": "on",
            "system-file": upload("a.txt", "0-0\n\n\n"),
        },
    )
    assert r.status_code == 302
    assert sum(len(a.links) for a in selectors.system_alignments(system=system).values()) == 1


def test_the_api_imports_and_exports_alignments(api_client, researcher, study, system):
    api_client.force_authenticate(researcher)
    r = api_client.get(
        reverse("alignment-api:export", kwargs={"study_id": study.pk}),
        {"source": f"system:{system.pk}", "file_format": "naacl"},
    )
    assert r.status_code == 200
    r = api_client.post(
        reverse("alignment-api:system_import", kwargs={"study_id": study.pk}),
        {"name": "via-api", "format": "naacl", "file": upload("a.naacl", r.content)},
        format="multipart",
    )
    assert r.status_code == 201 and r.json()["n_alignments"] == 3
    copy = AlignmentSystem.objects.get(study=study, name="via-api")
    assert selectors.system_alignments(system=copy) == selectors.system_alignments(system=system)
    r = api_client.post(
        reverse("alignment-api:system_import", kwargs={"study_id": study.pk}),
        {"name": "bad", "format": "pharaoh", "file": upload("a.txt", "0-0\n9-9\n\n")},
        format="multipart",
    )
    assert r.status_code == 400 and r.json()["errors"][0]["line"] == 2
    r = api_client.get(
        reverse("alignment-api:export", kwargs={"study_id": study.pk}), {"source": "nope", "file_format": "naacl"}
    )
    assert r.status_code == 400
