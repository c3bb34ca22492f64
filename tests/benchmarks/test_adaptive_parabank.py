"""benchmarks/adaptive_parabank.py: a policy against random, with an interval and a test (issue 41)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
spec = importlib.util.spec_from_file_location("adaptive_parabank", ROOT / "benchmarks" / "adaptive_parabank.py")
assert spec and spec.loader
adaptive_parabank = importlib.util.module_from_spec(spec)
spec.loader.exec_module(adaptive_parabank)


def test_the_same_replays_as_random_give_a_ratio_of_one_and_no_difference():
    base = [9600.0, 12000.0, 10400.0, 8800.0, 11200.0, 13000.0]
    out = adaptive_parabank.against_random(list(base), base)
    assert out["ratio"] == 1.0
    assert out["ratio_low"] <= 1.0 <= out["ratio_high"]
    assert out["mann_whitney_p"] == stats.mannwhitneyu(base, base, alternative="two-sided").pvalue == 1.0


def test_a_policy_that_needs_half_as_many_judgments_is_told_apart_with_an_interval_around_one_half():
    rng = np.random.default_rng(1)
    base = list(rng.normal(12000, 800, 40))
    half = [x / 2 for x in rng.normal(12000, 800, 40)]
    out = adaptive_parabank.against_random(half, base)
    assert out["ratio_low"] < 0.5 < out["ratio_high"] < 0.6
    assert out["mann_whitney_p"] == stats.mannwhitneyu(half, base, alternative="two-sided").pvalue < 1e-10


def test_the_default_seeds_are_40_held_out_from_those_that_chose_the_window():
    args = adaptive_parabank.parse_args([])
    seeds = range(args.seed_start, args.seed_start + args.seeds)
    assert len(seeds) == 40 and not set(seeds) & set(range(10))  # seeds 0-9 chose window 2
    assert args.windows == "2"
