"""A second judgments import never hides the first (issue 24, item 1): exactly one latest
value per (judge, item, criterion), whichever mix of page, API and imports wrote them; a
value already there is refused, skipped or replaced as the researcher chooses."""

from __future__ import annotations

import importlib

import krippendorff
import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db.models import Count
from rest_framework.test import APIClient

from annotation.importing.reading import StudyImportError
from annotation.judging.protocols.absolute.imports import judgments_import_file
from annotation.judging.protocols.absolute.models import Judgment
from annotation.judging.selectors.export_rows import export_tidy_rows
from annotation.judging.services.design import design_update
from annotation.judging.services.judgment_import import imported_judge_username
from metrics.reports.services.build import report_build
from metrics.reports.services.queueing import report_create
from tests.annotation.judging.test_scales import GRAM, SIM

pytestmark = pytest.mark.django_db

HEADER = "judge,original_id,system,criterion,value\n"
JUDGES = ("w01", "w02", "w03")
SYSTEMS = ("human", "machine")


def _value(j: int, i: int, k: int) -> tuple[int, int]:
    """A judge's similarity (0–100) and grammar (0–2) for original i, system k: varied, partly agreeing."""
    return (20 + 12 * i + 25 * k + 7 * ((j * 3 + i) % 4)) % 101, (i + k + (j == 1 and i % 2)) % 3


def _first_file() -> str:
    rows = [HEADER]
    for j, name in enumerate(JUDGES):
        for i in range(5):
            for k, system in enumerate(SYSTEMS):
                sim, gram = _value(j, i, k)
                rows.append(f"{name},s{i},{system},similarity,{sim}\n{name},s{i},{system},grammar,{gram}\n")
    return "".join(rows)


def _alpha_from_input(values: dict[tuple[str, int, int], int], level: str) -> float:
    """Krippendorff's α straight from what went in: judges × items."""
    matrix = np.array([[values[(name, i, k)] for i in range(5) for k in range(2)] for name in JUDGES], float)
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))


@pytest.fixture
def imported(study):
    design_update(study=study, changes={"criteria": [SIM, GRAM]})
    call_command("import_judgments", "--study", study.name, str(_write(study, _first_file())))
    return study


def _write(study, text: str):
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / "judgments.csv"
    path.write_text(text)
    return path


def _tidy(study) -> list:
    return list(export_tidy_rows(study=study))


def _api_import(study, researcher, text: str, **extra):
    api = APIClient()
    api.force_authenticate(user=researcher)
    return api.post(
        f"/api/judging/studies/{study.pk}/judgments/import/",
        {"file": SimpleUploadedFile("revision.csv", text.encode()), **extra},
        format="multipart",
    )


def test_a_two_row_revision_through_the_api_keeps_every_other_judgment_of_that_judge(imported, researcher):
    study = imported
    assert len(_tidy(study)) == 1 + 3 * 10 * 2
    revision = HEADER + "w01,s0,human,similarity,99\nw01,s0,human,grammar,0\n"
    r = _api_import(study, researcher, revision, mode="replace")
    assert r.status_code == 201, r.content
    assert (r.json()["judgments"], r.json()["replaced"], r.json()["revisions"]) == (1, 2, 1)
    w01 = Judgment.objects.filter(judge__username=imported_judge_username(study, "w01"))
    assert w01.count() == 11 and w01.filter(is_latest=True).count() == 10
    tidy = _tidy(study)
    assert len(tidy) == 1 + 60  # w01 still has 20 latest rows
    header = tidy[0]
    rows = [dict(zip(header, r, strict=True)) for r in tidy[1:]]
    w01_rows = [r for r in rows if r["judge"].startswith("w01")]
    assert len(w01_rows) == 20
    # every value is what went in: the first file's, except the two the revision replaced
    expected = {}
    for j, name in enumerate(JUDGES):
        for i in range(5):
            for k, system in enumerate(SYSTEMS):
                sim, gram = _value(j, i, k)
                expected[(name, f"s{i}", system, "similarity")] = sim
                expected[(name, f"s{i}", system, "grammar")] = gram
    expected[("w01", "s0", "human", "similarity")] = 99
    expected[("w01", "s0", "human", "grammar")] = 0
    got = {(r["judge"].split("@")[0], r["original_id"], r["system"], r["criterion"]): float(r["score"]) for r in rows}
    assert got == {k: float(v) for k, v in expected.items()}

    report = report_create(study=study, settings={"n_boot": 50, "include_metrics": False}, enqueue=False)
    report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    assert report.result["summary"]["n_judgments"] == 60
    values = {(name, int(o[1:]), SYSTEMS.index(s)): v for (name, o, s, c), v in expected.items() if c == "similarity"}
    alpha = report.result["agreement"]["similarity"]["krippendorff_alpha"]["interval"]["statistic"]
    assert alpha == pytest.approx(_alpha_from_input(values, "interval"))


