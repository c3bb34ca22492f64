"""Plackett–Luce from k-way rankings: equal to choix on its own test cases; ties the Breslow way."""

import json
import math
from pathlib import Path

import choix
import numpy as np
import pytest

from metrics.core.ranking.orders import Ranking
from metrics.core.ranking.plackett_luce import plackett_luce, top1_choices

DATA = Path(__file__).parent / "data"
CASES = sorted(DATA.glob("choix-testcase-rankings-*.json"))


def _sample(params, n, seed):
    """n Plackett–Luce rankings of every item, best first (Gumbel trick: argsort of β + Gumbel noise)."""
    rng = np.random.default_rng(seed)
    params = np.asarray(params, dtype=float)
    return [tuple(np.argsort(-(params + rng.gumbel(size=params.size)))) for _ in range(n)]


def _rankings(data, *, judge="j"):
    return [Ranking(judge, f"o{n}", tuple((f"s{i}",) for i in order)) for n, order in enumerate(data)]


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_plackett_luce_equals_choix_on_its_own_test_cases(path):
    case = json.loads(path.read_text())
    result = plackett_luce(_rankings(case["data"]), alpha=0.0, n_boot=0)
    got = dict(zip(result.systems, result.params))
    for i, expected in enumerate(case["ml_est"]):
        # choix's own tolerances (tests/test_lsr.py: atol 1e-4, rtol 1e-5)
        assert got[f"s{i}"] == pytest.approx(expected, abs=1e-4, rel=1e-5)


def test_without_ties_the_top1_route_is_the_ranking_likelihood():
    data = [(0, 1, 2, 3), (2, 0, 3, 1), (1, 3, 0, 2), (3, 2, 1, 0), (0, 2, 1, 3)]
    choices = [c for r in data for c in top1_choices([(i,) for i in r])]
    assert np.allclose(choix.ilsr_top1(4, choices), choix.ilsr_rankings(4, data), atol=1e-6)


def test_a_tie_is_a_choice_from_the_whole_remaining_set():
    assert top1_choices([(0,), (1, 2), (3,)]) == [(0, (1, 2, 3)), (1, (2, 3)), (2, (1, 3))]
    assert top1_choices([(0, 1), (2,)]) == [(0, (1, 2)), (1, (0, 2))]
    # a tie at the bottom is a choice from the group itself (Breslow); a last single place adds nothing
    assert top1_choices([(0,), (1, 2)]) == [(0, (1, 2)), (1, (2,)), (2, (1,))]
    assert top1_choices([(0,), (1,)]) == [(0, (1,))]


def _breslow_loglik(beta, rankings, index):
    total = 0.0
    for r in rankings:
        remaining = list(r.systems)
        for group in r.groups:
            denom = math.log(sum(math.exp(beta[index[s]]) for s in remaining))
            total += sum(beta[index[a]] - denom for a in group)
            remaining = [s for s in remaining if s not in group]
    return total


def test_with_ties_the_fit_maximises_the_breslow_likelihood():
    rankings = [
        Ranking("j1", "o1", (("a",), ("b", "c"), ("d",))),
        Ranking("j2", "o1", (("b",), ("a",), ("d",), ("c",))),
        Ranking("j1", "o2", (("a", "b"), ("c",), ("d",))),
        Ranking("j2", "o2", (("c",), ("a",), ("b", "d"))),
        Ranking("j3", "o3", (("d",), ("a",), ("b",), ("c",))),
    ]
    result = plackett_luce(rankings, alpha=0.0, n_boot=0)
    index = {s: i for i, s in enumerate(sorted(result.systems))}
    beta = np.zeros(4)
    for s, p in zip(result.systems, result.params):
        beta[index[s]] = p
    best = _breslow_loglik(beta, rankings, index)
    for j in range(4):
        for step in (1e-3, -1e-3):
            moved = beta.copy()
            moved[j] += step
            assert _breslow_loglik(moved, rankings, index) <= best + 1e-9


