"""The report of a side-by-side comparison study: built from the comparisons, checked against
an independent pandas count of the researcher's CSV export, shown on the report page."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from annotation.judging.models import Assignment
from annotation.judging.protocols.side_by_side import services as comparison
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from metrics.reports.exports.tables import report_tables
from metrics.reports.services.build import report_build
from metrics.reports.services.queueing import report_create
from tests.annotation.judging.conftest import new_key
from tests.factories import study_with_data

pytestmark = pytest.mark.django_db

#: The judges' taste: a better than b better than c; the identical copy always loses.
RANK = {"a": 0, "b": 1, "c": 2}


@pytest.fixture
def judged_comparison(researcher, make_user):
    from annotation.enums import Role
    from annotation.services.membership import study_member_add

    study = study_with_data(owner=researcher, n_originals=5, systems=("a", "b", "c"), name="Cmp report")
    for name in ("ann", "bob", "cy"):
        study_member_add(study=study, user=make_user(name), role=Role.JUDGE)
    design_update(
        study=study,
        changes={"protocol": "comparison", "seed": 5, "control_counts": {"identical": 1, "random": 0, "unigram": 0}},
    )
    study_judging_open(study=study)
    for k, assignment in enumerate(Assignment.objects.filter(study=study).select_related("judge")):
        n = 0
        while (pair := comparison.pair_next_for_judge(assignment=assignment)) is not None:
            from annotation.judging.protocols.side_by_side.models import ComparisonItem

            item = ComparisonItem.objects.select_related("left__system", "right__system").get(token=pair.token)
            ls, rs = item.left.system.name, item.right.system.name
            if ls.startswith("control:"):
                answer = "B"
            elif rs.startswith("control:"):
                answer = "A"
            elif (n + k) % 4 == 0:
                answer = "tie"  # some ties, and some upsets below, so agreement is not perfect
            elif (n + k) % 5 == 0:
                answer = "B" if RANK[ls] < RANK[rs] else "A"
            else:
                answer = "A" if RANK[ls] < RANK[rs] else "B"
            comparison.side_by_side_submit(
                study=study,
                judge=assignment.judge,
                token=pair.token,
                key=new_key(),
                answers={"preference": answer},
                serve_stamp=pair.serve_stamp,
            )
            n += 1
    return study


def _csv(study) -> pd.DataFrame:
    rows = list(comparison.side_by_side_export_rows(study=study))
    return pd.DataFrame(rows[1:], columns=rows[0])


def test_the_report_counts_wins_and_ties_as_the_export_does(judged_comparison, researcher):
    report = report_create(study=judged_comparison, created_by=researcher, enqueue=False)
    report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    result = report.result
    assert result["protocol"] == "comparison"
    summary = result["comparison"]["preference"]
    df = _csv(judged_comparison)
    genuine = df[df["is_control"] == False]  # noqa: E712 (a column of booleans)
    assert summary["n_comparisons"] == len(genuine)
    wins = genuine[genuine["answer"] != "tie"]["preferred_system"].value_counts()
    ties = pd.concat([genuine[genuine["answer"] == "tie"][c] for c in ("left_system", "right_system")]).value_counts()
    for row in summary["systems"]:
        assert row["wins"] == wins.get(row["system"], 0)
        assert row["ties"] == ties.get(row["system"], 0)
    ranking = [r["system"] for r in summary["bradley_terry"]["ranking"]]
    assert ranking == ["a", "b", "c"]
    for r in summary["bradley_terry"]["ranking"]:
        assert r["ci_low"] <= r["theta"] <= r["ci_high"]
    controls = {r["judge"]: r for r in summary["controls"]}
    assert set(controls) == {"ann", "bob", "cy"} and all(r["accuracy"] == 1.0 for r in controls.values())
    assert summary["agreement"]["units"] == 15 and summary["agreement"]["alpha"] is not None
    assert [t.slug for t in report_tables(result)][:2] == ["preference_bt_ranking", "preference_system_wins"]


def test_the_report_page_shows_the_comparison_sections(judged_comparison, researcher, client):
    report = report_create(study=judged_comparison, created_by=researcher, enqueue=False)
    report_build(report_id=report.pk)
    client.force_login(researcher)
    html = client.get(f"/studies/{judged_comparison.pk}/report/").content.decode()
    for title in (
        "System ranking (Bradley–Terry)",
        "Win rates per system pair",
        "Agreement on pairs",
        "Judges on control pairs",
        "Every comparison (CSV)",
    ):
        assert title in html
    assert "Table 1" not in html
    csv = client.get(f"/studies/{judged_comparison.pk}/reports/{report.pk}/tables/preference_pair_wins.csv")
    assert csv.status_code == 200
    table = pd.read_csv(io.StringIO(csv.content.decode()))
    assert set(table["system_a"]) == {"a", "b"} and table["n"].sum() == 45
