"""The report's figures as SVG text, drawn with matplotlib (no pyplot, no display).

Figures are built on :class:`matplotlib.figure.Figure` directly, so nothing touches
pyplot's global state and two builds in one worker process cannot interfere. Text
stays text in the SVG (``svg.fonttype = none``): the files are small and the words
searchable. Panels with more than :data:`AGGREGATE_ABOVE` items are drawn as a 2-D
histogram (one small embedded image: shading = items per cell, said in the caption)
instead of one SVG element per point, so that the demo's standalone HTML stays under
1 MB (it was 4 MB with 4,000-point scatter plots); smaller panels keep their points.
Point labels are nudged apart so that none overlaps another (the system-level panel
put ``control:random`` on top of ``control:unigram``). Output is deterministic for a
given seed (fixed hash salt, no date).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")  # a worker has no display; set before anything draws

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from django.utils.text import slugify  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

from annotation.judging.scales import ScaleUnit  # noqa: E402

MAX_POINTS = 4000
AGGREGATE_ABOVE = 400
PALETTE = ("#1f5fbf", "#c2410c", "#1e7a3c", "#7c3aed", "#b3261e", "#0e7490", "#9a6200", "#be185d", "#4b5563", "#65a30d")


@dataclass(frozen=True)
class Axes:
    """How one criterion's human scores are labelled and bounded on an axis: from its
    scale (:class:`~annotation.judging.scales.ScaleUnit`), or "per-judge z-scores"
    (unbounded) when the report normalises. Without a unit (an old call), just the name."""

    units: Mapping[str, ScaleUnit]
    normalized: bool = False

    def label(self, crit: str, prefix: str = "") -> str:
        unit = self.units.get(crit)
        if self.normalized:
            return f"{prefix}{crit} (per-judge z-scores)"
        return f"{prefix}{unit.axis_label(crit) if unit else crit}"

    def limits(self, crit: str) -> tuple[float, float] | None:
        unit = self.units.get(crit)
        return None if self.normalized or unit is None else unit.axis_limits()

    def describe(self, crit: str) -> str:
        """The units in a caption: "per-judge z-scores", "0–100", "1–5"."""
        unit = self.units.get(crit)
        if self.normalized:
            return "per-judge z-scores"
        return unit.range_text() if unit else "raw scores"


@dataclass(frozen=True)
class Plot:
    slug: str
    title: str
    caption: str
    svg: str


def figure_svg(fig: Figure, salt: str) -> str:
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
    return buf.getvalue()


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), dpi=100)
    fig.set_facecolor("white")
    return fig


def _sample(n: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of at most MAX_POINTS of n points (all of them, in order, when n is small)."""
    if n <= MAX_POINTS:
        return np.arange(n)
    return np.sort(rng.choice(n, size=MAX_POINTS, replace=False))


def _jitter(values: np.ndarray, rng: np.random.Generator, share: float = 0.025) -> np.ndarray:
    """Small uniform noise so that tied (discrete) scores show as clouds, not single dots."""
    finite = values[np.isfinite(values)]
    span = float(finite.max() - finite.min()) if finite.size else 1.0
    return values + rng.uniform(-1, 1, size=values.shape) * share * (span or 1.0)


def _edges(values: np.ndarray, bins: int) -> np.ndarray:
    """Histogram edges: one cell per value when there are few distinct values (human
    means on a 1–5 scale), else ``bins`` equal cells over the range."""
    u = np.unique(values[np.isfinite(values)])
    if u.size == 0:
        return np.array([0.0, 1.0])
    if u.size <= 40:
        mids = (u[1:] + u[:-1]) / 2
        step = float(np.min(np.diff(u))) if u.size > 1 else 1.0
        return np.concatenate([[u[0] - step / 2], mids, [u[-1] + step / 2]])
    lo, hi = float(u[0]), float(u[-1])
    return np.linspace(lo, hi if hi > lo else lo + 1.0, bins + 1)


