"""How many judgments does a study need? A planner that answers by simulation.

The model is the judge simulator's (:func:`metrics.core.stats.simulate.simulate_judgments`):
score = μ_system + item_sd · z_item + b_judge + e, with b ~ N(0, judge_bias_sd²) and
e ~ N(0, noise_sd²), rounded to the 1–5 scale unless ``discrete=False``. The planner
draws ``n_simulations`` studies of the planned size from it and counts:

* **the probability that the final ranking is right**: the systems' means over
  originals (as the report's ranking, :func:`metrics.core.stats.significance.system_ranking`)
  come out in the true order (systems whose true means are equal may come in either order);
* **the probability that every neighbouring pair is separated**: each pair of systems
  next to each other in the true order differs significantly, by a paired t-test over
  originals at the study's level (a quick stand-in for the report's paired bootstrap;
  both test the same mean difference over the same units);
* **the expected interval width of agreement**: the mean width of the bootstrap CI of
  interval Krippendorff's α over a subset of the simulated studies.

Every probability comes with its Wilson score interval (Wilson 1927) over the simulations,
so the planner says how sure it is of its own answer. "Ratings per item" and "stable
ranking probability" follow Riley et al. (2024, arXiv 2404.01474).

The number of originals needed to separate two systems that differ by δ uses the paired
mean difference over originals: Var(d̄) = 2 (σ²_item + (σ²_bias + σ²_noise)/k) / n, so
n = ⌈2 (z_{1−α/2} + z_{power})² (σ²_item + (σ²_bias + σ²_noise)/k) / δ²⌉ (the normal
approximation of the paired t-test's power), then checked by simulation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd
from scipy import stats as sps

from metrics.core.stats.agreement.alpha import krippendorff_alpha
from metrics.core.stats.simulate import simulate_judgments

__all__ = [
    "PlanAssumptions",
    "PlanResult",
    "Proportion",
    "SeparationRow",
    "PlanCost",
    "assumptions_from_pilot",
    "plan_cost",
    "plan_study",
    "ranking_is_right",
    "separation_sizes",
    "separation_table",
    "wilson_interval",
]

#: The target criterion a plan is about (the report ranks systems on it).
CRITERION = "overall"


@dataclass(frozen=True)
class Proportion:
    """A proportion estimated from ``n`` simulations, with its Wilson score interval."""

    estimate: float
    low: float
    high: float
    n: int

    def to_dict(self) -> dict:
        return asdict(self)


def wilson_interval(successes: int, n: int, *, confidence_level: float = 0.95) -> Proportion:
    """Wilson's score interval for a binomial proportion (Wilson 1927):
    (p̂ + z²/2n ± z √(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n)."""
    if n <= 0:
        return Proportion(math.nan, 0.0, 1.0, 0)
    z = float(sps.norm.ppf(0.5 + confidence_level / 2))
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return Proportion(p, min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half)), n)


@dataclass(frozen=True)
class PlanAssumptions:
    """What the planner assumes: latent system means on the target criterion and the noise."""

    system_means: Mapping[str, float]
    item_sd: float = 0.7
    judge_bias_sd: float = 0.25
    noise_sd: float = 0.6
    discrete: bool = True
    source: str = "stated"  # "stated" or "pilot"

    def __post_init__(self):
        if len(self.system_means) < 2:
            raise ValueError("a plan needs at least two systems")
        for name in ("item_sd", "judge_bias_sd", "noise_sd"):
            value = getattr(self, name)
            if not (value >= 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a finite number ≥ 0")

    def to_dict(self) -> dict:
        return {**asdict(self), "system_means": dict(self.system_means)}


def assumptions_from_pilot(
    frame: pd.DataFrame, *, criterion: str = CRITERION, discrete: bool = True
) -> PlanAssumptions:
    """Estimate :class:`PlanAssumptions` from pilot judgments (the tidy judgment frame).

    Genuine items on ``criterion`` only. By the method of moments on the additive model:
    a judge's bias is the mean of their residuals from the item means; the noise is the
    spread of what is left, scaled by k/(k−1) for the k judges that share an item mean;
    the item spread is the variance of item means around their system's mean less the
    judges' share, (σ²_bias + σ²_noise)/k. System means are means over originals.
    """
    rows = frame.loc[(frame["criterion"] == criterion) & ~frame["is_control"].astype(bool)]
    if rows.empty:
        raise ValueError(f"the pilot has no genuine judgments on {criterion!r}")
    rows = rows.assign(score=rows["score"].astype(float))
    per_item = rows.groupby("item")["score"].transform("mean")
    k = float(rows.groupby("item")["judge"].nunique().mean())
    resid = rows["score"] - per_item
    bias = resid.groupby(rows["judge"]).mean()
    bias_var = float(bias.var(ddof=1)) if len(bias) > 1 else 0.0
    left = resid - rows["judge"].map(bias)
    noise_var = float(left.var(ddof=1)) * (k / (k - 1)) if k > 1 and len(left) > 1 else 0.36
    items = rows.groupby("item").agg(system=("system", "first"), score=("score", "mean"))
    spread = items["score"] - items.groupby("system")["score"].transform("mean")
    item_var = float(spread.var(ddof=1)) - (bias_var + noise_var) / max(k, 1.0) if len(spread) > 1 else 0.49
    by_original = rows.groupby(["original", "system"])["score"].mean().groupby("system").mean()
    return PlanAssumptions(
        system_means={str(s): round(float(v), 4) for s, v in by_original.items()},
        item_sd=round(math.sqrt(max(item_var, 0.01)), 4),
        judge_bias_sd=round(math.sqrt(max(bias_var, 0.0)), 4),
        noise_sd=round(math.sqrt(max(noise_var, 0.01)), 4),
        discrete=discrete,
        source="pilot",
    )


def simulate(
    a: PlanAssumptions,
    *,
    n_originals: int,
    n_judges: int,
    judges_per_item: int | None,
    systems: Mapping[str, float] | None = None,
    seed: int,
) -> pd.DataFrame:
    means = systems if systems is not None else a.system_means
    return simulate_judgments(
        n_originals=n_originals,
        systems={s: {CRITERION: float(m)} for s, m in means.items()},
        n_judges=n_judges,
        judges_per_item=judges_per_item,
        criteria=(CRITERION,),
        controls=(),
        item_sd=a.item_sd,
        judge_bias_sd=a.judge_bias_sd,
        noise_sd=a.noise_sd,
        discrete=a.discrete,
        seconds=False,
        seed=seed,
    )


def per_original(frame: pd.DataFrame) -> pd.DataFrame:
    """Originals × systems table of mean scores (the report's ranking unit)."""
    return frame.groupby(["original", "system"])["score"].mean().unstack("system")


def ranking_is_right(table: pd.DataFrame, true_means: Mapping[str, float], *, tol: float = 1e-9) -> bool:
    """Whether the systems' means over originals are in the true order (equal true means: either order)."""
    observed = table.mean(axis=0)
    names = list(true_means)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            diff = true_means[a] - true_means[b]
            if abs(diff) <= tol:
                continue
            if np.sign(observed[a] - observed[b]) != np.sign(diff):
                return False
    return True


def neighbours_separated(table: pd.DataFrame, true_means: Mapping[str, float], level: float) -> bool:
    order = sorted(true_means, key=lambda s: -true_means[s])
    for a, b in zip(order, order[1:], strict=False):
        if true_means[a] - true_means[b] <= 1e-9:
            continue  # a true tie cannot be separated; it does not count against the plan
        both = table[[a, b]].dropna()
        if len(both) < 2:
            return False
        d = both[a].to_numpy() - both[b].to_numpy()
        if not np.any(d != d[0]):
            if d[0] <= 0:
                return False
            continue
        res = sps.ttest_rel(both[a], both[b])
        if not (res.statistic > 0 and res.pvalue < level):
            return False
    return True


@dataclass(frozen=True)
class SeparationRow:
    """Originals needed to separate two systems δ apart with k judges per item."""

    judges_per_item: int
    n_originals: int
    judgments: int  # originals × systems × k
    power: Proportion | None  # simulated: share of studies of that size that separate the pair


@dataclass(frozen=True)
class PlanResult:
    assumptions: PlanAssumptions
    n_originals: int
    n_judges: int
    judges_per_item: int | None
    level: float
    n_simulations: int
    seed: int
    ranking_right: Proportion
    pairs_separated: Proportion
    agreement_alpha: float | None
    agreement_width: float | None
    agreement_width_sd: float | None
    judgments: int
    separation: tuple[SeparationRow, ...] = field(default_factory=tuple)
    delta: float | None = None
    power: float = 0.8

    def to_dict(self) -> dict:
        out = asdict(self)
        out["assumptions"] = self.assumptions.to_dict()
        return out


#: The judges per item the separation table has a row for.
SEPARATION_JUDGE_COUNTS = (1, 2, 3, 5)

#: The separation table simulates each row at most this many times (whatever the plan's own count).
SEPARATION_MAX_SIMULATIONS = 100


def separation_sizes(
    a: PlanAssumptions,
    *,
    delta: float,
    level: float = 0.05,
    power: float = 0.8,
    judge_counts: Sequence[int] = SEPARATION_JUDGE_COUNTS,
) -> list[tuple[int, int]]:
    """(k, originals needed to separate two systems ``delta`` apart with k judges per item), by
    the normal approximation of the module's docstring: what :func:`separation_table` simulates."""
    if not delta > 0:
        raise ValueError("delta must be positive")
    if not 0 < power < 1:
        raise ValueError("power must be strictly between 0 and 1")
    z = float(sps.norm.ppf(1 - level / 2) + sps.norm.ppf(power))
    out = []
    for k in judge_counts:
        var = 2 * (a.item_sd**2 + (a.judge_bias_sd**2 + a.noise_sd**2) / k)
        out.append((int(k), max(3, math.ceil(z * z * var / delta**2))))
    return out


def separation_table(
    a: PlanAssumptions,
    *,
    delta: float,
    level: float = 0.05,
    power: float = 0.8,
    judge_counts: Sequence[int] = SEPARATION_JUDGE_COUNTS,
    n_judges: int | None = None,
    n_simulations: int = SEPARATION_MAX_SIMULATIONS,
    seed: int = 0,
    n_systems: int | None = None,
) -> tuple[SeparationRow, ...]:
    """For each k: originals needed to separate two systems ``delta`` apart (normal approximation,
    see the module's docstring), and, with ``n_simulations``, the power simulated at that size."""
    n_sys = n_systems or len(a.system_means)
    rows = []
    for k, n in separation_sizes(a, delta=delta, level=level, power=power, judge_counts=judge_counts):
        achieved = None
        if n_simulations:
            pair = {"a": 3.0 + delta / 2, "b": 3.0 - delta / 2}
            hits = 0
            for i in range(n_simulations):
                frame = simulate(
                    a,
                    n_originals=n,
                    n_judges=max(k, n_judges or k),
                    judges_per_item=k,
                    systems=pair,
                    seed=seed + 7919 * k + i,
                )
                hits += neighbours_separated(per_original(frame), pair, level)
            achieved = wilson_interval(hits, n_simulations)
        rows.append(SeparationRow(int(k), int(n), int(n * n_sys * k), achieved))
    return tuple(rows)


@dataclass(frozen=True)
class PlanCost:
    """What a plan will compute, counted before any of it runs (the service refuses a plan
    over its limits): simulated judgments of each table, and the largest simulated study."""

    ranking: int  # judgments simulated for the ranking's n_simulations studies
    separation: int  # judgments simulated for the separation table's power (0 without delta)
    largest_study: int  # items × judges drawn over, of the largest simulated study (its memory)

    @property
    def total(self) -> int:
        return self.ranking + self.separation


def plan_cost(
    a: PlanAssumptions,
    *,
    n_originals: int,
    n_judges: int,
    judges_per_item: int | None,
    n_simulations: int,
    delta: float | None,
    level: float = 0.05,
    power: float = 0.8,
) -> PlanCost:
    """Count what :func:`plan_study` with these arguments computes, without computing it.

    A simulated study of i items draws each item's k judges among all J (an i × J draw, and
    the agreement's judge × item matrix), then simulates i × k judgments. The separation table
    simulates, per row, min(n_simulations, :data:`SEPARATION_MAX_SIMULATIONS`) studies of two
    systems with the row's originals, which grow as 1/δ²: a small ``delta`` is what makes it large.
    """
    n_items = n_originals * len(a.system_means)
    k = judges_per_item or n_judges
    ranking = n_simulations * n_items * k
    largest = n_items * n_judges
    separation = 0
    if delta:
        sims = min(n_simulations, SEPARATION_MAX_SIMULATIONS)
        for k_row, n in separation_sizes(a, delta=delta, level=level, power=power):
            separation += sims * n * 2 * k_row
            largest = max(largest, n * 2 * max(k_row, n_judges))
    return PlanCost(ranking=ranking, separation=separation, largest_study=largest)


def plan_study(
    a: PlanAssumptions,
    *,
    n_originals: int,
    n_judges: int,
    judges_per_item: int | None = None,
    level: float = 0.05,
    n_simulations: int = 200,
    n_agreement: int = 20,
    n_boot: int = 200,
    delta: float | None = None,
    power: float = 0.8,
    seed: int = 0,
) -> PlanResult:
    """Simulate ``n_simulations`` studies of ``n_originals`` × the systems, rated by
    ``n_judges`` judges (k = ``judges_per_item`` each, or all), and report the chance that the
    ranking is right and that neighbours are separated, with Wilson intervals; the expected
    width of α's bootstrap interval over ``n_agreement`` of them; and, with ``delta``, the
    :func:`separation_table`. Deterministic for a ``seed``.
    """
    if n_originals < 2 or n_judges < 1 or n_simulations < 1:
        raise ValueError("a plan needs at least 2 originals, 1 judge and 1 simulation")
    if judges_per_item is not None and not 1 <= judges_per_item <= n_judges:
        raise ValueError("judges per item must be between 1 and the number of judges")
    if not 0 < level < 1:
        raise ValueError("level must be strictly between 0 and 1")
    right = separated = 0
    widths, alphas = [], []
    for i in range(n_simulations):
        frame = simulate(a, n_originals=n_originals, n_judges=n_judges, judges_per_item=judges_per_item, seed=seed + i)
        table = per_original(frame)
        right += ranking_is_right(table, a.system_means)
        separated += neighbours_separated(table, a.system_means, level)
        if i < n_agreement and (judges_per_item or n_judges) >= 2:
            values = frame.pivot(index="judge", columns="item", values="score").to_numpy(dtype=float)
            res = krippendorff_alpha(values, level="interval", n_boot=n_boot, seed=seed + i)
            if res.ci_low is not None and res.ci_high is not None:
                widths.append(res.ci_high - res.ci_low)
                alphas.append(res.statistic)
    k = judges_per_item or n_judges
    sep = (
        separation_table(
            a,
            delta=delta,
            level=level,
            power=power,
            n_judges=n_judges,
            n_simulations=min(n_simulations, SEPARATION_MAX_SIMULATIONS),
            seed=seed,
        )
        if delta
        else ()
    )
    return PlanResult(
        assumptions=a,
        n_originals=n_originals,
        n_judges=n_judges,
        judges_per_item=judges_per_item,
        level=level,
        n_simulations=n_simulations,
        seed=seed,
        ranking_right=wilson_interval(right, n_simulations),
        pairs_separated=wilson_interval(separated, n_simulations),
        agreement_alpha=float(np.mean(alphas)) if alphas else None,
        agreement_width=float(np.mean(widths)) if widths else None,
        agreement_width_sd=float(np.std(widths, ddof=1)) if len(widths) > 1 else None,
        judgments=n_originals * len(a.system_means) * k,
        separation=sep,
        delta=delta,
        power=power,
    )
