"""Sets of k candidates per original and the screen order (metrics.core.ranking.sets)."""

from __future__ import annotations

from collections import Counter

import pytest

from metrics.core.ranking.sets import plan_sets, screen_order, set_key, set_key_split

SYSTEMS = [f"s{i}" for i in range(7)]


def test_an_original_with_k_or_fewer_candidates_is_one_set():
    keys = plan_sets({"o1": ["b", "a", "c"], "o2": ["a", "b"]}, {}, k=4, seed=1)
    assert [set_key_split(k) for k in keys] == [("o1", ("a", "b", "c")), ("o2", ("a", "b"))]


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_more_candidates_than_k_give_sets_of_k_covering_every_system_balanced_over_originals(k):
    genuine = {f"o{i:02d}": SYSTEMS for i in range(30)}
    keys = plan_sets(genuine, {}, k=k, seed=7)
    per_original: dict[str, set] = {}
    used: Counter[str] = Counter()
    for key in keys:
        original, systems = set_key_split(key)
        assert len(systems) == k == len(set(systems))
        per_original.setdefault(original, set()).update(systems)
        used.update(systems)
    assert all(s == set(SYSTEMS) for s in per_original.values())
    assert sum(1 for key in keys if key.startswith("o00")) == -(-len(SYSTEMS) // k)
    assert max(used.values()) - min(used.values()) <= 1


def test_each_control_gets_a_set_with_k_minus_one_genuine_candidates():
    keys = plan_sets(
        {"o1": SYSTEMS[:5], "o2": ["a"], "o3": []},
        {"o1": ["control:identical", "control:random"], "o2": ["control:identical"], "o3": ["control:identical"]},
        k=3,
        seed=1,
    )
    control_sets = [set_key_split(k) for k in keys if "control:" in k]
    assert len(control_sets) == 3  # o3 has no genuine candidate to rank the control against
    for original, systems in control_sets:
        assert sum(s.startswith("control:") for s in systems) == 1
        assert len(systems) == (3 if original == "o1" else 2)


def test_the_plan_is_the_seeds():
    genuine = {f"o{i}": SYSTEMS for i in range(5)}
    assert plan_sets(genuine, {}, k=3, seed=1) == plan_sets(genuine, {}, k=3, seed=1)
    assert plan_sets(genuine, {}, k=3, seed=1) != plan_sets(genuine, {}, k=3, seed=2)
    with pytest.raises(ValueError):
        plan_sets(genuine, {}, k=1, seed=1)


def test_the_screen_order_is_a_seeded_shuffle_independent_of_names():
    key = set_key("o1", SYSTEMS[:4])
    shown = screen_order(SYSTEMS[:4], seed=3, key=key)
    assert sorted(shown) == SYSTEMS[:4] and shown == screen_order(list(reversed(SYSTEMS[:4])), seed=3, key=key)
    firsts = Counter(screen_order(SYSTEMS[:4], seed=s, key=key)[0] for s in range(400))
    assert set(firsts) == set(SYSTEMS[:4]) and min(firsts.values()) > 60  # each about 100 of 400
