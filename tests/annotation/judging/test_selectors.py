"""The canonical judgments frame, exclusions, the fingerprint, and CSV exports."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest
from django.contrib.auth.models import User

from annotation.judging.exports import csv_lines
from annotation.judging.protocols.absolute import exports as absolute_exports
from annotation.judging.protocols.absolute.frame import judgments_frame
from annotation.judging.protocols.absolute.selectors import item_next_for_judge
from annotation.judging.protocols.absolute.services import judgment_submit
from annotation.judging.selectors.design import study_control_expected
from annotation.judging.selectors.export_rows import export_tidy_rows, export_wide_rows
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.judging.selectors.qc import judge_qc, judgments_fingerprint
from annotation.judging.services.design import design_update
from annotation.judging.services.exclusions import judge_exclusion_set
from annotation.models import Candidate
from metrics.core.stats.data import validate_judgments

from .conftest import new_key, rate_all_via_service, scores

pytestmark = pytest.mark.django_db


def by_kind(item):
    """Scores a careful judge gives: the controls' expected scores, 4/4/3/4 for the rest."""
    cand = Candidate.objects.select_related("system").get(text=item.paraphrase, original__text=item.original)
    return {
        "control_identical": scores(5, 5, 1, 2),
        "control_random": scores(1, 5, 5, 1),
        "control_unigram": scores(1, 1, 5, 1),
    }.get(cand.system.kind, scores(4, 4, 3, 4))


def test_judgments_frame_has_the_canonical_columns_and_types(opened_study):
    ann = User.objects.get(username="ann")
    rate_all_via_service(opened_study, ann)
    frame = judgments_frame(study=opened_study)
    assert list(frame.columns) == [
        "judge",
        "item",
        "original",
        "system",
        "is_control",
        "control_kind",
        "criterion",
        "score",
        "seconds",
        "submitted_at",
    ]
    assert len(frame) == 25 * 4
    assert set(frame["criterion"]) == {"adequacy", "fluency", "dissimilarity", "overall"}
    assert frame["is_control"].dtype == bool and frame["score"].dtype == "int64" and frame["seconds"].dtype == "float64"
    controls = frame.loc[frame["is_control"]]
    assert set(controls["control_kind"]) == {"identical", "random", "unigram"}
    assert set(controls["system"]) == {"control:identical", "control:random", "control:unigram"}
    assert frame.loc[~frame["is_control"], "control_kind"].isna().all()
    assert set(frame["original"]) == {f"s{i}" for i in range(5)}
    cand_ids = {str(pk) for pk in Candidate.objects.filter(original__study=opened_study).values_list("pk", flat=True)}
    assert set(frame["item"]) == cand_ids
    assert pd.api.types.is_datetime64_any_dtype(frame["submitted_at"])
    validate_judgments(frame)  # the statistics engineer's contract holds


def test_the_frame_uses_latest_revisions_and_drops_excluded_judges(opened_study, researcher):
    ann, bob = User.objects.get(username="ann"), User.objects.get(username="bob")
    item = item_next_for_judge(assignment=assignment_for_judge(study=opened_study, judge=ann))
    for v in (1, 2, 5):
        judgment_submit(
            study=opened_study,
            judge=ann,
            token=item.token,
            key=new_key(),
            scores=scores(v, v, v, v),
            serve_stamp=item.serve_stamp,
        )
    bob_item = item_next_for_judge(assignment=assignment_for_judge(study=opened_study, judge=bob))
    judgment_submit(
        study=opened_study,
        judge=bob,
        token=bob_item.token,
        key=new_key(),
        scores=scores(),
        serve_stamp=bob_item.serve_stamp,
    )
    frame = judgments_frame(study=opened_study)
    assert list(frame.loc[frame["judge"] == "ann", "score"]) == [5, 5, 5, 5]
    assert set(frame["judge"]) == {"ann", "bob"}
    judge_exclusion_set(study=opened_study, judge=bob, excluded=True, decided_by=researcher)
    assert set(judgments_frame(study=opened_study)["judge"]) == {"ann"}
    assert set(judgments_frame(study=opened_study, include_excluded_judges=True)["judge"]) == {"ann", "bob"}


def test_empty_frame_keeps_its_columns(opened_study):
    frame = judgments_frame(study=opened_study)
    assert len(frame) == 0 and "control_kind" in frame.columns


def test_control_expected_comes_from_the_design(opened_study, study):
    exp = study_control_expected(study=opened_study)
    assert exp["unigram"] == {"adequacy": 1, "fluency": 1, "dissimilarity": 5, "overall": 1}
    changed = dict(exp, identical=dict(exp["identical"], overall=3))
    design_update(study=opened_study, changes={"expected_scores": changed})
    assert study_control_expected(study=opened_study)["identical"]["overall"] == 3


