"""The report of a k-way ranking study: built from the rankings, its numbers checked against
an independent count of the researcher's CSV export; thin data says "not enough data", never NaN."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from annotation.judging.models import Assignment
from annotation.judging.protocols.ranking import selectors as ranking_reads
from annotation.judging.protocols.ranking import services as ranking
from annotation.judging.protocols.ranking.models import RankingItem
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from annotation.models import Candidate
from metrics.reports.exports.tables import report_tables
from metrics.reports.services.build import report_build
from metrics.reports.services.queueing import report_create
from tests.annotation.judging.conftest import new_key
from tests.conftest import shows_nan
from tests.factories import study_with_data

pytestmark = pytest.mark.django_db

TASTE = {"a": 0, "b": 1, "c": 2, "d": 3}  # a best


def _judged(
    researcher, make_user, *, judges=("ann", "bob", "cy"), n_originals=5, systems=("a", "b", "c", "d"), scores=False
):
    from annotation.enums import Role
    from annotation.services.membership import study_member_add

    study = study_with_data(owner=researcher, n_originals=n_originals, systems=systems, name="Rank report")
    for name in judges:
        study_member_add(study=study, user=make_user(name), role=Role.JUDGE)
    design_update(
        study=study,
        changes={
            "protocol": "ranking",
            "seed": 5,
            "ranking_k": 3,
            "control_counts": {"identical": 1, "random": 0, "unigram": 0},
            "ranking_scores": scores,
        },
    )
    study_judging_open(study=study)
    names = dict(Candidate.objects.filter(original__study=study).values_list("id", "system__name"))
    for k, assignment in enumerate(Assignment.objects.filter(study=study).select_related("judge")):
        n = 0
        while (entry := ranking.ranking_next_for_judge(assignment=assignment)) is not None:
            shown = [names[c] for c in RankingItem.objects.get(token=entry.token).candidates]
            best = sorted(
                range(len(shown)), key=lambda i: (not shown[i].startswith("control:"), TASTE.get(shown[i], 9))
            )
            order: list = [i + 1 for i in best]
            if (n + k) % 4 == 0:
                order = [[order[0], order[1]], *order[2:]]  # some ties
            elif (n + k) % 5 == 0:
                order = [order[1], order[0], *order[2:]]  # some upsets
            given = None
            if scores:  # by taste; bob scores upside down, against his own order
                given = {
                    str(i + 1): (
                        10 + 20 * TASTE.get(shown[i], 4)
                        if assignment.judge.username == "bob"
                        else 90 - 20 * TASTE.get(shown[i], -0.5) - n % 3
                    )
                    for i in range(len(shown))
                }
            ranking.ranking_submit(
                study=study,
                judge=assignment.judge,
                token=entry.token,
                key=new_key(),
                order=order,
                scores=given,
                serve_stamp=entry.serve_stamp,
            )
            n += 1
    return study


def test_the_report_counts_what_the_export_says_and_ranks_by_the_judges_taste(researcher, make_user):
    study = _judged(researcher, make_user)
    report = report_create(study=study, created_by=researcher, settings={"n_boot": 50}, enqueue=False)
    report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    result = report.result
    json.dumps(result, allow_nan=False)  # no NaN anywhere
    assert result["protocol"] == "ranking"
    assert [r["system"] for r in result["systems"]][:1] == ["a"]
    assert all(r["ci_low"] <= r["strength"] <= r["ci_high"] for r in result["systems"])
    # independent count from the CSV: wins of each system over each other system in the same ranking
    rows = list(ranking_reads.ranking_export_rows(study=study))
    df = pd.read_csv(io.StringIO("\n".join(",".join(f'"{c}"' for c in map(str, r)) for r in rows)))
    df = df[~df["system"].str.startswith("control:")]
    wins = dict.fromkeys(TASTE, 0)
    ties = dict.fromkeys(TASTE, 0)
    for _, g in df.groupby(["judge", "position"]):
        for _, x in g.iterrows():
            for _, y in g.iterrows():
                if x["system"] != y["system"]:
                    wins[x["system"]] += x["group"] < y["group"]
                    ties[x["system"]] += x["group"] == y["group"]
    for r in result["systems"]:
        assert (r["wins"], r["ties"]) == (wins[r["system"]], ties[r["system"]]), r
    assert result["concordance"]["n_originals"] > 0 and 0 < result["concordance"]["mean_w"] <= 1
    assert {c["judge"] for c in result["controls"]} == {"ann", "bob", "cy"}
    tables = {t.slug: t for t in report_tables(result)}
    assert {"pl_ranking", "system_wins", "pair_wins", "agreement", "agreement_summary", "controls"} <= set(tables)
    assert all(t.display_rows for t in tables.values())


def test_thin_data_says_not_enough_data_instead_of_nan(researcher, make_user, client):
    study = _judged(researcher, make_user, judges=("ann",), n_originals=1, systems=("a", "b"))
    report = report_create(study=study, created_by=researcher, settings={"n_boot": 50}, enqueue=False)
    report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    text = json.dumps(report.result, allow_nan=False)
    assert "NaN" not in text and "not enough data" in report.result["notes"]["concordance"]
    client.force_login(researcher)
    html = client.get(f"/studies/{study.pk}/report/").content.decode()
    assert "not enough data" in html and not shows_nan(html)
    assert "section-pl_ranking" in html and "Every ranking (JSONL)" in html


def test_the_dashboard_answers_equal_the_report_with_default_settings(researcher, make_user):
    from annotation.judging.protocols.ranking.report import ranking_result
    from metrics.dashboard.services.figures import study_answers
    from metrics.reports.services.report_settings import DEFAULT_SETTINGS

    study = _judged(researcher, make_user, judges=("ann", "bob"), n_originals=3)
    answers = study_answers(study)
    assert answers["available"] and answers["n_judgment_rows"] > 0
    result = ranking_result(
        study=study, settings={k: DEFAULT_SETTINGS.get(k) for k in ("confidence_level", "seed", "n_boot")}
    )
    assert [(r["system"], r["mean"], r["ci_low"]) for r in answers["ranking"]["systems"]] == [
        (r["system"], r["strength"], r["ci_low"]) for r in result["systems"]
    ]
    assert answers["agreement"][0]["alpha"] == result["concordance"]["mean_w"]
    json.dumps(answers, allow_nan=False)


def test_the_scores_a_ranking_study_collects_are_reported_per_system_and_against_each_order(researcher, make_user):
    """Issue 42: the report never used the 0–100 scores a ranking study asks for. It gives each
    system's mean raw score and WMT z, and each judge's scores against their own order: bob, who
    scores upside down, contradicts his order; ann and cy agree with theirs."""
    from annotation.judging.protocols.ranking.tables import ranking_tables

    study = _judged(researcher, make_user, scores=True)
    report = report_build(
        report_id=report_create(study=study, created_by=researcher, settings={"n_boot": 50}, enqueue=False).pk
    )
    assert report.status == "succeeded", report.error
    result = report.result
    json.dumps(result, allow_nan=False)
    systems = [r["system"] for r in result["scores"]["systems"]]
    assert systems[0] == "a" and set(systems) == {"a", "b", "c", "d"}  # no control among them
    judges = {j["judge"]: j for j in result["scores"]["judges"]}
    assert judges["bob"]["share_contradicting"] > 0.5 and judges["bob"]["mean_tau"] < 0
    for name in ("ann", "cy"):
        assert judges[name]["contradict"] < judges[name]["agree"] and judges[name]["mean_tau"] > 0
    # The raw means equal a count of the stored scores by hand (mean over originals of the mean over judges).
    rows = [c for c in ranking_reads.ranking_scores(study=study) if not c.is_control]
    frame = pd.DataFrame([c.__dict__ for c in rows])
    by_hand = frame.groupby(["system", "original"])["score"].mean().groupby("system").mean()
    assert {r["system"]: r["raw"] for r in result["scores"]["systems"]} == pytest.approx(by_hand.to_dict())
    slugs = [t.slug for t in ranking_tables(result)]
    assert {"score_systems", "score_order"} <= set(slugs)
    assert "scores" not in result["notes"]


def test_a_ranking_study_without_scores_has_no_score_tables(researcher, make_user):
    from annotation.judging.protocols.ranking.tables import ranking_tables

    study = _judged(researcher, make_user, judges=("ann", "bob"), n_originals=3)
    report = report_build(
        report_id=report_create(study=study, created_by=researcher, settings={"n_boot": 50}, enqueue=False).pk
    )
    assert report.result["scores"] is None and report.result["summary"]["asks_scores"] is False
    assert not {"score_systems", "score_order"} & {t.slug for t in ranking_tables(report.result)}
