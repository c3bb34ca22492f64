"""The ranking file round trip: export → import into a fresh study → export gives the same lines,
also when a judge ranked several sets of the same original (more than k candidates)."""

from __future__ import annotations

import json

import pytest

from annotation.importing.reading import StudyImportError
from annotation.judging.models import Assignment
from annotation.judging.protocols.ranking import selectors as ranking_reads
from annotation.judging.protocols.ranking import services as ranking
from annotation.judging.protocols.ranking.imports import rankings_import_file
from annotation.judging.protocols.ranking.models import RankingItem, RankingJudgment
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from tests.annotation.judging.conftest import new_key
from tests.factories import study_with_data

pytestmark = pytest.mark.django_db

SYSTEMS = ("alpha", "beta", "gamma", "delta", "eps")


def _lines(study) -> list[dict]:
    return list(ranking_reads.ranking_export_lines(study=study))


def _file(lines: list[dict]) -> bytes:
    return "\n".join(json.dumps(x) for x in lines).encode()


def _key(line: dict) -> tuple:
    return line["judge"], line["original_id"], line["set"]


@pytest.fixture
def exported(researcher, add_judge):
    """3 originals × 5 systems ranked k = 3 at a time (2 genuine sets per original, plus one set
    with the identical-copy control), every set ranked by ann and bob."""
    source = study_with_data(owner=researcher, n_originals=3, systems=SYSTEMS, name="Source")
    judges = [add_judge(source, "ann"), add_judge(source, "bob")]
    design_update(
        study=source,
        changes={
            "protocol": "ranking",
            "seed": 3,
            "ranking_k": 3,
            "ranking_scores": True,
            "control_counts": {"identical": 1, "random": 0, "unigram": 0},
        },
    )
    study_judging_open(study=source)
    for n, judge in enumerate(judges):
        assignment = Assignment.objects.get(study=source, judge=judge)
        while (entry := ranking.ranking_next_for_judge(assignment=assignment)) is not None:
            order = [[2, 3], 1] if n else [3, 1, 2]
            ranking.ranking_submit(
                study=source,
                judge=judge,
                token=entry.token,
                key=new_key(),
                order=order,
                scores={"1": 10 + n, "2": 55, "3": 80},
                serve_stamp=entry.serve_stamp,
            )
    return _lines(source)


@pytest.fixture
def target(researcher, add_judge):
    study = study_with_data(owner=researcher, n_originals=3, systems=SYSTEMS, name="Target")
    add_judge(study, "ann")
    add_judge(study, "bob")
    design_update(study=study, changes={"protocol": "ranking", "ranking_k": 3, "ranking_scores": True})
    return study


def test_several_sets_of_one_original_by_one_judge_are_numbered_apart(exported):
    per = {}
    for line in exported:
        per.setdefault((line["judge"], line["original_id"]), []).append(line["set"])
    assert per and all(sets == list(range(1, len(sets) + 1)) for sets in per.values())
    assert max(len(sets) for sets in per.values()) == 3  # two genuine sets and the control's, stripped of it
    assert len({_key(x) for x in exported}) == len(exported)


def test_export_import_export_gives_the_same_lines_and_no_set_is_merged_or_lost(exported, target):
    summary = rankings_import_file(study=target, data=_file(exported), filename="r.jsonl")
    assert summary.rankings == len(exported) and summary.revisions == 0 and summary.judges_created == 0
    assert RankingItem.objects.filter(assignment__study=target).count() == len(exported)
    again = _lines(target)
    assert sorted(again, key=_key) == sorted(exported, key=_key)

    # Importing the same file again revises each set once: nothing merged, nothing added.
    summary = rankings_import_file(study=target, data=_file(exported), filename="r.jsonl")
    assert summary.revisions == len(exported)
    assert RankingItem.objects.filter(assignment__study=target).count() == len(exported)
    assert RankingJudgment.objects.filter(study=target, is_latest=True).count() == len(exported)
    assert sorted(_lines(target), key=_key) == sorted(exported, key=_key)


def test_a_set_ranked_twice_in_one_file_is_named_by_line_and_column_and_nothing_is_stored(exported, target):
    first = exported[0]
    bad = _file([*exported, first])
    with pytest.raises(StudyImportError) as exc:
        rankings_import_file(study=target, data=bad, filename="r.jsonl")
    assert [(i.line, i.column) for i in exc.value.issues] == [(len(exported) + 1, "set")]
    assert f"line {1}" in exc.value.issues[0].message

    without_sets = [{k: v for k, v in x.items() if k != "set"} for x in exported]
    with pytest.raises(StudyImportError) as exc:
        rankings_import_file(study=target, data=_file(without_sets), filename="r.jsonl")
    assert exc.value.issues and {i.column for i in exc.value.issues} == {"set"}

    wrong = [dict(exported[0], set=0), dict(exported[1], set="2"), dict(exported[2], set=True)]
    with pytest.raises(StudyImportError) as exc:
        rankings_import_file(study=target, data=_file(wrong), filename="r.jsonl")
    assert [(i.line, i.column) for i in exc.value.issues] == [(1, "set"), (2, "set"), (3, "set")]
    assert not RankingJudgment.objects.filter(study=target).exists()
    assert not RankingItem.objects.filter(assignment__study=target).exists()