def _density(fig: Figure, ax, x: np.ndarray, y: np.ndarray, *, bins: int = 40) -> None:
    """A 2-D histogram of (x, y) as one embedded image: shading = number of items per cell."""
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    xe, ye = _edges(x, bins), _edges(y, bins)
    counts, _, _ = np.histogram2d(x, y, bins=(xe, ye))
    shown = np.where(counts > 0, counts, np.nan).T
    image = ax.pcolormesh(xe, ye, shown, cmap="Blues", shading="flat", rasterized=True, vmin=0)
    fig.colorbar(image, ax=ax, label="items per cell", fraction=0.05, pad=0.02)


def _aggregated_note(n: int) -> str:
    return (
        f" The {n:,} items are aggregated (shading: items per cell of a 2-D histogram) rather than drawn one "
        "by one, to keep the file small."
        if n > AGGREGATE_ABOVE
        else ""
    )


def _spread_labels(fig: Figure, ax, texts: list) -> None:
    """Move text labels down (then up) until no two overlap, in display coordinates.

    Hand-written rather than a dependency (adjustText): a few labels per panel, one
    pass of greedy nudging is enough and keeps the output deterministic.
    """
    if len(texts) < 2:
        return
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    renderer = canvas.get_renderer()
    placed: list[Bbox] = []
    for text in sorted(texts, key=lambda t: (-t.xy[1], t.xy[0])):
        box = text.get_window_extent(renderer)
        step = box.height * 1.1
        offset = list(text.get_position())
        for _ in range(60):
            if not any(box.overlaps(other) for other in placed):
                break
            offset[1] -= step * 72.0 / fig.dpi
            text.set_position(tuple(offset))
            box = text.get_window_extent(renderer)
        placed.append(box)


def _fmt(x) -> str:
    return "n/a" if x is None or (isinstance(x, float) and not np.isfinite(x)) else f"{x:.3f}"


def _sampled_note(n: int) -> str:
    return f" {MAX_POINTS:,} of the {n:,} points are drawn (a seeded random sample)." if n > MAX_POINTS else ""


def criterion_vs_target(
    ref: pd.DataFrame, *, target: str, criteria: Sequence[str], table2: Mapping | None, axes_of: Axes, seed: int
) -> Plot | None:
    """Each criterion's human reference against the target criterion's, per genuine item, with jitter."""
    genuine = ref.loc[~ref["is_control"].astype(bool)]
    others = [c for c in criteria if c != target and c in genuine.columns]
    if genuine.empty or target not in genuine.columns or not others:
        return None
    r_of = {}
    for row in (table2 or {}).get("rows", []):
        if row.get("subset") == "all":
            r_of[row["criterion"]] = ((row.get("sentence") or {}).get("pearson") or {}).get("statistic")
    rng = np.random.default_rng(seed)
    fig = _figure(4.2 * len(others), 4.0)
    axes = fig.subplots(1, len(others), squeeze=False)[0]
    y_all = genuine[target].to_numpy(dtype=float)
    dense = len(genuine) > AGGREGATE_ABOVE
    idx = np.arange(len(genuine)) if dense else _sample(len(genuine), rng)
    for ax, crit in zip(axes, others):
        x = genuine[crit].to_numpy(dtype=float)[idx]
        y = y_all[idx]
        if dense:
            _density(fig, ax, x, y)
        else:
            ax.scatter(_jitter(x, rng), _jitter(y, rng), s=9, alpha=0.45, color=PALETTE[0], linewidths=0)
        ax.set_xlabel(axes_of.label(crit))
        ax.set_ylabel(axes_of.label(target))
        if (xl := axes_of.limits(crit)) is not None:
            ax.set_xlim(*xl)
        if (yl := axes_of.limits(target)) is not None:
            ax.set_ylim(*yl)
        ax.set_title(f"{crit} vs {target}: r = {_fmt(r_of.get(crit))}", fontsize=10)
        ax.grid(True, alpha=0.25)
    caption = (
        f"Human reference (mean of the judges, each criterion on its own scale: "
        f"{', '.join(f'{c} {axes_of.describe(c)}' for c in [*others, target])}) of each genuine item: "
        "each criterion against "
        f"{target}, with a little jitter so tied scores stay visible; r is the sentence-level Pearson "
        f"correlation of Table 2 (all items, controls as in Table 2)."
        f"{_aggregated_note(len(genuine)) if dense else _sampled_note(len(genuine))}"
    )
    return Plot("criterion-vs-overall", f"Criteria vs {target}", caption, figure_svg(fig, f"criterion-{seed}"))


