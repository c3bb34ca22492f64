"""A seeded judge simulator for tests and study planning.

The model (a plain additive one, the same as behind the ICC and α):
score_ijc = q_ic + b_jc + e_ijc, where q_ic = μ_{s(i),c} + item_sd · z_ic is the latent
quality of item i on criterion c (μ per system, so systems differ; z correlated across
criteria through a shared item factor), b_jc ~ N(0, judge_bias_sd²) a judge's
leniency, e_ijc ~ N(0, noise_sd²) noise.  Scores are rounded and clipped to 1–5
unless ``discrete=False``.  Random clickers answer uniformly on 1–5 everywhere and
fast.  Careful judges give controls their expected score, off by one point with
probability ``control_slip``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from metrics.core.stats.agreement.alpha import krippendorff_alpha

from .data import CRITERIA, DEFAULT_CONTROL_EXPECTED
from .results import JudgePlanRow

__all__ = ["DEFAULT_SYSTEMS", "judges_needed", "plan_judges", "simulate_judgments", "simulate_metric_scores"]

# Latent per-system means on a 1–5 scale, loosely shaped like PEM's MTC study: human
# translations adequate and fluent but close to the original, machine output less so.
DEFAULT_SYSTEMS: Mapping[str, Mapping[str, float]] = {
    "human1": {"adequacy": 4.3, "fluency": 4.4, "dissimilarity": 2.6, "overall": 3.9},
    "human2": {"adequacy": 4.1, "fluency": 4.2, "dissimilarity": 2.8, "overall": 3.7},
    "machine1": {"adequacy": 3.2, "fluency": 2.9, "dissimilarity": 3.1, "overall": 2.8},
    "machine2": {"adequacy": 2.8, "fluency": 2.6, "dissimilarity": 3.3, "overall": 2.5},
}

# Loading of each criterion on the shared item factor (the rest is criterion-specific),
# so that adequacy and overall correlate strongly at sentence level, as in PEM Table 2.
_LOADINGS = {"adequacy": 0.8, "fluency": 0.5, "dissimilarity": -0.2, "overall": 0.9}


def simulate_judgments(
    *,
    n_originals: int = 300,
    systems: Mapping[str, Mapping[str, float]] | Sequence[str] = DEFAULT_SYSTEMS,
    n_judges: int = 3,
    judges_per_item: int | None = None,
    criteria: Sequence[str] = CRITERIA,
    controls: Sequence[str] = ("identical", "random", "unigram"),
    control_expected: Mapping[str, Mapping[str, float]] = DEFAULT_CONTROL_EXPECTED,
    item_sd: float = 0.7,
    judge_bias_sd: float = 0.25,
    noise_sd: float = 0.6,
    n_random_clickers: int = 0,
    control_slip: float = 0.15,
    discrete: bool = True,
    seconds: bool = True,
    seed: int = 0,
) -> pd.DataFrame:
    """Simulate a judging study and return the canonical tidy judgment frame.

    One item per (original, system) and per (original, control kind).  Every judge
    rates every item unless ``judges_per_item`` = k, in which case each item gets k
    judges drawn at random (an incomplete design).  Judges are ``j01``, ``j02`` …; the
    last ``n_random_clickers`` of them are random clickers, also listed in
    ``frame.attrs["random_clickers"]``.  ``systems`` is a mapping of latent
    per-criterion means, or a list of names (all with mean 3).  Deterministic for a
    given ``seed``.
    """
    rng = np.random.default_rng(seed)
    if not isinstance(systems, Mapping):
        systems = {str(s): {} for s in systems}
    if n_random_clickers > n_judges:
        raise ValueError("n_random_clickers cannot exceed n_judges")
    if judges_per_item is not None and not 1 <= judges_per_item <= n_judges:
        raise ValueError("judges_per_item must be between 1 and n_judges")
    sys_names = list(systems)
    criteria = list(criteria)
    n_c = len(criteria)

    # Items: originals × (systems + controls), shuffled opaque ids.
    kinds = list(sys_names) + [f"control:{k}" for k in controls]
    n_items = n_originals * len(kinds)
    orig_idx = np.repeat(np.arange(n_originals), len(kinds))
    kind_idx = np.tile(np.arange(len(kinds)), n_originals)
    is_control = kind_idx >= len(sys_names)
    tokens = rng.permutation(n_items)
    item_ids = np.array([f"it{t:07d}" for t in tokens], dtype=object)
    orig_ids = np.array([f"o{o:05d}" for o in range(n_originals)], dtype=object)[orig_idx]
    system_col = np.array(kinds, dtype=object)[kind_idx]
    kind_col = np.array([None] * len(sys_names) + list(controls), dtype=object)[kind_idx]

    # Latent quality per item and criterion.
    shared = rng.standard_normal(n_items)
    latent = np.empty((n_items, n_c))
    for c, crit in enumerate(criteria):
        load = _LOADINGS.get(crit, 0.5)
        z = load * shared + math.sqrt(1 - load**2) * rng.standard_normal(n_items)
        mu = np.array([systems[s].get(crit, 3.0) for s in sys_names] + [3.0] * len(controls))
        latent[:, c] = mu[kind_idx] + item_sd * z

    # Which judge rates which item.
    if judges_per_item is None or judges_per_item == n_judges:
        pair_item = np.repeat(np.arange(n_items), n_judges)
        pair_judge = np.tile(np.arange(n_judges), n_items)
    else:
        ranks = np.argsort(rng.random((n_items, n_judges)), axis=1)[:, :judges_per_item]
        pair_item = np.repeat(np.arange(n_items), judges_per_item)
        pair_judge = ranks.ravel()
    n_pairs = pair_item.size
    n_careful = n_judges - n_random_clickers
    clicker = pair_judge >= n_careful

    bias = rng.normal(0.0, judge_bias_sd, size=(n_judges, n_c))
    noise = rng.normal(0.0, noise_sd, size=(n_pairs, n_c))
    raw = latent[pair_item] + bias[pair_judge] + noise
    scores = np.clip(np.rint(raw), 1, 5) if discrete else raw

    # Controls: careful judges give the expected score, sometimes one point off.
    ctrl = is_control[pair_item] & ~clicker
    if ctrl.any():
        expected = np.full((n_pairs, n_c), np.nan)
        for kind in controls:
            rows = ctrl & (kind_col[pair_item] == kind)
            for c, crit in enumerate(criteria):
                e = control_expected.get(kind, {}).get(crit)
                if e is not None:
                    expected[rows, c] = e
        has = ~np.isnan(expected)
        slip = rng.choice([-1.0, 1.0], size=expected.shape) * (rng.random(expected.shape) < control_slip)
        exp_scores = (
            np.clip(expected + slip, 1, 5) if discrete else expected + rng.normal(0, noise_sd / 3, expected.shape)
        )
        scores = np.where(has, exp_scores, scores)

    if n_random_clickers:
        scores[clicker] = rng.integers(1, 6, size=(int(clicker.sum()), n_c))

    judge_ids = np.array([f"j{j + 1:02d}" for j in range(n_judges)], dtype=object)
    data = {
        "judge": np.repeat(judge_ids[pair_judge], n_c),
        "item": np.repeat(item_ids[pair_item], n_c),
        "original": np.repeat(orig_ids[pair_item], n_c),
        "system": np.repeat(system_col[pair_item], n_c),
        "is_control": np.repeat(is_control[pair_item], n_c),
        "control_kind": np.repeat(kind_col[pair_item], n_c),
        "criterion": np.tile(np.array(criteria, dtype=object), n_pairs),
        "score": scores.ravel(),
    }
    if seconds:
        median = np.where(clicker, 3.0, 20.0)
        secs = median * np.exp(rng.normal(0.0, 0.4, n_pairs))
        data["seconds"] = np.repeat(np.round(secs, 2), n_c)
    frame = pd.DataFrame(data)
    if discrete:
        frame["score"] = frame["score"].astype(int)
    frame.attrs["random_clickers"] = [str(j) for j in judge_ids[n_careful:]]
    return frame


def simulate_metric_scores(
    judgments: pd.DataFrame,
    *,
    noise_sd: Mapping[str, float] = {"metric_good": 0.4, "metric_fair": 0.8, "metric_poor": 1.6},
    criterion: str = "overall",
    seed: int = 0,
) -> pd.DataFrame:
    """Metric scores for the items of a judgment frame, for tests and demos.

    Each metric scores item i as (mean judge score on ``criterion``) + N(0, sd²), so a
    smaller ``noise_sd`` means a metric closer to the humans.  Returns the long metric
    frame (``metric``, ``item``, ``system``, ``score``), deterministic for a seed.
    """
    rng = np.random.default_rng(seed)
    rows = judgments.loc[judgments["criterion"] == criterion]
    per_item = rows.groupby("item", sort=True).agg(system=("system", "first"), score=("score", "mean"))
    parts = []
    for name, sd in noise_sd.items():
        parts.append(
            pd.DataFrame(
                {
                    "metric": name,
                    "item": per_item.index.to_numpy(),
                    "system": per_item["system"].to_numpy(),
                    "score": per_item["score"].to_numpy(dtype=float) + rng.normal(0.0, sd, len(per_item)),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def plan_judges(
    *,
    n_items: int = 300,
    item_sd: float = 0.7,
    judge_bias_sd: float = 0.25,
    noise_sd: float = 0.6,
    judge_counts: Sequence[int] = (2, 3, 4, 5, 6, 8, 10),
    simulate: bool = True,
    n_boot: int = 200,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> tuple[JudgePlanRow, ...]:
    """How reliability and precision grow with the number of judges per item.

    With single-judge reliability ρ = σ²_item / (σ²_item + σ²_bias + σ²_noise) (the
    ICC(2,1) of the additive model), the mean of k judges has Spearman–Brown
    reliability kρ / (1 + (k−1)ρ) (Spearman 1910; Brown 1910) and an item mean's
    confidence half-width is z_{(1+cl)/2} · √((σ²_bias + σ²_noise) / k).  These are
    exact for the continuous model and optimistic for rounded 1–5 scores.  With
    ``simulate=True`` one study of ``n_items`` items per k is simulated (continuous
    scores, one criterion) and its interval Krippendorff's α and bootstrap CI width
    reported, to show how uncertain α itself is at that study size.
    """
    var_item, var_err = item_sd**2, judge_bias_sd**2 + noise_sd**2
    rho = var_item / (var_item + var_err)
    zcrit = float(sps.norm.ppf(0.5 + confidence_level / 2))
    rows = []
    for k in judge_counts:
        if k < 1:
            raise ValueError("judge counts must be positive")
        rel = k * rho / (1 + (k - 1) * rho)
        half = zcrit * math.sqrt(var_err / k)
        alpha = width = None
        if simulate and k >= 2:
            frame = simulate_judgments(
                n_originals=n_items,
                systems={"system": {"overall": 3.0}},
                n_judges=k,
                criteria=("overall",),
                controls=(),
                item_sd=item_sd,
                judge_bias_sd=judge_bias_sd,
                noise_sd=noise_sd,
                discrete=False,
                seconds=False,
                seed=seed + k,
            )
            values = frame.pivot(index="judge", columns="item", values="score").to_numpy(dtype=float)
            res = krippendorff_alpha(
                values, level="interval", n_boot=n_boot, confidence_level=confidence_level, seed=seed
            )
            alpha = res.statistic
            width = None if res.ci_low is None or res.ci_high is None else res.ci_high - res.ci_low
        rows.append(JudgePlanRow(int(k), float(rel), float(half), alpha, width))
    return tuple(rows)


def judges_needed(
    target_reliability: float = 0.8,
    *,
    item_sd: float = 0.7,
    judge_bias_sd: float = 0.25,
    noise_sd: float = 0.6,
) -> int:
    """Smallest k whose k-judge mean reaches ``target_reliability`` (Spearman–Brown).

    k = ⌈ R (1 − ρ) / (ρ (1 − R)) ⌉ with ρ the single-judge reliability
    σ²_item / (σ²_item + σ²_bias + σ²_noise) and R the target (Spearman 1910; Brown
    1910).  Plug in variances estimated from a pilot (e.g. from the ICC ANOVA).
    """
    if not 0 < target_reliability < 1:
        raise ValueError("target_reliability must be strictly between 0 and 1")
    var_item = item_sd**2
    rho = var_item / (var_item + judge_bias_sd**2 + noise_sd**2)
    if rho <= 0:
        raise ValueError("item_sd must be positive")
    k = target_reliability * (1 - rho) / (rho * (1 - target_reliability))
    return max(1, math.ceil(k - 1e-12))
