"""The judge simulator: simulated judges rate an open study through the real judging models."""

from __future__ import annotations

from collections import Counter
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from annotation.enums import Role
from annotation.judging.protocols.absolute.frame import judgments_frame
from annotation.judging.protocols.absolute.models import AssignmentItem, Judgment
from annotation.judging.selectors.progress import study_progress
from annotation.judging.selectors.qc import judge_qc
from annotation.judging.services.opening import study_judging_close
from annotation.models import Candidate, StudyMembership

from .conftest import make_study_data, open_judging

pytestmark = pytest.mark.django_db


def _simulate(*args) -> str:
    out = StringIO()
    call_command("simulate_judges", *[str(a) for a in args], stdout=out)
    return out.getvalue()


def test_the_simulator_refuses_a_study_that_is_not_open(researcher):
    study = make_study_data(researcher, name="Draft study", n_originals=3)
    with pytest.raises(
        CommandError,
        match=r"Study 'Draft study' is not open for judging \(it is still a draft\); "
        r"open judging on its Judging design page first",
    ):
        _simulate(study.pk, "--judges", 2)
    open_judging(study)
    study_judging_close(study=study)
    with pytest.raises(CommandError, match="it is closed.*reopen it"):
        _simulate("Draft study", "--judges", 2)
    with pytest.raises(CommandError, match="no study with the name or id 'Nope'"):
        _simulate("Nope", "--judges", 2)
    with pytest.raises(CommandError, match="random clickers must be between 0 and the number of judges"):
        _simulate(study.pk, "--judges", 2, "--random-clickers", 3)
    assert not Judgment.objects.exists()


def test_simulated_judges_rate_every_item_of_their_real_assignments(researcher):
    study = open_judging(make_study_data(researcher, name="Simulated", n_originals=10))
    out = _simulate(study.pk, "--judges", 3, "--seed", 4)
    n_items = Candidate.objects.filter(original__study=study).count()
    assert n_items == 10 * 2 + 10 * 3  # two systems and one control of each kind per original
    assert f"{3 * n_items} simulated judgments by 3 judges (sim-judge-01 … sim-judge-03) over {n_items} items" in out
    judges = User.objects.filter(username__startswith="sim-judge-").order_by("username")
    assert [u.username for u in judges] == ["sim-judge-01", "sim-judge-02", "sim-judge-03"]
    assert not any(u.has_usable_password() for u in judges)
    assert StudyMembership.objects.filter(study=study, role=Role.JUDGE, user__in=judges).count() == 3
    assert not AssignmentItem.objects.filter(assignment__study=study, done_at__isnull=True).exists()
    judgments = Judgment.objects.filter(study=study)
    assert judgments.count() == 3 * n_items
    assert set(judgments.values_list("revision", "is_latest").distinct()) == {(1, True)}
    assert all(j.served_at < j.submitted_at and j.seconds > 0 for j in judgments[:50])
    frame = judgments_frame(study=study)
    assert len(frame) == 3 * n_items * 4 and frame["score"].between(1, 5).all()
    progress = study_progress(study=study)
    assert [j["percent"] for j in progress["judges"]] == [100, 100, 100]
    # Careful judges give controls (nearly) their expected scores.
    identical = frame.loc[(frame["control_kind"] == "identical") & (frame["criterion"] == "adequacy"), "score"]
    assert identical.mean() > 4.5


def test_running_the_simulator_again_adds_nothing(researcher):
    study = open_judging(make_study_data(researcher, name="Twice", n_originals=4))
    _simulate(study.pk, "--judges", 2)
    before = Judgment.objects.count()
    out = _simulate(study.pk, "--judges", 2)
    assert Judgment.objects.count() == before
    assert "0 simulated judgments" in out and f"{before} items were already rated and kept" in out


def test_k_judges_per_item_gives_every_item_exactly_k_judgments(researcher):
    study = open_judging(make_study_data(researcher, name="Incomplete design", n_originals=10))
    _simulate(study.pk, "--judges", 4, "--judges-per-item", 2, "--seed", 9)
    per_item = Counter(Judgment.objects.filter(study=study).values_list("item__candidate_id", flat=True))
    assert len(per_item) == Candidate.objects.filter(original__study=study).count()
    assert set(per_item.values()) == {2}
    per_judge = Counter(Judgment.objects.filter(study=study).values_list("judge__username", flat=True))
    assert len(per_judge) == 4 and min(per_judge.values()) > 0


def test_judge_qc_flags_the_simulated_random_clicker_and_passes_careful_judges(researcher):
    study = open_judging(make_study_data(researcher, name="Clickers", n_originals=40))
    out = _simulate(study.pk, "--judges", 4, "--random-clickers", 1, "--seed", 2)
    assert "random clickers (judge QC should flag them): sim-judge-04" in out
    verdicts = {row["judge"]: row["qc"].passed for row in judge_qc(study=study)}
    assert verdicts == {"sim-judge-01": True, "sim-judge-02": True, "sim-judge-03": True, "sim-judge-04": False}


def test_simulated_systems_keep_their_latent_order(researcher):
    study = open_judging(make_study_data(researcher, name="Order", n_originals=40, systems=("alpha", "omega")))
    _simulate(study.pk, "--judges", 3, "--seed", 5)
    frame = judgments_frame(study=study)
    means = frame.loc[(frame["criterion"] == "overall") & ~frame["is_control"]].groupby("system")["score"].mean()
    # Two systems get the best (3.9) and the worst (2.5) of the default profiles, in name order.
    assert means["alpha"] - means["omega"] > 0.8


def test_the_simulator_prints_how_many_judges_a_target_reliability_needs(researcher):
    study = open_judging(make_study_data(researcher, name="Plan", n_originals=6))
    out = _simulate(study.pk, "--judges", 3, "--plan-only", "--target-reliability", "0.9")
    assert not Judgment.objects.exists()
    assert "planning for 30 items (item sd 0.7, judge bias sd 0.25, noise sd 0.6):" in out
    lines = [ln.split() for ln in out.splitlines() if ln.strip() and ln.split()[0].isdigit()]
    assert [int(ln[0]) for ln in lines] == [2, 3, 4, 5, 6, 8, 10]
    reliabilities = [float(ln[1]) for ln in lines]
    assert reliabilities == sorted(reliabilities)
    # Spearman–Brown with rho = 0.49 / (0.49 + 0.0625 + 0.36): k = ceil(0.9 (1 - rho) / (rho 0.1)) = 8.
    assert "judges needed for a reliability of 0.9: 8" in out
