"""WMT z-scores: per judge, per criterion, genuine items only, sample standard deviation."""

import math

import numpy as np
import pandas as pd
import pytest

from metrics.core.stats.zscores import ScaleAccumulator, judge_scales, judge_zscores, system_zscores


def _frame(rows):
    return pd.DataFrame(
        rows, columns=["judge", "item", "original", "system", "is_control", "control_kind", "criterion", "score"]
    )


@pytest.fixture
def study():
    rng = np.random.default_rng(3)
    rows = []
    for judge, (offset, spread) in {"lenient": (80, 5), "harsh": (30, 20), "middle": (55, 12)}.items():
        for o in range(12):
            for system in ("sysA", "sysB", "sysC"):
                if rng.random() < 0.2:
                    continue  # an incomplete design, as real data are
                base = {"sysA": 10, "sysB": 0, "sysC": -10}[system]
                score = float(np.clip(round(offset + base + rng.normal(0, spread)), 0, 100))
                rows.append((judge, f"{o}-{system}", str(o), system, False, None, "quality", score))
                rows.append(
                    (judge, f"{o}-{system}", str(o), system, False, None, "fluency", float(rng.integers(0, 101)))
                )
            rows.append((judge, f"{o}-copy", str(o), "control:identical", True, "identical", "quality", 100.0))
    return _frame(rows)


def test_z_scores_equal_a_hand_computation_with_pandas(study):
    got = judge_zscores(study)
    genuine = study[~study["is_control"]]
    mu = genuine.groupby(["judge", "criterion"])["score"].mean()
    sd = genuine.groupby(["judge", "criterion"])["score"].std()  # pandas' default: ddof=1, as WMT
    for row in got.itertuples():
        expected = (row.score - mu[(row.judge, row.criterion)]) / sd[(row.judge, row.criterion)]
        assert row.z == pytest.approx(expected)
    # the raw score stays beside the z-score
    assert got["score"].tolist() == study["score"].tolist()


def test_controls_are_left_out_of_the_judges_mean_and_sd(study):
    scales = judge_scales(study).set_index(["judge", "criterion"])
    lenient = study[(study["judge"] == "lenient") & (study["criterion"] == "quality") & ~study["is_control"]]
    assert scales.loc[("lenient", "quality"), "mu"] == pytest.approx(lenient["score"].mean())
    assert scales.loc[("lenient", "quality"), "n"] == len(lenient)
    # a control is put on the judge's genuine scale
    z = judge_zscores(study)
    copy = z[(z["judge"] == "lenient") & z["is_control"]].iloc[0]
    assert copy["z"] == pytest.approx((100 - lenient["score"].mean()) / lenient["score"].std())


def test_one_item_or_zero_spread_leaves_z_undefined_for_every_item_of_that_judge():
    frame = _frame(
        [
            ("single", "i1", "o1", "A", False, None, "quality", 70.0),
            ("single", "c1", "o1", "control:random", True, "random", "quality", 5.0),
            ("flat", "i1", "o1", "A", False, None, "quality", 60.0),
            ("flat", "i2", "o2", "B", False, None, "quality", 60.0),
            ("flat", "c2", "o2", "control:random", True, "random", "quality", 0.0),
            ("tenths", "i1", "o1", "A", False, None, "quality", 0.1),
            ("tenths", "i2", "o2", "B", False, None, "quality", 0.1),
            ("tenths", "i3", "o3", "B", False, None, "quality", 0.1),
            ("onlycontrols", "c1", "o1", "control:random", True, "random", "quality", 10.0),
        ]
    )
    z = judge_zscores(frame)
    # never 0 by convention (Appraise's division by 1), never ±inf: undefined is NaN
    assert z["z"].isna().all()
    scales = judge_scales(frame).set_index("judge")
    assert math.isnan(scales.loc["single", "sigma"]) and scales.loc["flat", "sigma"] == 0.0
    assert not scales["defined"].any()
    assert "onlycontrols" not in scales.index


