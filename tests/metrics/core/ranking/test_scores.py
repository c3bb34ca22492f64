"""The 0–100 scores of a ranking study (metrics.core.ranking.scores): per system, WMT z as
metrics.core.stats.zscores computes it; per judge, scores against their own order, counted by
hand and τ-b equal to scipy's."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy.stats import kendalltau

from metrics.core.ranking.scores import ScoredCandidate, score_order_agreement, system_scores


def _c(judge, ranking, system, score, rank, original="o1", control=False):
    return ScoredCandidate(judge, ranking, original, system, float(score), float(rank), control)


def test_pairs_of_different_groups_agree_contradict_or_tie_on_the_score():
    cands = [
        # ann: x > y = z, scores 90, 50, 60: (x, y) and (x, z) agree; y and z are tied in the order: no pair
        _c("ann", "1", "x", 90, 1, "o1"),
        _c("ann", "1", "y", 50, 2.5, "o1"),
        _c("ann", "1", "z", 60, 2.5, "o1"),
        # ann: x > y with equal scores: a score tie, and no tau (constant scores)
        _c("ann", "2", "x", 70, 1, "o2"),
        _c("ann", "2", "y", 70, 2, "o2"),
        # bob: x > y > z scored upside down: three contradictions, tau -1
        _c("bob", "3", "x", 10, 1),
        _c("bob", "3", "y", 50, 2),
        _c("bob", "3", "z", 90, 3),
    ]
    ann, bob = score_order_agreement(cands)
    assert (ann.judge, ann.n_rankings, ann.pairs, ann.agree, ann.score_ties, ann.contradict) == ("ann", 2, 3, 2, 1, 0)
    assert ann.share_contradicting == 0.0 and ann.n_tau == 1
    assert ann.mean_tau == pytest.approx(kendalltau([-1, -2.5, -2.5], [90, 50, 60]).statistic)
    assert (bob.pairs, bob.agree, bob.contradict, bob.share_contradicting, bob.mean_tau) == (3, 0, 3, 1.0, -1.0)


def test_system_scores_are_wmt_z_over_each_judges_genuine_scores():
    cands = [
        _c("ann", "1", "x", 80, 1, "o1"),
        _c("ann", "1", "y", 40, 2, "o1"),
        _c("ann", "1", "control:copy", 100, 1, "o1", control=True),
        _c("ann", "2", "x", 60, 1, "o2"),
        _c("ann", "2", "y", 20, 2, "o2"),
        _c("bob", "3", "x", 90, 1, "o1"),
        _c("bob", "3", "y", 70, 2, "o1"),
    ]
    got = system_scores(cands).set_index("system")
    assert set(got.index) == {"x", "y"}  # controls left out
    genuine = pd.DataFrame([c.__dict__ for c in cands if not c.is_control])
    stats = genuine.groupby("judge")["score"].agg(["mean", "std"])
    genuine["z"] = (genuine["score"] - genuine["judge"].map(stats["mean"])) / genuine["judge"].map(stats["std"])
    per_original = genuine.groupby(["system", "original"])[["score", "z"]].mean().groupby("system").mean()
    assert got["raw"].to_dict() == pytest.approx(per_original["score"].to_dict())
    assert got["z"].to_dict() == pytest.approx(per_original["z"].to_dict())
    assert got.index[0] == "x"  # best z first


def test_no_scores_gives_empty_tables():
    assert score_order_agreement([]) == []
    assert system_scores([]).empty
