"""Issue 12, item 3: Table 3 and the leaderboard headline the genuine items; PEM §5.2's
controls-in-the-reference is a labelled second column, with a warning when the two
rankings differ."""

import numpy as np
import pandas as pd
from scipy import stats

from metrics.core.stats.data import DEFAULT_CONTROL_EXPECTED
from metrics.core.stats.report import build_report

from .test_robust_summaries import load_fixture


def _metrics(frame: pd.DataFrame) -> pd.DataFrame:
    """Two metrics over the demo's items: ``fits_genuine`` follows the judges on genuine
    items and says nothing about controls; ``fits_controls`` gets the controls right
    (their expected overall scores) and is noise on genuine items — the TER-like case
    of the issue, best only when the controls count."""
    rng = np.random.default_rng(0)
    items = (
        frame.loc[frame["criterion"] == "overall"]
        .groupby("item")
        .agg(system=("system", "first"), kind=("control_kind", "first"), score=("score", "mean"))
    )
    is_control = items["kind"].notna()
    expected = items["kind"].map(lambda k: DEFAULT_CONTROL_EXPECTED[k]["overall"] if isinstance(k, str) else np.nan)
    genuine_fit = np.where(is_control, 3.0, items["score"] + rng.normal(0, 0.5, len(items)))
    control_fit = np.where(is_control, expected, rng.normal(3, 1, len(items)))
    rows = []
    for name, values in (("fits_genuine", genuine_fit), ("fits_controls", control_fit)):
        rows.append(pd.DataFrame({"item": items.index, "system": items["system"], "score": values, "metric": name}))
    return pd.concat(rows, ignore_index=True)


def test_headline_is_genuine_items_and_controls_are_a_labelled_second_column_with_a_flip_warning():
    frame = load_fixture("demo_judge1_sim3.csv.gz")
    metrics = _metrics(frame)
    report = build_report(frame, metrics, n_boot=50)
    seg = [r["metric"] for r in report["metric_leaderboard"]["segment"]]
    seg_controls = [r["metric"] for r in report["metric_leaderboard_with_controls"]["segment"]]
    assert seg == ["fits_genuine", "fits_controls"] and seg_controls == ["fits_controls", "fits_genuine"]
    flips = [w for w in report["warnings"] if w["code"] == "control_convention_flip"]
    assert [w["subject"] for w in flips][:1] == ["segment"] and flips[0]["severity"] == "warning"
    assert "fits_genuine > fits_controls" in flips[0]["message"]

    # The headline row is the Pearson correlation over genuine items only, the second
    # column over every item with the controls at their expected scores.
    t3 = report["table3"]
    head = next(r for r in t3["rows"] if (r["metric"], r["human"], r["level"]) == ("fits_genuine", "mean", "segment"))
    alt = next(r for r in t3["rows_with_controls"] if (r["metric"], r["level"]) == ("fits_genuine", "segment"))
    n_genuine = report["summary"]["n_genuine_items"]
    assert head["n"] == n_genuine and alt["n"] == report["summary"]["n_items"]
    genuine = frame.loc[(frame["criterion"] == "overall") & ~frame["is_control"]].groupby("item")["score"].mean()
    m = metrics.loc[metrics["metric"] == "fits_genuine"].set_index("item")["score"].reindex(genuine.index)
    assert abs(head["pearson"]["statistic"] - stats.pearsonr(genuine, m)[0]) < 1e-12
    assert t3["controls_in_mean"] is False
    # Per-judge rows exist only on genuine items (PEM §6.2) and never in the second column.
    assert {r["human"] for r in t3["rows_with_controls"]} == {"mean"}


def test_no_flip_warning_when_both_conventions_rank_alike():
    frame = load_fixture("demo_judge1_sim3.csv.gz")
    metrics = _metrics(frame)
    metrics = metrics.loc[metrics["metric"] == "fits_genuine"]
    report = build_report(frame, metrics, n_boot=50)
    assert not [w for w in report["warnings"] if w["code"] == "control_convention_flip"]