def test_a_second_import_is_refused_by_default_naming_each_row_and_nothing_changes(imported, researcher):
    study = imported
    before = list(Judgment.objects.order_by("pk").values_list("pk", "is_latest", "values"))
    r = _api_import(study, researcher, HEADER + "w02,s1,machine,grammar,2\nw02,s4,human,similarity,1\n")
    assert r.status_code == 400
    errors = r.json()["errors"]
    assert [e["line"] for e in errors] == [2, 3]
    assert "judge 'w02' already has a grammar value for this item" in errors[0]["message"]
    assert "mode 'replace'" in errors[0]["message"]
    assert list(Judgment.objects.order_by("pk").values_list("pk", "is_latest", "values")) == before


def test_add_mode_keeps_the_values_there_and_adds_only_the_new_ones(imported):
    study = imported
    sim, gram = _value(1, 2, 0)
    s = judgments_import_file(
        study=study,
        filename="more.csv",
        mode="add",
        data=(HEADER + f"w02,s2,human,grammar,{(gram + 1) % 3}\nw04,s2,human,grammar,1\n").encode(),
    )
    assert (s.skipped, s.judgments, s.judges_created) == (1, 1, 1)
    w02 = Judgment.objects.get(
        judge__username=imported_judge_username(study, "w02"),
        item__candidate__original__external_id="s2",
        item__candidate__system__name="human",
    )
    assert w02.values == {"similarity": sim, "grammar": gram}
    assert len(_tidy(study)) == 1 + 61


def test_a_partial_revision_carries_the_other_criteria_forward(imported):
    study = imported
    judgments_import_file(
        study=study, filename="one.csv", mode="replace", data=(HEADER + "w03,s3,machine,grammar,1\n").encode()
    )
    latest = Judgment.objects.get(
        is_latest=True,
        judge__username=imported_judge_username(study, "w03"),
        item__candidate__original__external_id="s3",
        item__candidate__system__name="machine",
    )
    assert latest.values == {"similarity": _value(2, 3, 1)[0], "grammar": 1} and latest.revision == 2


def test_every_item_with_judgments_has_exactly_one_latest_after_any_mix_of_imports(imported):
    study = imported
    for mode, text in (
        ("replace", "w01,s0,human,similarity,5\n"),
        ("add", "w01,s1,human,similarity,6\n"),
        ("replace", "w02,s0,human,grammar,1\nw02,s0,human,grammar,2\n"),
    ):
        judgments_import_file(study=study, filename="x.csv", mode=mode, data=(HEADER + text).encode())
    per_item = (
        Judgment.objects.values("item")
        .annotate(latest=Count("pk", filter=Judgment.objects.filter(is_latest=True).query.where))
        .values_list("latest", flat=True)
    )
    assert set(per_item) == {1}


def test_the_command_takes_a_mode_and_refuses_an_unknown_one(imported, tmp_path):
    study = imported
    path = tmp_path / "again.csv"
    path.write_text(HEADER + "w01,s0,human,similarity,40\n")
    with pytest.raises(CommandError, match="already has a similarity value"):
        call_command("import_judgments", str(path), "--study", study.name)
    call_command("import_judgments", str(path), "--study", study.name, "--mode", "replace")
    assert (
        Judgment.objects.get(
            is_latest=True,
            judge__username__startswith="w01@",
            item__candidate__original__external_id="s0",
            item__candidate__system__name="human",
        ).values["similarity"]
        == 40
    )
    with pytest.raises(CommandError):
        call_command("import_judgments", str(path), "--study", study.name, "--mode", "merge")
    with pytest.raises(StudyImportError, match="unknown import mode"):
        judgments_import_file(study=study, filename="x.csv", mode="merge", data=path.read_bytes())


def test_the_design_page_offers_the_three_modes_and_uses_the_one_chosen(imported, researcher, client):
    study = imported
    client.force_login(researcher)
    page = client.get(f"/studies/{study.pk}/judging/design/").content.decode()
    for mode in ("refuse", "add", "replace"):
        assert f'name="mode" value="{mode}"' in page
    upload = SimpleUploadedFile("p.csv", (HEADER + "w01,s0,human,grammar,2\n").encode())
    page = client.post(f"/studies/{study.pk}/judging/import/", {"file": upload, "mode": "add"}, follow=True)
    assert "1 skipped as already there" in page.content.decode()
    upload = SimpleUploadedFile("p.csv", (HEADER + "w01,s0,human,grammar,2\n").encode())
    assert client.post(f"/studies/{study.pk}/judging/import/", {"file": upload, "mode": "x"}).status_code == 400


def test_the_repair_migration_marks_the_highest_revision_of_orphaned_items_latest(imported):
    study = imported
    # the state the old import left: an item whose judgments are all unmarked
    item = Judgment.objects.filter(study=study).first().item
    judgments_import_file(
        study=study,
        filename="r.csv",
        mode="replace",
        data=(
            HEADER + f"{item.assignment.judge.username.split('@')[0]},"
            f"{item.candidate.original.external_id},{item.candidate.system.name},"
            "grammar,2\n"
        ).encode(),
    )
    Judgment.objects.filter(item=item).update(is_latest=False)
    migration = importlib.import_module("annotation.judging.migrations.0007_repair_latest_judgments")
    from django.apps import apps

    migration.mark_highest_revision_latest(apps, None)
    assert list(Judgment.objects.filter(item=item, is_latest=True).values_list("revision", flat=True)) == [2]
    assert Judgment.objects.filter(is_latest=True).count() == 30