def test_fingerprint_changes_on_judgments_revisions_exclusions_and_expected_scores(opened_study, researcher):
    ann = User.objects.get(username="ann")
    fp = [judgments_fingerprint(study=opened_study)]
    assert fp[0] == judgments_fingerprint(study=opened_study)  # stable when nothing changes
    item = item_next_for_judge(assignment=assignment_for_judge(study=opened_study, judge=ann))
    judgment_submit(
        study=opened_study,
        judge=ann,
        token=item.token,
        key="fp-key-0001",
        scores=scores(),
        serve_stamp=item.serve_stamp,
    )
    fp.append(judgments_fingerprint(study=opened_study))
    judgment_submit(
        study=opened_study,
        judge=ann,
        token=item.token,
        key="fp-key-0001",
        scores=scores(),
        serve_stamp=item.serve_stamp,
    )  # a replay changes nothing
    assert judgments_fingerprint(study=opened_study) == fp[-1]
    judgment_submit(
        study=opened_study,
        judge=ann,
        token=item.token,
        key=new_key(),
        scores=scores(1, 1, 1, 1),
        serve_stamp=item.serve_stamp,
    )
    fp.append(judgments_fingerprint(study=opened_study))
    judge_exclusion_set(study=opened_study, judge=ann, excluded=True, decided_by=researcher)
    fp.append(judgments_fingerprint(study=opened_study))
    judge_exclusion_set(study=opened_study, judge=ann, excluded=False, decided_by=researcher)
    fp.append(judgments_fingerprint(study=opened_study))
    exp = study_control_expected(study=opened_study)
    exp["random"]["overall"] = 2
    design_update(study=opened_study, changes={"expected_scores": exp})
    fp.append(judgments_fingerprint(study=opened_study))
    assert len(set(fp)) == len(fp)


def test_qc_of_a_careful_and_a_careless_judge(opened_study):
    ann, bob = User.objects.get(username="ann"), User.objects.get(username="bob")
    rate_all_via_service(opened_study, ann, score_fn=by_kind)
    rate_all_via_service(opened_study, bob)  # 3/4/2/3 for everything
    rows = {r["judge"]: r for r in judge_qc(study=opened_study)}
    careful, careless = rows["ann"]["qc"], rows["bob"]["qc"]
    assert careful.control_mad == {"adequacy": 0.0, "fluency": 0.0, "dissimilarity": 0.0, "overall": 0.0}
    assert all(t.passed for t in careful.tests)
    assert careless.passed is False and any(t.passed is False for t in careless.tests)


def test_tidy_export_has_one_row_per_judge_item_criterion(opened_study, researcher):
    ann = User.objects.get(username="ann")
    rate_all_via_service(opened_study, ann)
    judge_exclusion_set(study=opened_study, judge=ann, excluded=True, decided_by=researcher)
    text = "".join(csv_lines(export_tidy_rows(study=opened_study)))
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 100
    assert list(rows[0]) == [
        "study",
        "judge",
        "item",
        "original_id",
        "system",
        "is_control",
        "control_kind",
        "criterion",
        "score",
        "seconds",
        "active_seconds",
        "submitted_at",
        "revision",
        "judge_excluded",
        "z",
    ]
    frame = judgments_frame(study=opened_study, include_excluded_judges=True)
    assert sorted((r["item"], r["criterion"], int(r["score"])) for r in rows) == sorted(
        zip(frame["item"], frame["criterion"], frame["score"])
    )
    assert {r["control_kind"] for r in rows if r["is_control"] == "true"} == {"identical", "random", "unigram"}
    assert all(r["judge_excluded"] == "true" and r["study"] == opened_study.name for r in rows)


def test_wide_export_has_a_row_per_item_and_a_column_per_judge_and_criterion(opened_study):
    rate_all_via_service(opened_study, User.objects.get(username="ann"))
    rate_all_via_service(opened_study, User.objects.get(username="bob"), score_fn=lambda item: scores(1, 2, 3, 4))
    rows = list(csv.reader(io.StringIO("".join(csv_lines(export_wide_rows(study=opened_study))))))
    header, body = rows[0], rows[1:]
    assert header[:8] == [
        "study",
        "item",
        "original_id",
        "system",
        "is_control",
        "control_kind",
        "original",
        "candidate",
    ]
    assert header[8:] == [
        f"{j}:{c}" for j in ("ann", "bob") for c in ("adequacy", "fluency", "dissimilarity", "overall")
    ]
    assert len(body) == 25
    assert all(r[8:] == ["3", "4", "2", "3", "1", "2", "3", "4"] for r in body)


