import pandas as pd
import pytest

from metrics.core.stats.data import DEFAULT_CONTROL_EXPECTED, JUDGMENT_COLUMNS, validate_judgments
from metrics.core.stats.simulate import judges_needed, plan_judges, simulate_judgments


def test_simulator_returns_the_canonical_tidy_frame():
    frame = simulate_judgments(n_originals=10, n_judges=3, seed=0)
    assert list(frame.columns) == list(JUDGMENT_COLUMNS) + ["seconds"]
    assert len(frame) == 10 * 7 * 3 * 4
    validate_judgments(frame)  # no duplicates, numeric scores, control kinds present
    assert set(frame["control_kind"].dropna()) == {"identical", "random", "unigram"}
    assert frame["score"].between(1, 5).all()
    assert frame.groupby("item")["original"].nunique().max() == 1


def test_simulator_is_deterministic_for_a_seed():
    a = simulate_judgments(n_originals=15, seed=3)
    b = simulate_judgments(n_originals=15, seed=3)
    c = simulate_judgments(n_originals=15, seed=4)
    pd.testing.assert_frame_equal(a, b)
    assert not a["score"].equals(c["score"])


def test_systems_differ_as_their_latent_means_say():
    frame = simulate_judgments(n_originals=200, seed=1)
    overall = frame[(frame["criterion"] == "overall") & ~frame["is_control"]]
    means = overall.groupby("system")["score"].mean()
    assert means["human1"] > means["machine1"] > means["machine2"]


def test_careful_judges_score_controls_near_their_expected_scores():
    frame = simulate_judgments(n_originals=100, n_judges=2, control_slip=0.1, seed=2)
    random_adequacy = frame[(frame["control_kind"] == "random") & (frame["criterion"] == "adequacy")]["score"]
    assert (random_adequacy == DEFAULT_CONTROL_EXPECTED["random"]["adequacy"]).mean() > 0.85


def test_incomplete_design_gives_each_item_k_judges():
    frame = simulate_judgments(n_originals=20, n_judges=6, judges_per_item=2, seed=0)
    assert (frame.groupby("item")["judge"].nunique() == 2).all()
    assert frame["judge"].nunique() == 6


def test_bad_simulator_arguments_are_refused():
    with pytest.raises(ValueError):
        simulate_judgments(n_judges=2, n_random_clickers=3)
    with pytest.raises(ValueError):
        simulate_judgments(n_judges=2, judges_per_item=3)


def test_planning_follows_spearman_brown():
    rows = plan_judges(n_items=100, judge_counts=(1, 3), simulate=False)
    rho = 0.7**2 / (0.7**2 + 0.25**2 + 0.6**2)
    assert rows[0].reliability_of_mean == pytest.approx(rho)
    assert rows[1].reliability_of_mean == pytest.approx(3 * rho / (1 + 2 * rho))
    assert rows[1].item_mean_ci_halfwidth == pytest.approx(rows[0].item_mean_ci_halfwidth / 3**0.5)
    k = judges_needed(0.8)
    assert 3 * rho / (1 + 2 * rho) < 0.8 or k <= 3
    assert k * rho / (1 + (k - 1) * rho) >= 0.8 > (k - 1) * rho / (1 + (k - 2) * rho)


def test_simulated_planning_reports_alpha_and_its_interval_width():
    rows = plan_judges(n_items=150, judge_counts=(2, 6), n_boot=100, seed=1)
    assert all(r.alpha is not None and 0 < r.alpha_ci_width < 0.5 for r in rows)
    # more judges per item, tighter alpha
    assert rows[1].alpha_ci_width < rows[0].alpha_ci_width
