"""Side-by-side comparison statistics: win rates, Bradley–Terry (choix), α on pairs, control accuracy."""

from __future__ import annotations

import itertools
import math

import choix
import krippendorff
import numpy as np
import pytest
from scipy.stats import binomtest

from metrics.core.stats.comparison import (
    Comparison,
    bradley_terry,
    comparison_agreement,
    comparison_summary,
    control_accuracy,
    pair_win_rates,
    system_win_rates,
)

# choix's own test cases (lucasmaystre/choix, tests/data/testcase-pairwise-{1,2}.json):
# (winner, loser) pairs and the ML estimate as strengths normalised to mean 1.
CHOIX_CASES = [
    {"num_items": 3, "data": [[0, 1], [1, 2], [2, 0]], "ml_est": [1.0, 1.0, 1.0]},
    {"num_items": 3, "data": [[0, 1], [0, 1], [1, 2], [2, 0]], "ml_est": [1.43586088, 0.62035049, 0.94378863]},
]


def _as_comparisons(data, names="xyz") -> list[Comparison]:
    """Each (winner, loser) pair as one judgment, the winner shown on alternating sides."""
    out = []
    for k, (w, lost) in enumerate(data):
        if k % 2:
            out.append(Comparison(judge=f"j{k}", original=f"o{k}", left=names[w], right=names[lost], answer="left"))
        else:
            out.append(Comparison(judge=f"j{k}", original=f"o{k}", left=names[lost], right=names[w], answer="right"))
    return out


@pytest.mark.parametrize("case", CHOIX_CASES)
def test_bradley_terry_equals_choix_on_its_own_test_cases(case):
    result = bradley_terry(_as_comparisons(case["data"]), alpha=0.0, n_boot=0)
    assert result.systems == ("x", "y", "z")
    assert np.allclose(result.strengths(), case["ml_est"], atol=1e-6)
    direct = choix.ilsr_pairwise(case["num_items"], case["data"])
    assert np.allclose(result.theta, direct - np.mean(direct), atol=1e-6)


def test_a_tie_is_half_a_win_each_way():
    # x beats y once, and they tie twice: x has 2 "wins" of 4 halves vs y's 1 (weights 1 + 0.5 + 0.5).
    cs = [
        Comparison("j1", "o1", "x", "y", "left"),
        Comparison("j1", "o2", "y", "x", "tie"),
        Comparison("j2", "o1", "x", "y", "tie"),
        Comparison("j2", "o3", "x", "z", "left"),
        Comparison("j2", "o4", "z", "y", "left"),
    ]
    got = bradley_terry(cs, alpha=0.0, n_boot=0)
    # Independent fit: maximise the weighted BT log-likelihood with scipy.
    from scipy.optimize import minimize

    idx = {"x": 0, "y": 1, "z": 2}
    wins = [(0, 1, 1.0), (0, 1, 0.5), (1, 0, 0.5), (0, 1, 0.5), (1, 0, 0.5), (0, 2, 1.0), (2, 1, 1.0)]

    def nll(t):
        return -sum(w * (t[i] - np.logaddexp(t[i], t[j])) for i, j, w in wins)

    ref = minimize(nll, np.zeros(3), method="BFGS", options={"gtol": 1e-10}).x
    ref -= ref.mean()
    assert np.allclose([got.theta[idx[s]] for s in got.systems], ref, atol=1e-4)


def test_bootstrap_interval_contains_the_estimate_and_is_reproducible():
    rng = np.random.default_rng(3)
    cs = []
    strength = {"s1": 1.0, "s2": 0.0, "s3": -1.0}
    for k in range(300):
        a, b = rng.choice(list(strength), size=2, replace=False)
        p = 1 / (1 + math.exp(strength[b] - strength[a]))
        cs.append(Comparison(f"j{k % 5}", f"o{k}", a, b, "left" if rng.random() < p else "right"))
    r1 = bradley_terry(cs, n_boot=100, seed=7)
    r2 = bradley_terry(cs, n_boot=100, seed=7)
    assert r1 == r2
    assert [row["system"] for row in r1.ranking()] == ["s1", "s2", "s3"]
    for t, lo, hi in zip(r1.theta, r1.ci_low, r1.ci_high):
        assert lo <= t <= hi


def test_win_rates_count_ties_and_ignore_sides_and_controls():
    cs = [
        Comparison("j1", "o1", "b", "a", "left"),  # b wins
        Comparison("j2", "o1", "a", "b", "right"),  # b wins
        Comparison("j1", "o2", "a", "b", "tie"),
        Comparison("j1", "o3", "a", "b", "left"),  # a wins
        Comparison("j1", "o3", "control:identical", "a", "right", is_control=True, expected="a"),
    ]
    (row,) = pair_win_rates(cs)
    assert (row["system_a"], row["system_b"], row["n"], row["wins_a"], row["ties"], row["wins_b"]) == (
        "a",
        "b",
        4,
        1,
        1,
        2,
    )
    assert row["score_a"] == pytest.approx(1.5 / 4)
    assert row["win_rate_a"] == pytest.approx(1 / 3)
    systems = {r["system"]: r for r in system_win_rates(cs)}
    assert set(systems) == {"a", "b"}
    assert (systems["b"]["wins"], systems["b"]["ties"], systems["b"]["losses"]) == (2, 1, 1)


def test_agreement_is_krippendorff_nominal_on_canonical_outcomes():
    # Two judges see the same pairs on opposite sides; their answers agree on the systems.
    cs = []
    outcomes = {"o1": "x", "o2": "y", "o3": None, "o4": "x"}
    for o, win in outcomes.items():
        for judge, (left, right) in (("j1", ("x", "y")), ("j2", ("y", "x"))):
            answer = "tie" if win is None else ("left" if win == left else "right")
            cs.append(Comparison(judge, o, left, right, answer))
    cs.append(Comparison("j2", "o4", "y", "x", "left"))  # a later line for the same cell replaces j2's answer
    got = comparison_agreement(cs)
    data = np.array([[0, 2, 1, 0], [0, 2, 1, 2]], dtype=float)
    assert got["units"] == 4
    assert got["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def test_control_accuracy_uses_the_expected_winner_and_a_binomial_test():
    cs = [
        Comparison("j1", f"o{k}", "control:identical", "g", "right" if k < 5 else "left", is_control=True, expected="g")
        for k in range(6)
    ]
    (row,) = control_accuracy(cs, qc_alpha=0.05)
    assert (row["n"], row["correct"]) == (6, 5)
    assert row["pvalue"] == pytest.approx(binomtest(5, 6, 1 / 3, alternative="greater").pvalue)
    assert row["passes"] is True


def test_summary_leaves_excluded_judges_out_of_the_tables():
    cs = [
        Comparison(j, f"o{k}", a, b, "left")
        for j in ("j1", "j2")
        for k, (a, b) in enumerate(itertools.permutations("pqr", 2))
    ]
    s = comparison_summary(cs, excluded_judges=["j2"], n_boot=20)
    assert s["n_comparisons"] == 6 and s["n_judges"] == 1
    assert {r["system"] for r in s["bradley_terry"]["ranking"]} == {"p", "q", "r"}
