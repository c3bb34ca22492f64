"""The ESA span file round trip (docs/protocol-esa.md, "Exports"): a study judged with controls
and the aligner's suggestions is exported, imported into a fresh study and into the same study,
and exported again: the lines are the same, controls apart (paraeval builds a study's controls
itself, so a file's control lines are recognised and skipped, never refused)."""

from __future__ import annotations

import json

import pytest

from annotation.judging.models import Assignment
from annotation.judging.protocols.esa import selectors as esa_reads
from annotation.judging.protocols.esa import services as esa
from annotation.judging.protocols.esa.imports import esa_judgments_import
from annotation.judging.protocols.esa.models import EsaItem, EsaJudgment
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from tests.annotation.judging.conftest import new_key
from tests.factories import study_with_data

pytestmark = pytest.mark.django_db

SYSTEMS = ("alpha", "beta")


def _lines(study) -> list[dict]:
    return [json.loads(x) for x in esa_reads.esa_jsonl_lines(study=study)]


def _file(lines: list[dict]) -> bytes:
    return "\n".join(json.dumps(x, ensure_ascii=False) for x in lines).encode()


def _key(line: dict) -> tuple:
    return line["judge"], line["original_id"], line["system"]


def _genuine(lines: list[dict]) -> list[dict]:
    return [x for x in lines if not x["system"].startswith("control:")]


@pytest.fixture
def exported(researcher, add_judge):
    """3 originals × 2 systems with identical, random and unigram controls, the aligner's
    suggestions; ann keeps the suggestions and adds spans of the design's categories and the
    [missing] marker, bob deletes them and marks the first word major."""
    source = study_with_data(owner=researcher, n_originals=3, systems=SYSTEMS, name="Source")
    judges = [add_judge(source, "ann"), add_judge(source, "bob")]
    design_update(
        study=source,
        changes={
            "protocol": "esa",
            "seed": 5,
            "esa_prefill": "aligner",
            "control_counts": {"identical": 1, "random": 1, "unigram": 1},
        },
    )
    study_judging_open(study=source)
    for n, judge in enumerate(judges):
        assignment = Assignment.objects.get(study=source, judge=judge)
        while (entry := esa.esa_item_next_for_judge(assignment=assignment)) is not None:
            if n == 0:
                spans = [dict(s, proposed=True) for s in entry.spans]
                taken = {(s["side"], i) for s in spans for i in range(s["start"], s["end"])}
                if not any(side == "original" and i < 8 for side, i in taken):
                    spans.append({"side": "original", "start": 0, "end": 8, "severity": "major", "category": "fluency"})
                spans.append({"missing": True, "severity": "minor", "category": "meaning omitted"})
            else:
                first = entry.candidate.split()[0]
                spans = [{"side": "candidate", "start": 0, "end": len(first), "severity": "major"}]
            esa.esa_submit(
                study=source,
                judge=judge,
                token=entry.token,
                key=new_key(),
                spans=spans,
                score=30 + 7 * n,
                serve_stamp=entry.serve_stamp,
            )
    lines = _lines(source)
    categories = {s.get("category") for x in lines for s in x["error_spans"]}
    assert {"addition", "omission", "fluency", "meaning omitted"} <= categories  # what the round trip must carry
    assert any(x["system"].startswith("control:") for x in lines)
    return source, lines


@pytest.fixture
def target(researcher, add_judge):
    """A fresh study of the same texts: ESA with the default categories and no pre-fill."""
    study = study_with_data(owner=researcher, n_originals=3, systems=SYSTEMS, name="Target")
    add_judge(study, "ann")
    add_judge(study, "bob")
    design_update(study=study, changes={"protocol": "esa"})
    return study


def test_export_import_into_a_fresh_study_export_gives_the_same_lines_and_skips_the_controls(exported, target):
    _, lines = exported
    genuine = _genuine(lines)
    summary = esa_judgments_import(study=target, data=_file(lines), filename="spans.jsonl")
    assert summary.rows == summary.judgments == len(genuine) and summary.revisions == 0
    assert summary.controls_skipped == len(lines) - len(genuine) > 0 and summary.judges_created == 0
    assert EsaItem.objects.filter(assignment__study=target).count() == len(genuine)
    assert sorted(_lines(target), key=_key) == sorted(genuine, key=_key)

    # The same file again revises each judgment once: nothing added, the lines unchanged.
    summary = esa_judgments_import(study=target, data=_file(lines), filename="spans.jsonl")
    assert summary.revisions == len(genuine)
    assert EsaJudgment.objects.filter(study=target, is_latest=True).count() == len(genuine)
    assert sorted(_lines(target), key=_key) == sorted(genuine, key=_key)


def test_export_import_into_the_same_study_export_gives_the_same_lines(exported):
    source, lines = exported
    summary = esa_judgments_import(study=source, data=_file(lines), filename="spans.jsonl")
    assert summary.revisions == summary.judgments == len(_genuine(lines))
    assert sorted(_lines(source), key=_key) == sorted(lines, key=_key)


def test_a_category_of_neither_the_study_nor_the_aligner_is_still_refused(exported, target):
    from annotation.importing.reading import StudyImportError

    _, lines = exported
    line = dict(
        _genuine(lines)[0],
        error_spans=[{"side": "candidate", "start": 0, "end": 3, "severity": "minor", "category": "style"}],
    )
    with pytest.raises(StudyImportError) as exc:
        esa_judgments_import(study=target, data=_file([line]), filename="spans.jsonl")
    assert [i.column for i in exc.value.issues] == ["error_spans[0].category"]
    assert not EsaJudgment.objects.filter(study=target).exists()