def metric_vs_human(
    name: str,
    scores: pd.Series,
    ref: pd.DataFrame,
    *,
    target: str,
    table3: Mapping | None,
    include_controls: bool,
    axes_of: Axes,
    seed: int,
    slug: str,
) -> Plot | None:
    """One metric against the human reference: segment level (items) and system level (system means)."""
    use = ref if include_controls else ref.loc[~ref["is_control"].astype(bool)]
    joined = use.assign(metric=scores.reindex(use.index)).dropna(subset=["metric", target])
    if joined.empty:
        return None
    r_of = {}
    for row in (table3 or {}).get("rows", []):
        if row.get("metric") == name and row.get("human") == "mean":
            r_of[row["level"]] = (row.get("pearson") or {}).get("statistic")
    rng = np.random.default_rng(seed)
    fig = _figure(9.0, 4.0)
    seg, sysax = fig.subplots(1, 2)
    dense = len(joined) > AGGREGATE_ABOVE
    idx = np.arange(len(joined)) if dense else _sample(len(joined), rng)
    part = joined.iloc[idx]
    controls = part["is_control"].astype(bool).to_numpy()
    x = part["metric"].to_numpy(dtype=float)
    if dense:
        _density(fig, seg, x, part[target].to_numpy(dtype=float))
        controls = np.zeros_like(controls)
    else:
        y = _jitter(part[target].to_numpy(dtype=float), rng)
        seg.scatter(x[~controls], y[~controls], s=9, alpha=0.45, color=PALETTE[0], linewidths=0, label="candidates")
    if controls.any():
        seg.scatter(
            x[controls], y[controls], s=14, alpha=0.6, color=PALETTE[1], marker="x", linewidths=0.8, label="controls"
        )
        seg.legend(loc="best", fontsize=8)
    seg.set_xlabel(name)
    seg.set_ylabel(axes_of.label(target, "human "))
    if (yl := axes_of.limits(target)) is not None:
        seg.set_ylim(*yl)
    seg.set_title(f"segment level: r = {_fmt(r_of.get('segment'))}", fontsize=10)
    seg.grid(True, alpha=0.25)
    means = joined.groupby("system", sort=True).agg(
        metric=("metric", "mean"), human=(target, "mean"), control=("is_control", "first")
    )
    labels = []
    for system, row in means.iterrows():
        colour = PALETTE[1] if bool(row["control"]) else PALETTE[0]
        sysax.scatter([row["metric"]], [row["human"]], s=36, color=colour, marker="x" if row["control"] else "o")
        labels.append(
            sysax.annotate(
                str(system), (row["metric"], row["human"]), textcoords="offset points", xytext=(4, 4), fontsize=8
            )
        )
    _spread_labels(fig, sysax, labels)
    sysax.set_xlabel(f"mean {name}")
    sysax.set_ylabel(axes_of.label(target, "mean human "))
    sysax.set_title(f"system level: r = {_fmt(r_of.get('system'))}", fontsize=10)
    sysax.grid(True, alpha=0.25)
    caption = (
        f"{name} against the human reference on {target} ({axes_of.describe(target)}), controls "
        f"{'included at their expected scores' if include_controls else 'left out'}. Left: one point per "
        f"item (human scores jittered slightly); right: per-system means. r: Pearson, as in Table 3."
        f"{_aggregated_note(len(joined)) if dense else _sampled_note(len(joined))}"
    )
    return Plot(slug, f"{name} vs human {target}", caption, figure_svg(fig, f"{slug}-{seed}"))