def test_a_tie_at_the_bottom_is_evidence_of_equality_as_in_the_middle():
    """Issue 41: a tie in the middle pulled two systems together, the same tie at the bottom
    counted for nothing (called Breslow's rule, which it was not there)."""

    def gap(n_ties: int, where: str) -> float:
        beaten = [Ranking("j0", f"x{k}", (("x",), ("y",), ("z",))) for k in range(3)]
        tie = (("top",), ("x", "y")) if where == "bottom" else (("top",), ("x", "y"), ("low",))
        ties = [Ranking("j1", f"t{k}", tie) for k in range(n_ties)]
        fit = plackett_luce(beaten + ties, n_boot=0)
        beta = dict(zip(fit.systems, fit.params))
        return beta["x"] - beta["y"]

    for where in ("middle", "bottom"):
        assert gap(12, where) < 0.5 * gap(0, where), where  # many ties pull x and y together
    assert gap(12, "bottom") == pytest.approx(gap(12, "middle"), rel=0.25)


def test_systems_always_tied_get_the_same_strength():
    rankings = [Ranking(f"j{k}", f"o{k}", (("top",), ("x", "y"), ("low",))) for k in range(5)]
    fit = plackett_luce(rankings, n_boot=0)
    result = dict(zip(fit.systems, fit.params))
    assert result["x"] == pytest.approx(result["y"])
    assert result["top"] > result["x"] > result["low"]


def test_bootstrap_over_originals_is_seeded_and_brackets_the_estimate():
    truth = {"a": 1.0, "b": 0.3, "c": -0.2, "d": -1.1}
    sampled = _sample(list(truth.values()), 60, seed=5)
    names = list(truth)
    rankings = [Ranking(f"j{n % 3}", f"o{n // 2}", tuple((names[i],) for i in r)) for n, r in enumerate(sampled)]
    first = plackett_luce(rankings, n_boot=100, seed=7)
    again = plackett_luce(rankings, n_boot=100, seed=7)
    assert first == again
    assert first.n_originals == 30 and first.n_rankings == 60
    for p, lo, hi in zip(first.params, first.low, first.high):
        assert lo <= p <= hi
    assert sum(first.probabilities) == pytest.approx(1.0)
    assert first.params == tuple(sorted(first.params, reverse=True))
    assert first.to_dict()["systems"][0]["system"] == first.systems[0]


def test_the_intervals_depend_on_the_rankings_and_the_seed_only_not_their_order():
    """Issue 42: identical rankings re-imported (read back in another order, ties listed another
    way) gave other bootstrap intervals with the same seed."""
    import random

    truth = {"a": 1.0, "b": 0.3, "c": -0.2, "d": -1.1}
    names = list(truth)
    sampled = _sample(list(truth.values()), 40, seed=3)
    rankings = []
    for n, r in enumerate(sampled):
        order = [names[i] for i in r]
        groups = (tuple(order[:2]),) + tuple((s,) for s in order[2:]) if n % 4 == 0 else tuple((s,) for s in order)
        rankings.append(Ranking(f"j{n % 3}", f"o{n // 2:02d}", groups))
    first = plackett_luce(rankings, n_boot=60, seed=11)
    for shuffle_seed in range(3):
        again = list(rankings)
        random.Random(shuffle_seed).shuffle(again)
        again = [Ranking(r.judge, r.original, tuple(tuple(reversed(g)) for g in r.groups)) for r in again]
        assert plackett_luce(again, n_boot=60, seed=11) == first
    assert plackett_luce(rankings, n_boot=60, seed=12) != first  # the seed still matters


def test_an_unbeaten_system_needs_the_prior_and_gets_a_finite_strength():
    rankings = [Ranking("j", f"o{k}", (("a",), ("b",), ("c",))) for k in range(3)]
    with pytest.raises(ValueError):
        plackett_luce(rankings, alpha=0.0, n_boot=0)
    result = plackett_luce(rankings, n_boot=20)
    assert result.systems == ("a", "b", "c") and all(math.isfinite(p) for p in result.params)


def test_bootstrap_orders_clearly_different_systems_into_clusters_and_keeps_close_ones_together():
    params = [2.0, 0.0, 0.02, -2.0]  # b and c are nearly equal
    names = ["a", "b", "c", "d"]
    sampled = _sample(params, 200, seed=11)
    rankings = [Ranking("j", f"o{n}", tuple((names[i],) for i in r)) for n, r in enumerate(sampled)]
    result = plackett_luce(rankings, n_boot=200, seed=1)
    assert result.systems[0] == "a" and result.systems[-1] == "d"
    assert result.cluster[0] == 1 and result.cluster[1] == 2 and result.cluster[1] == result.cluster[2]
    assert result.cluster[3] == 3
    assert result.p_next[0] < 0.05 and result.p_next[1] > 0.05 and result.p_next[-1] is None
