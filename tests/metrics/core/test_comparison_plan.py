"""Which pairs a comparison study shows, and on which side."""

from __future__ import annotations

from collections import Counter

from metrics.core.comparison_plan import (
    pair_key_split,
    plan_control_pairs,
    plan_pairs,
    sides_for_judge,
)


def test_every_pair_of_distinct_systems_by_default():
    keys = plan_pairs({"o1": ["a", "b", "c"], "o2": ["a", "b"]}, seed=1)
    assert sorted(pair_key_split(k) for k in keys) == [
        ("o1", "a", "b"),
        ("o1", "a", "c"),
        ("o1", "b", "c"),
        ("o2", "a", "b"),
    ]


def test_a_limit_per_original_keeps_system_pairs_balanced():
    systems = {f"o{i}": ["s1", "s2", "s3", "s4"] for i in range(30)}
    keys = plan_pairs(systems, per_original=2, seed=5)
    per_original = Counter(pair_key_split(k)[0] for k in keys)
    assert set(per_original.values()) == {2}
    per_pair = Counter(pair_key_split(k)[1:] for k in keys)
    assert len(per_pair) == 6 and max(per_pair.values()) - min(per_pair.values()) <= 1
    assert keys == plan_pairs(systems, per_original=2, seed=5)


def test_control_pairs_set_each_control_against_a_genuine_system_of_the_same_original():
    keys = plan_control_pairs(
        {"o1": ["control:identical"], "o2": ["control:identical"]}, {"o1": ["a", "b"], "o2": []}, seed=3
    )
    assert len(keys) == 1
    original, a, b = pair_key_split(keys[0])
    assert original == "o1" and "control:identical" in (a, b) and ({a, b} - {"control:identical"}) <= {"a", "b"}


def test_sides_are_a_fair_seeded_coin_not_the_name_order():
    order = [f"k{i}" for i in range(2000)]
    sides = sides_for_judge(order, seed=11)
    assert sides == sides_for_judge(order, seed=11)
    assert 0.45 < sum(sides) / len(sides) < 0.55
    assert sides != sides_for_judge(order, seed=12)