#: A slider's score distribution: shares per cell of this width on its 0–100 range.
SLIDER_BIN = 10


def _distribution_axis(unit: ScaleUnit | None, scores: pd.Series, scale: Sequence[float] | None):
    """One criterion's x axis: (cell edges or None, tick values, tick labels).

    Discrete scales show exactly their values (a value nobody used keeps its empty
    slot; categories by name); a slider shows cells of :data:`SLIDER_BIN` over its
    range; without a unit, ``scale`` if given, else the values observed *on this criterion*."""
    if unit is not None and not unit.discrete:
        edges = np.arange(unit.low, unit.high + SLIDER_BIN, SLIDER_BIN, dtype=float)
        return edges, edges[:-1], [f"{lo:g}–{hi:g}" for lo, hi in zip(edges[:-1], edges[1:])]
    if unit is not None:
        values = np.asarray(unit.values, dtype=float)
        labels = list(unit.labels) if unit.type == "categorical" and unit.labels else [f"{v:g}" for v in values]
        return None, values, labels
    values = np.asarray(sorted(scale), dtype=float) if scale is not None else np.sort(scores.unique())
    return None, values, [f"{v:g}" for v in values]


def judge_distributions(
    frame: pd.DataFrame,
    *,
    criteria: Sequence[str],
    excluded: Sequence[str],
    scale: Sequence[float] | None = None,
    units: Mapping[str, ScaleUnit] | None = None,
) -> Plot | None:
    """Per judge and criterion, the share of each score on genuine items (raw scores).

    Each criterion has its own x axis, from its scale (``units``): a point scale's
    values (e.g. 1–5), a categorical scale's names, a slider's 0–100 range in cells of
    ten. Without ``units``, ``scale`` (one shared set of values) or the values observed
    on each criterion.
    """
    genuine = frame.loc[~frame["is_control"].astype(bool)]
    if genuine.empty:
        return None
    judges = sorted(genuine["judge"].unique().tolist())
    units = units or {}
    crits = [c for c in criteria if c in set(genuine["criterion"])]
    cols = min(2, len(crits))
    rows = int(np.ceil(len(crits) / cols))
    fig = _figure(5.2 * cols, 3.3 * rows)
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    width = 0.8 / max(1, len(judges))
    excluded_set = set(excluded)
    for ax, crit in zip(axes, crits):
        part = genuine.loc[genuine["criterion"] == crit]
        edges, values, tick_labels = _distribution_axis(units.get(crit), part["score"], scale)
        for j, judge in enumerate(judges):
            scores = part.loc[part["judge"] == judge, "score"]
            if scores.empty:
                continue
            if edges is not None:
                counts, _ = np.histogram(scores.to_numpy(dtype=float), bins=edges)
                shares = counts / counts.sum()
            else:
                shares = scores.value_counts(normalize=True).reindex(values, fill_value=0.0).to_numpy()
            label = f"{judge} (excluded)" if judge in excluded_set else judge
            ax.bar(
                np.arange(len(values)) + (j - (len(judges) - 1) / 2) * width,
                shares,
                width=width,
                color=PALETTE[j % len(PALETTE)],
                hatch="//" if judge in excluded_set else None,
                edgecolor="white",
                linewidth=0.3,
                label=label,
            )
        ax.set_xticks(np.arange(len(values)))
        ax.set_xticklabels(
            tick_labels,
            rotation=45 if edges is not None else 0,
            fontsize=8 if edges is not None else None,
            ha="right" if edges is not None else "center",
        )
        ax.set_xlim(-0.5, len(values) - 0.5)
        unit = units.get(crit)
        ax.set_title(unit.axis_label(crit) if unit else crit, fontsize=10)
        ax.set_ylabel("share of the judge's scores")
        ax.grid(True, axis="y", alpha=0.25)
    for ax in axes[len(crits) :]:
        ax.set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(
        handles,
        labels,
        loc="lower center",
        ncol=min(len(judges), 6),
        fontsize=8,
        frameon=False,
        bbox_to_anchor=(0.5, 0.92),
    )
    fig.subplots_adjust(top=0.86, hspace=0.45)
    caption = (
        "How often each judge gave each score, per criterion, on genuine items (controls left out; raw "
        "scores; each criterion on its own scale, a slider in cells of ten). A judge far from the others is lenient or harsh; one tall bar is straight-lining. "
        "Excluded judges are hatched."
    )
    return Plot("judge-distributions", "Score distributions per judge", caption, figure_svg(fig, "judges"))