def test_the_streamed_exports_equal_a_reference_built_from_the_models(opened_study, researcher, monkeypatch):
    """Judges who rated different items, with revisions and an excluded judge; tiny read
    chunks, so the streaming crosses chunk boundaries inside an item and a judge."""
    from annotation.judging.protocols.absolute.models import Judgment

    monkeypatch.setattr(absolute_exports, "EXPORT_CHUNK_SIZE", 3)  # where the exports read it
    ann, bob = User.objects.get(username="ann"), User.objects.get(username="bob")
    rate_all_via_service(opened_study, ann, score_fn=lambda item: scores(*(1 + len(item.paraphrase) % 5,) * 4))
    bob_list = assignment_for_judge(study=opened_study, judge=bob)
    for k in range(9):  # bob stops part-way, and revises one
        item = item_next_for_judge(assignment=bob_list)
        judgment_submit(
            study=opened_study,
            judge=bob,
            token=item.token,
            key=new_key(),
            scores=scores(k % 5 + 1, 2, 3, 4),
            serve_stamp=item.serve_stamp,
        )
    judgment_submit(
        study=opened_study,
        judge=bob,
        token=item.token,
        key=new_key(),
        scores=scores(5, 5, 5, 5),
        serve_stamp=item.serve_stamp,
    )
    judge_exclusion_set(study=opened_study, judge=bob, excluded=True, decided_by=researcher)

    latest = list(
        Judgment.objects.filter(study=opened_study, is_latest=True).select_related(
            "judge", "item__candidate__original", "item__candidate__system"
        )
    )
    crits = ("adequacy", "fluency", "dissimilarity", "overall")
    # tidy: one row per judgment × criterion, by judge then item
    tidy = list(csv.DictReader(io.StringIO("".join(csv_lines(export_tidy_rows(study=opened_study))))))
    expected = sorted(
        ((j.judge.username, j.item.candidate_id, c, j.values[c]) for j in latest for c in crits),
        key=lambda t: (t[0], t[1]),
    )
    assert [(r["judge"], int(r["item"]), r["criterion"], int(r["score"])) for r in tidy] == expected
    assert {r["judge_excluded"] for r in tidy if r["judge"] == "bob"} == {"true"}
    # wide: one row per judged item in study order, each judge's scores or blanks
    wide = list(csv.reader(io.StringIO("".join(csv_lines(export_wide_rows(study=opened_study))))))
    cands = sorted(
        {j.item.candidate for j in latest},
        key=lambda c: (c.original.position, c.original.external_id, c.system.name, c.pk),
    )
    by = {(j.item.candidate_id, j.judge.username): [str(j.values[c]) for c in crits] for j in latest}
    assert wide[0][8:] == [f"{u}:{c}" for u in ("ann", "bob") for c in crits]
    assert [r[:2] for r in wide[1:]] == [[opened_study.name, str(c.pk)] for c in cands]
    for row, cand in zip(wide[1:], cands):
        control = cand.system.kind.startswith("control_")
        assert row[2:8] == [
            cand.original.external_id,
            cand.system.name,
            str(control).lower(),
            cand.system.kind.removeprefix("control_") if control else "",
            cand.original.text,
            cand.text,
        ]
        assert row[8:] == by.get((cand.pk, "ann"), [""] * 4) + by.get((cand.pk, "bob"), [""] * 4)
    assert sum(1 for r in wide[1:] if r[12] != "") == 9  # bob's nine items, the revised one at its latest scores
    assert ["5", "5", "5", "5"] in [r[12:] for r in wide[1:]]


def test_exports_neutralise_formulas_in_texts(opened_study, researcher, client):
    Candidate.objects.filter(original__study=opened_study, system__name="human").update(text="=cmd|' /C calc'!A0")
    rate_all_via_service(opened_study, User.objects.get(username="ann"))
    client.force_login(researcher)
    wide = b"".join(client.get(f"/studies/{opened_study.pk}/judging/export/wide.csv").streaming_content).decode()
    rows = list(csv.reader(io.StringIO(wide)))
    texts = [r[7] for r in rows[1:] if r[3] == "human"]
    assert texts and all(t == "'=cmd|' /C calc'!A0" for t in texts)
    assert not any(cell.startswith(("=", "+", "-", "@")) for r in rows for cell in r)
    tidy = client.get(f"/studies/{opened_study.pk}/judging/export/tidy.csv")
    assert tidy["Content-Disposition"].startswith("attachment;") and tidy["Content-Type"].startswith("text/csv")


def test_export_command_writes_the_same_csv(opened_study, tmp_path):
    from django.core.management import call_command

    rate_all_via_service(opened_study, User.objects.get(username="ann"))
    out = tmp_path / "tidy.csv"
    call_command("export_judgments", "--study", opened_study.name, "--format", "tidy", "-o", str(out))
    expected = "".join(csv_lines(export_tidy_rows(study=opened_study)))
    assert out.read_bytes().decode("utf-8") == expected
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no study"):
        call_command("export_judgments", "--study", "nope")
