"""Adaptive allocation for absolute ratings: which judgment helps the ranking most?

The uncertainty that matters for an absolute-rating study is the order of its systems.
With n_s judgments of system s, mean m_s and variance v_s, the difference of two
systems' means has standard error se_st = √(v_s/n_s + v_t/n_t), and (normal
approximation) the chance that the observed order of s and t is wrong is
P_st = Φ(−|m_s − m_t| / se_st). One more judgment of s shrinks se²_st by
Δ_s = v_s/n_s − v_s/(n_s + 1) = v_s / (n_s (n_s + 1)). The priority of s is the
expected gain over the pairs it is part of, weighted by how unsure each pair still is:

    priority(s) = Σ_t P_st · Δ_s / se²_st

so pairs already separated (P_st ≈ 0) stop attracting judgments, and systems with few
judgments or noisy scores attract more: the same quantity active evaluation methods
sample by (Zouhar, Cui & Sachan, TACL 2025, choose items whose judgments move the
system ranking; Riley et al. 2024, arXiv 2404.01474, stable ranking probability).

**Stopping.** The ranking by means is wrong only if some pair of neighbours is in the
wrong order, so (union bound) P(ranking wrong) ≤ Σ_neighbours P_st. A study may stop
when that bound is at most the researcher's level.

Pure Python over plain numbers; the apps keep per-system (n, sum, sum of squares).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["SystemTally", "pair_wrong_probability", "pick_item", "ranking_wrong_bound", "system_priorities"]


@dataclass(frozen=True)
class SystemTally:
    """Sufficient statistics of one system's judgments on the target criterion."""

    n: int
    total: float
    total_sq: float

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else math.nan

    def variance(self, fallback: float) -> float:
        """Sample variance; ``fallback`` (the pooled variance) below two judgments or at zero."""
        if self.n < 2:
            return fallback
        var = (self.total_sq - self.total * self.total / self.n) / (self.n - 1)
        return var if var > 1e-12 else fallback


def _pooled(tallies: Mapping[str, SystemTally], default: float) -> float:
    num = sum(t.total_sq - t.total * t.total / t.n for t in tallies.values() if t.n >= 2)
    den = sum(t.n - 1 for t in tallies.values() if t.n >= 2)
    return num / den if den > 0 and num > 1e-12 else default


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


def pair_wrong_probability(a: SystemTally, b: SystemTally, *, pooled: float) -> float:
    """Φ(−|m_a − m_b| / se_ab): how likely the observed order of a and b is wrong (½ without data)."""
    if a.n == 0 or b.n == 0:
        return 0.5
    se = math.sqrt(a.variance(pooled) / a.n + b.variance(pooled) / b.n)
    if se <= 0:
        return 0.0 if a.mean != b.mean else 0.5
    return _phi(-abs(a.mean - b.mean) / se)


def system_priorities(tallies: Mapping[str, SystemTally], *, default_variance: float = 1.0) -> dict[str, float]:
    """priority(s) = Σ_t P_st · Δ_s / se²_st (module docstring); a system without judgments gets
    the largest priority of all (+inf), so every system is sampled before any is favoured."""
    pooled = _pooled(tallies, default_variance)
    out: dict[str, float] = {}
    names = list(tallies)
    for s in names:
        ts = tallies[s]
        if ts.n == 0:
            out[s] = math.inf
            continue
        vs = ts.variance(pooled)
        gain = vs / (ts.n * (ts.n + 1))
        total = 0.0
        for t in names:
            if t == s:
                continue
            tt = tallies[t]
            if tt.n == 0:
                total += 1.0
                continue
            se2 = vs / ts.n + tt.variance(pooled) / tt.n
            total += pair_wrong_probability(ts, tt, pooled=pooled) * gain / se2
        out[s] = total
    return out


def ranking_wrong_bound(tallies: Mapping[str, SystemTally], *, default_variance: float = 1.0) -> float:
    """Σ over neighbours in the ranking by mean of P_st: an upper bound on P(the ranking is wrong)."""
    if any(t.n == 0 for t in tallies.values()):
        return 1.0
    pooled = _pooled(tallies, default_variance)
    order = sorted(tallies, key=lambda s: -tallies[s].mean)
    return min(
        1.0,
        sum(
            pair_wrong_probability(tallies[a], tallies[b], pooled=pooled)
            for a, b in zip(order, order[1:], strict=False)
        ),
    )


def pick_item(systems: Sequence[str | None], priorities: Mapping[str, float]) -> int:
    """Index of the item to serve among ``systems`` (each item's system; None for a control or an
    unknown system): the first item of the highest priority. The first item wins ties and a control
    at the head stays there (controls keep their seeded places: QC needs them early)."""
    if not systems:
        raise ValueError("no items to choose from")
    if systems[0] is None:
        return 0
    best, best_value = 0, priorities.get(systems[0], 0.0)
    for i, s in enumerate(systems[1:], start=1):
        value = priorities.get(s, 0.0) if s is not None else -math.inf
        if value > best_value:
            best, best_value = i, value
    return best
