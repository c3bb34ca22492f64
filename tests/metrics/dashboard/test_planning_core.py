"""The planner (metrics.core.planning): its promises hold on fresh simulations, and pilot
estimates recover the simulator's parameters."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.core.planning import (
    PlanAssumptions,
    assumptions_from_pilot,
    neighbours_separated,
    per_original,
    plan_study,
    ranking_is_right,
    separation_table,
    simulate,
    wilson_interval,
)
from metrics.core.stats.simulate import simulate_judgments

SMALL = PlanAssumptions({"a": 3.3, "b": 3.1, "c": 2.8}, item_sd=0.6, judge_bias_sd=0.2, noise_sd=0.7)


def _fresh_rate(
    a: PlanAssumptions, *, n: int, seed: int, n_originals: int, n_judges: int, k: int | None, check
) -> float:
    hits = 0
    for i in range(n):
        frame = simulate(a, n_originals=n_originals, n_judges=n_judges, judges_per_item=k, seed=seed + i)
        hits += check(per_original(frame))
    return hits / n


def _within(promised, fresh: float, n_fresh: int) -> bool:
    """The fresh rate lies in the promised interval, widened by the fresh sample's own error."""
    margin = 1.96 * math.sqrt(max(fresh * (1 - fresh), 1e-9) / n_fresh)
    return promised.low - margin <= fresh <= promised.high + margin


@pytest.mark.slow
def test_the_promised_ranking_probability_is_met_on_200_fresh_simulated_studies():
    plan = plan_study(SMALL, n_originals=15, n_judges=3, n_simulations=200, n_agreement=0, seed=1)
    assert 0.2 < plan.ranking_right.estimate < 0.98  # a study where the answer is genuinely uncertain
    fresh_right = _fresh_rate(
        SMALL,
        n=200,
        seed=100_000,
        n_originals=15,
        n_judges=3,
        k=None,
        check=lambda t: ranking_is_right(t, SMALL.system_means),
    )
    fresh_sep = _fresh_rate(
        SMALL,
        n=200,
        seed=100_000,
        n_originals=15,
        n_judges=3,
        k=None,
        check=lambda t: neighbours_separated(t, SMALL.system_means, 0.05),
    )
    assert _within(plan.ranking_right, fresh_right, 200), (plan.ranking_right, fresh_right)
    assert _within(plan.pairs_separated, fresh_sep, 200), (plan.pairs_separated, fresh_sep)


def test_more_originals_make_the_ranking_more_likely_right():
    small = plan_study(SMALL, n_originals=8, n_judges=2, n_simulations=120, n_agreement=0, seed=3)
    large = plan_study(SMALL, n_originals=80, n_judges=2, n_simulations=120, n_agreement=0, seed=3)
    assert large.ranking_right.estimate > small.ranking_right.estimate
    assert large.pairs_separated.estimate > small.pairs_separated.estimate


def test_agreement_interval_narrows_with_more_originals():
    narrow = plan_study(SMALL, n_originals=60, n_judges=3, n_simulations=8, n_agreement=8, n_boot=100, seed=2)
    wide = plan_study(SMALL, n_originals=8, n_judges=3, n_simulations=8, n_agreement=8, n_boot=100, seed=2)
    assert narrow.agreement_width < wide.agreement_width


def test_the_separation_table_reaches_about_its_power_and_needs_fewer_originals_with_more_judges():
    rows = separation_table(SMALL, delta=0.5, power=0.8, judge_counts=(1, 3), n_simulations=80, seed=5)
    assert rows[0].n_originals > rows[1].n_originals
    assert [r.judgments for r in rows] == [r.n_originals * 3 * r.judges_per_item for r in rows]
    for r in rows:  # the normal approximation is close: 0.8 lies near the simulated interval
        assert r.power.low - 0.1 <= 0.8 <= r.power.high + 0.1, r


def test_pilot_estimates_recover_the_simulators_parameters():
    frame = simulate_judgments(
        n_originals=150,
        n_judges=4,
        controls=(),
        discrete=False,
        seconds=False,
        seed=9,
        item_sd=0.7,
        judge_bias_sd=0.3,
        noise_sd=0.5,
    )
    a = assumptions_from_pilot(frame)
    assert a.source == "pilot" and set(a.system_means) == {"human1", "human2", "machine1", "machine2"}
    assert a.item_sd == pytest.approx(0.7, abs=0.1)
    assert a.noise_sd == pytest.approx(0.5, abs=0.08)
    assert a.judge_bias_sd == pytest.approx(0.3, abs=0.25)  # four judges: a rough estimate
    order = sorted(a.system_means, key=lambda s: -a.system_means[s])
    assert order == ["human1", "human2", "machine1", "machine2"]


def test_wilson_interval_contains_the_estimate_and_stays_in_0_1():
    for k, n in ((0, 10), (10, 10), (37, 200)):
        p = wilson_interval(k, n)
        assert 0 <= p.low <= p.estimate <= p.high <= 1
    assert math.isnan(wilson_interval(0, 0).estimate)


def test_a_plan_refuses_impossible_settings():
    with pytest.raises(ValueError, match="two systems"):
        PlanAssumptions({"only": 3.0})
    with pytest.raises(ValueError, match="judges per item"):
        plan_study(SMALL, n_originals=5, n_judges=2, judges_per_item=3, n_simulations=2)
    with pytest.raises(ValueError, match="noise_sd"):
        PlanAssumptions({"a": 1, "b": 2}, noise_sd=float("nan"))


def test_plans_are_deterministic_for_a_seed():
    one = plan_study(SMALL, n_originals=6, n_judges=2, n_simulations=20, n_agreement=2, n_boot=50, seed=4)
    two = plan_study(SMALL, n_originals=6, n_judges=2, n_simulations=20, n_agreement=2, n_boot=50, seed=4)
    assert one.to_dict() == two.to_dict()
    assert np.isfinite(one.agreement_width)


def test_plan_cost_counts_every_simulated_judgment_of_both_tables_before_computing_them(monkeypatch):
    """Issue 38: the separation table was not counted against the plan's limit."""
    from metrics.core import planning

    a = planning.PlanAssumptions(system_means={"a": 3.6, "b": 3.2, "c": 3.0})
    drawn = {"judgments": 0, "largest": 0}
    real = planning.simulate

    def counting(assumptions, *, n_originals, n_judges, judges_per_item, systems=None, seed):
        frame = real(
            assumptions,
            n_originals=n_originals,
            n_judges=n_judges,
            judges_per_item=judges_per_item,
            systems=systems,
            seed=seed,
        )
        n_items = n_originals * len(systems or assumptions.system_means)
        drawn["judgments"] += len(frame)
        drawn["largest"] = max(drawn["largest"], n_items * n_judges)
        return frame

    monkeypatch.setattr(planning, "simulate", counting)
    kwargs: dict = {"n_originals": 6, "n_judges": 4, "judges_per_item": 2, "n_simulations": 12, "delta": 0.9}
    cost = planning.plan_cost(a, **kwargs)
    planning.plan_study(a, n_agreement=0, **kwargs)
    assert cost.separation > 0 and cost.total == drawn["judgments"] and cost.largest_study == drawn["largest"]
    # The separation table grows as 1/δ²: a small δ is what made form-legal plans run for minutes.
    assert planning.plan_cost(a, **{**kwargs, "delta": 0.02}).separation > 1000 * cost.separation