def test_the_streaming_accumulator_gives_the_same_scale_and_rule(study):
    scales = judge_scales(study).set_index(["judge", "criterion"])
    acc = {}
    for row in study[~study["is_control"]].itertuples():
        acc.setdefault((row.judge, row.criterion), ScaleAccumulator()).add(row.score)
    for key, a in acc.items():
        s = a.scale()
        assert s.n == scales.loc[key, "n"] and s.defined
        assert s.mu == pytest.approx(scales.loc[key, "mu"]) and s.sigma == pytest.approx(scales.loc[key, "sigma"])
        assert s.z(100) == pytest.approx((100 - s.mu) / s.sigma)
    one, flat = ScaleAccumulator(), ScaleAccumulator()
    one.add(50)
    for x in (0.1, 0.1, 0.1):
        flat.add(x)
    assert not one.scale().defined and one.scale().z(50) is None
    assert not flat.scale().defined and flat.scale().z(0.1) is None
    assert ScaleAccumulator().scale().z(1) is None


def test_system_z_means_skip_undefined_judges_and_count_them():
    frame = _frame(
        [
            ("a", "1A", "1", "A", False, None, "q", 80.0),
            ("a", "1B", "1", "B", False, None, "q", 40.0),
            ("a", "2A", "2", "A", False, None, "q", 70.0),
            ("a", "2B", "2", "B", False, None, "q", 30.0),
            ("flat", "1A", "1", "A", False, None, "q", 50.0),
            ("flat", "1B", "1", "B", False, None, "q", 50.0),
        ]
    )
    table = system_zscores(frame).set_index("system")
    assert table.loc["A", "n_judgments"] == 3 and table.loc["A", "n_z"] == 2
    assert table.loc["A", "raw"] == pytest.approx(((80 + 50) / 2 + 70) / 2)
    zs = judge_zscores(frame).set_index(["judge", "item"])["z"]
    assert table.loc["A", "z"] == pytest.approx((zs[("a", "1A")] + zs[("a", "2A")]) / 2)


def test_criteria_restricts_to_the_0_100_criteria(study):
    z = judge_zscores(study, criteria=["quality"])
    assert set(z["criterion"]) == {"quality"}


def test_system_z_scores_average_judges_per_original_then_originals(study):
    table = system_zscores(study, criteria=["quality"]).set_index("system")
    z = judge_zscores(study, criteria=["quality"])
    genuine = z[~z["is_control"]]
    per_original = genuine.groupby(["system", "original"])[["score", "z"]].mean()
    by_system = per_original.groupby(level="system").mean()
    for system in ("sysA", "sysB", "sysC"):
        assert table.loc[system, "z"] == pytest.approx(by_system.loc[system, "z"])
        assert table.loc[system, "raw"] == pytest.approx(by_system.loc[system, "score"])
    # the simulated order (sysA > sysB > sysC) comes out, and controls are not systems here
    assert list(table.index) == ["sysA", "sysB", "sysC"]


def test_the_human_reference_normalised_to_z_uses_the_same_z_as_wmts(study):
    """Issue 42: a report showed two z-scores of one system side by side (the reference's with
    the population σ, 0.7929; WMT's with the sample σ, 0.7843). Both now use WMT's definition:
    every z the reference averages is the one judge_zscores gives, and a genuine item's
    reference is the mean of its judges' WMT z."""
    from metrics.core.stats.reference import human_reference, zscore_judgments

    normalised, _params = zscore_judgments(study)
    wmt = judge_zscores(study)
    keys = ["judge", "item", "criterion"]
    both = normalised.merge(wmt, on=keys, suffixes=("_ref", "_wmt"))
    assert len(both) == len(study)
    np.testing.assert_allclose(both["score_ref"], both["z"], rtol=0, atol=1e-12)

    ref = human_reference(study, normalize="z", control_expected={})
    genuine = wmt[~wmt["is_control"]].groupby(["item", "criterion"])["z"].mean().unstack("criterion")
    np.testing.assert_allclose(ref.loc[genuine.index, "quality"], genuine["quality"], rtol=0, atol=1e-12)


def test_a_judge_without_a_defined_z_counts_as_the_centre_in_the_reference():
    rows = [
        ("solo", "1-a", "1", "a", False, None, "quality", 70.0),  # one genuine score: no σ
        ("pair", "1-a", "1", "a", False, None, "quality", 40.0),
        ("pair", "2-a", "2", "a", False, None, "quality", 60.0),
    ]
    from metrics.core.stats.reference import zscore_judgments

    z, params = zscore_judgments(_frame(rows))
    assert z.loc[z["judge"] == "solo", "score"].tolist() == [0.0]
    assert z.loc[z["judge"] == "pair", "score"].tolist() == pytest.approx([-1 / math.sqrt(2), 1 / math.sqrt(2)])
    assert judge_zscores(_frame(rows)).loc[lambda f: f["judge"] == "solo", "z"].isna().all()
