"""Issue 12, item 6: figures fit their medium — the demo's standalone HTML under 1 MB
(dense panels aggregated, and said so), no label on top of another, distribution axes
with exactly the scale's values."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from annotation.judging.defaults import default_criteria
from annotation.judging.scales import criteria_units
from metrics.core.stats.data import validate_judgments
from metrics.core.stats.reference import human_reference
from metrics.core.stats.report import build_report
from metrics.reports import plots
from metrics.reports.exports.standalone_html import report_html
from metrics.reports.models import Report, ReportPlot

from ..core.stats.test_robust_summaries import load_fixture

METRICS = ["bleu", "chrf", "ter (negated)", "lm-fluency", "pivot-f1", "pinc", "target-f1", "weem4pg"]


@pytest.fixture(scope="module")
def demo():
    frame = validate_judgments(load_fixture("demo_judge1_sim3.csv.gz"))
    items = (
        frame.loc[frame["criterion"] == "overall"]
        .groupby("item")
        .agg(system=("system", "first"), score=("score", "mean"))
    )
    rng = np.random.default_rng(1)
    metrics = pd.concat(
        [
            pd.DataFrame(
                {
                    "item": items.index,
                    "system": items["system"],
                    "metric": name,
                    "score": items["score"] + rng.normal(0, 0.5 + k / 2, len(items)),
                }
            )
            for k, name in enumerate(METRICS)
        ]
    )
    result = build_report(frame, metrics, n_boot=50)
    ref = human_reference(frame)
    wide = metrics.pivot(index="item", columns="metric", values="score")
    figs = plots.report_plots(
        frame=frame,
        ref=ref,
        metric_wide=wide,
        result=result,
        excluded=[],
        target="overall",
        include_controls=True,
        normalized=False,
        seed=0,
        scale=range(1, 6),
    )
    return frame, result, figs


def test_the_demo_standalone_html_is_under_one_megabyte_and_says_it_aggregates(demo):
    _, result, figs = demo
    from annotation.models import Study

    report = Report(pk=1, study=Study(name="demo"), result=result, settings={}, excluded_judges=[], metric_runs=[])
    html = report_html(
        report, plots=[ReportPlot(slug=p.slug, title=p.title, caption=p.caption, svg=p.svg) for p in figs]
    )
    assert len(html.encode("utf-8")) < 1_000_000  # was 4.06 MB with 4,000-point scatter plots
    dense = [p for p in figs if p.slug.startswith("metric-") or p.slug == "criterion-vs-overall"]
    assert dense and all("aggregated" in p.caption for p in dense)


def test_system_labels_never_overlap_even_when_two_controls_sit_on_one_point():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Annotation

    # control:random and control:unigram share their expected score and nearly their metric mean.
    systems = ["human", "machine", "control:random", "control:unigram", "control:identical"]
    human = {"human": 4.0, "machine": 3.0, "control:random": 1.0, "control:unigram": 1.0, "control:identical": 2.0}
    metric = {"human": 0.6, "machine": 0.4, "control:random": 0.05, "control:unigram": 0.051, "control:identical": 1.0}
    rows = [
        {"item": f"{s}-{k}", "system": s, "is_control": s.startswith("control:"), "overall": human[s]}
        for s in systems
        for k in range(3)
    ]
    ref = pd.DataFrame(rows).set_index("item")
    scores = pd.Series({r["item"]: metric[r["system"]] for r in rows})
    fig_holder = {}
    real_svg = plots.figure_svg

    def keep(fig, salt):
        fig_holder["fig"] = fig
        return real_svg(fig, salt)

    plots.figure_svg = keep
    try:
        plots.metric_vs_human(
            "m",
            scores,
            ref,
            target="overall",
            table3=None,
            include_controls=True,
            axes_of=plots.Axes(criteria_units(default_criteria())),
            seed=0,
            slug="metric-m",
        )
    finally:
        plots.figure_svg = real_svg
    fig = fig_holder["fig"]
    renderer = FigureCanvasAgg(fig).get_renderer()
    boxes = [t.get_window_extent(renderer) for ax in fig.axes for t in ax.texts if isinstance(t, Annotation)]
    assert len(boxes) == 5
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])


def test_score_distribution_axes_show_exactly_the_scales_values(demo):
    frame, _, _ = demo
    only_some = frame.loc[~frame["score"].isin([1.0])]  # nobody used 1
    fig = plots.judge_distributions(only_some, criteria=["overall"], excluded=[], scale=range(1, 6))
    xticks = re.findall(r'<g id="xtick_\d+">.*?<text [^>]*>([^<]*)</text>', fig.svg, flags=re.S)
    assert xticks == ["1", "2", "3", "4", "5"]
