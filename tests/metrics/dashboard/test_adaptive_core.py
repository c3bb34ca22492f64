"""Adaptive allocation's math (metrics.core.adaptive): priorities go where the ranking is unsure."""

from __future__ import annotations

import math

from metrics.core.adaptive import SystemTally, pair_wrong_probability, pick_item, ranking_wrong_bound, system_priorities


def tally(values):
    return SystemTally(len(values), float(sum(values)), float(sum(v * v for v in values)))


def test_a_pair_far_apart_is_almost_surely_in_the_right_order_and_a_close_pair_is_not():
    far = pair_wrong_probability(tally([5, 5, 4, 5] * 5), tally([1, 2, 1, 1] * 5), pooled=1.0)
    close = pair_wrong_probability(tally([3, 4, 3, 3]), tally([3, 3, 4, 3]), pooled=1.0)
    assert far < 1e-6 and 0.3 < close <= 0.5


def test_systems_in_an_unseparated_pair_get_priority_over_a_separated_one():
    tallies = {
        "top": tally([5, 5, 4, 5, 5, 4] * 4),
        "mid_a": tally([3, 3, 4, 2, 3, 3]),
        "mid_b": tally([3, 2, 3, 4, 3, 3]),
    }
    p = system_priorities(tallies)
    assert p["mid_a"] > p["top"] and p["mid_b"] > p["top"]


def test_a_system_without_judgments_comes_first():
    p = system_priorities({"a": tally([3, 4]), "b": SystemTally(0, 0.0, 0.0)})
    assert math.isinf(p["b"]) and p["b"] > p["a"]


def test_the_wrong_ranking_bound_shrinks_as_judgments_accumulate():
    few = {"a": tally([4, 3, 4]), "b": tally([3, 3, 2]), "c": tally([2, 1, 2])}
    many = {k: SystemTally(t.n * 20, t.total * 20, t.total_sq * 20) for k, t in few.items()}
    assert ranking_wrong_bound(many) < ranking_wrong_bound(few) <= 1.0
    assert ranking_wrong_bound({"a": tally([3]), "b": SystemTally(0, 0, 0)}) == 1.0


def test_pick_item_takes_the_highest_priority_keeps_a_control_at_the_head_and_prefers_the_first_on_ties():
    pr = {"a": 1.0, "b": 5.0}
    assert pick_item(["a", "b", "a"], pr) == 1
    assert pick_item([None, "b"], pr) == 0
    assert pick_item(["b", "a", "b"], pr) == 0
    assert pick_item(["a", None, "a"], pr) == 0
