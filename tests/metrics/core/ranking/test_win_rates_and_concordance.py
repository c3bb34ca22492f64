"""Win rates, Kendall's W (tie-corrected, equal to pingouin and scipy), and the ranking file form."""

import numpy as np
import pandas as pd
import pingouin
import pytest
from scipy import stats as sps

from metrics.core.ranking.concordance import kendalls_w, ranking_concordance
from metrics.core.ranking.controls import ranking_control_checks
from metrics.core.ranking.orders import Ranking, groups_from_json, groups_to_json, midranks
from metrics.core.ranking.win_rates import pairwise_records, system_win_rates


def test_nested_lists_are_ties_and_round_trip():
    groups = groups_from_json(["human1", ["machine1", "machine2"], "machine3"])
    assert groups == (("human1",), ("machine1", "machine2"), ("machine3",))
    assert groups_to_json(groups) == ["human1", ["machine1", "machine2"], "machine3"]
    assert midranks(groups) == {"human1": 1, "machine1": 2.5, "machine2": 2.5, "machine3": 4}


@pytest.mark.parametrize(
    "bad, words",
    [
        ("a b", "is a list"),
        (["a", "a"], "twice"),
        (["a", []], "empty"),
        (["a", [["b"]]], "one level"),
        (["a", 3], "non-empty string"),
        (["a"], "at least two"),
        (["a", ""], "non-empty string"),
    ],
)
def test_malformed_rankings_say_what_is_wrong(bad, words):
    with pytest.raises(ValueError, match=words):
        groups_from_json(bad)


def test_win_rates_count_ties_as_half():
    rankings = [
        Ranking("j1", "o1", (("a",), ("b",), ("c",))),
        Ranking("j2", "o1", (("b", "a"), ("c",))),
        Ranking("j1", "o2", (("c",), ("a",), ("b",))),
    ]
    pairs = {(p.a, p.b): p for p in pairwise_records(rankings)}
    ab = pairs[("a", "b")]
    assert (ab.wins, ab.ties, ab.losses) == (2, 1, 0) and ab.win_rate == pytest.approx(2.5 / 3)
    assert ab.decisive_win_rate == 1.0
    ac = pairs[("a", "c")]
    assert (ac.wins, ac.ties, ac.losses) == (2, 0, 1)
    systems = {s.system: s for s in system_win_rates(rankings)}
    assert systems["a"].win_rate == pytest.approx((4 + 0.5) / 6)
    assert systems["a"].firsts == 2 and systems["c"].firsts == 1 and systems["b"].firsts == 1
    assert [s.system for s in system_win_rates(rankings)][0] == "a"


def test_kendalls_w_with_ties_equals_pingouin_and_scipy_friedman():
    rng = np.random.default_rng(1)
    # 7 judges, 5 candidates, coarse scores so that ties happen, ranked with mid-ranks (1 = best)
    scores = rng.integers(0, 4, size=(7, 5)).astype(float) + np.array([3, 2, 1, 1, 0])
    ranks = np.vstack([sps.rankdata(-row) for row in scores])
    assert any(len(set(row)) < 5 for row in ranks)  # the case has ties
    w, chi2, p = kendalls_w(ranks)
    frame = pd.DataFrame(ranks).melt(ignore_index=False, var_name="candidate", value_name="rank").reset_index()
    expected = pingouin.friedman(data=frame, dv="rank", within="candidate", subject="index")
    assert w == pytest.approx(float(expected["W"].iloc[0]))
    friedman = sps.friedmanchisquare(*ranks.T)
    assert chi2 == pytest.approx(friedman.statistic)
    assert p == pytest.approx(friedman.pvalue)


def test_kendalls_w_is_one_for_identical_orders_and_zero_for_opposite_pairs():
    assert kendalls_w([[1, 2, 3, 4]] * 3)[0] == pytest.approx(1.0)
    assert kendalls_w([[1, 2, 3, 4], [4, 3, 2, 1]])[0] == pytest.approx(0.0)
    assert np.isnan(kendalls_w([[2.5] * 4, [2.5] * 4])[0])  # every candidate tied by everyone


def test_concordance_is_per_original_over_common_candidates():
    rankings = [
        Ranking("j1", "o1", (("a",), ("b",), ("c",))),
        Ranking("j2", "o1", (("a",), ("b",), ("c",))),
        Ranking("j1", "o2", (("a",), ("b",), ("c",), ("d",))),
        Ranking("j2", "o2", (("c",), ("b",), ("a",))),  # d not shown to j2: left out
        Ranking("j1", "o3", (("a",), ("b",))),  # one judge: no W
    ]
    result = ranking_concordance(rankings)
    per = {o.original: o for o in result.originals}
    assert set(per) == {"o1", "o2"}
    assert per["o1"].w == pytest.approx(1.0)
    assert per["o2"].n_candidates == 3 and per["o2"].w == pytest.approx(0.0)
    assert result.mean_w == pytest.approx(0.5)


def test_ranking_controls_expect_the_copy_first_and_unrelated_sentences_last():
    kinds = {"control:identical": "identical", "control:random": "random", "control:unigram": "unigram"}
    rankings = [
        Ranking("careful", "o1", (("control:identical", "a"), ("b",), ("control:random",))),
        Ranking("careless", "o1", (("a",), ("control:identical",), ("control:random", "b"))),
        Ranking("careless", "o2", (("control:unigram",), ("a",), ("b",))),
    ]
    checks = {(c.judge, c.original, c.system): c for c in ranking_control_checks(rankings, kinds)}
    assert checks[("careful", "o1", "control:identical")].passed
    assert checks[("careful", "o1", "control:random")].passed
    assert not checks[("careless", "o1", "control:identical")].passed
    assert checks[("careless", "o1", "control:random")].passed  # tied last is last
    unigram = checks[("careless", "o2", "control:unigram")]
    assert not unigram.passed and (unigram.group, unigram.n_groups) == (1, 3)
    assert len(checks) == 5