def system_ranking(ranking: Mapping | None, *, axes_of: Axes) -> Plot | None:
    """System means with bootstrap CIs, coloured by significance cluster."""
    systems = (ranking or {}).get("systems") or []
    if not systems:
        return None
    target = str((ranking or {}).get("criterion") or "")
    fig = _figure(6.5, 0.9 + 0.45 * len(systems))
    ax = fig.subplots()
    ys = np.arange(len(systems))[::-1]
    for y, s in zip(ys, systems):
        mean = s.get("mean")
        if mean is None:
            continue
        low = s.get("ci_low") if s.get("ci_low") is not None else mean
        high = s.get("ci_high") if s.get("ci_high") is not None else mean
        colour = PALETTE[(int(s.get("cluster") or 1) - 1) % len(PALETTE)]
        ax.errorbar([mean], [y], xerr=[[mean - low], [high - mean]], fmt="o", color=colour, capsize=3)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{s['rank']}. {s['system']} (cluster {s['cluster']})" for s in systems], fontsize=9)
    ax.set_xlabel(axes_of.label(target, "mean human "))
    ax.grid(True, axis="x", alpha=0.25)
    caption = (
        "Genuine systems by mean human score with bootstrap confidence intervals (resampling originals); "
        "systems in one cluster (one colour) are not significantly different from their neighbours "
        "(paired bootstrap)."
    )
    return Plot("system-ranking", f"System ranking on {target}", caption, figure_svg(fig, "ranking"))


def report_plots(
    *,
    frame: pd.DataFrame,
    ref: pd.DataFrame,
    metric_wide: pd.DataFrame | None,
    result: Mapping,
    excluded: Sequence[str],
    target: str,
    include_controls: bool,
    normalized: bool,
    seed: int,
    scale: Sequence[float] | None = None,
    units: Mapping[str, ScaleUnit] | None = None,
) -> list[Plot]:
    """Every figure of a report, in page order (figures without data are left out).

    ``frame``: the validated judgments (excluded judges included, for their
    distribution); ``ref``: the human reference of the included judges
    (``metrics.core.stats.reference.human_reference``); ``metric_wide``: item ×
    metric scores as used in Table 3 (or None); ``result``: ``build_report``'s dict;
    ``units``: each criterion's scale (:func:`annotation.judging.scales.criteria_units`),
    which labels and bounds its axes and lays out its score distribution.
    """
    axes_of = Axes(units or {}, normalized)
    criteria = result.get("summary", {}).get("criteria") or sorted(frame["criterion"].unique())
    plots = [
        criterion_vs_target(
            ref, target=target, criteria=criteria, table2=result.get("table2"), axes_of=axes_of, seed=seed
        ),
        system_ranking(result.get("system_ranking"), axes_of=axes_of),
        judge_distributions(frame, criteria=criteria, excluded=excluded, scale=scale, units=units),
    ]
    if metric_wide is not None:
        used: set[str] = set()
        for name in metric_wide.columns:
            base = f"metric-{slugify(str(name))[:80] or 'metric'}"
            slug, k = base, 2
            while slug in used:
                slug, k = f"{base}-{k}", k + 1
            used.add(slug)
            plots.append(
                metric_vs_human(
                    str(name),
                    metric_wide[name],
                    ref,
                    target=target,
                    table3=result.get("table3"),
                    include_controls=include_controls,
                    axes_of=axes_of,
                    seed=seed,
                    slug=slug,
                )
            )
    return [p for p in plots if p is not None]
