"""System strengths from k-way rankings: the Plackett–Luce model, fitted with choix.

Plackett–Luce (Luce 1959; Plackett 1975) gives each system i a strength θ_i = e^{β_i};
a judge's ranking σ of a set S of candidates is read as successive choices of the best
remaining one:

    P(σ) = Π_{r=1}^{|S|-1}  θ_{σ(r)} / Σ_{s ≥ r} θ_{σ(s)}.

The parameters β (centred to mean 0, as choix returns them) are the maximum-likelihood
estimate computed by I-LSR (Maystre & Grossglauser 2015) in ``choix.ilsr_rankings`` /
``choix.ilsr_top1`` (choix 0.4.1). ``alpha`` is choix's regularisation (alpha
pseudo-transitions between every pair in the LSR Markov chain; choix's documentation on
regularization): with
``alpha=0`` the result is plain ML and equals choix's own test cases; the default 0.01 is
a weak prior so that a system that is never beaten keeps a finite strength instead of
making the chain reducible (choix then raises).

**Ties** are handled as Breslow (1974) handled tied event times in Cox's partial
likelihood, of which the Plackett–Luce likelihood is the rank-ordered special case: a
group G of tied candidates, with R the candidates not yet placed (G included), adds

    Π_{a ∈ G}  θ_a / Σ_{b ∈ R} θ_b,

i.e. each tied candidate is "chosen" from the whole remaining set, and tied candidates are
not ordered among themselves. Without ties this is exactly the Plackett–Luce factor, so a
ranking without ties is unchanged; with ties the data go to ``choix.ilsr_top1`` as one
top-1 choice per tied candidate. A final group of tied candidates is no exception: each
is chosen from the group itself, so a tie at the bottom is evidence of equality as one in
the middle is (until issue 41 a final group added nothing, which is not Breslow's rule);
only a last single candidate adds nothing (its factor is 1). Breslow's rule is known to
pull tied strengths together when ties are many (Efron's correction is the usual
alternative); the report says how many rankings have ties.

Bootstrap intervals resample **originals** with replacement (all rankings of a drawn
original come along, as many times as it is drawn), refit, and take the percentile
interval of each β (Efron & Tibshirani 1993); seeded by ``numpy.random.default_rng(seed)``.
The same resamples test each system against the one ranked just below it: with Δ* the
resampled β difference, p = min(1, 2 (1 + #{Δ* ≤ 0}) / (1 + B)) (two-sided, the bootstrap
analogue of :func:`metrics.core.stats.significance.paired_bootstrap`), and, as WMT's
clusters (Bojar et al. 2013), a new cluster starts below a system whose p is under
``significance_level``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from metrics.core.stats.results import jsonable

from .orders import Ranking

__all__ = ["PlackettLuceResult", "plackett_luce", "top1_choices"]


@dataclass(frozen=True)
class PlackettLuceResult:
    """Fitted strengths, best first: ``params`` are β (mean 0), ``probabilities`` θ / Σθ.

    ``probabilities[i]`` is the chance that system i is ranked first when all systems
    are on the screen; ``low``/``high`` the bootstrap interval of β (NaN without one).
    """

    systems: tuple[str, ...]
    params: tuple[float, ...]
    probabilities: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    p_next: tuple[float | None, ...]
    cluster: tuple[int, ...]
    n_rankings: int
    n_originals: int
    n_tied_rankings: int
    alpha: float
    n_boot: int
    confidence_level: float
    seed: int
    ties: str = "breslow"

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict, one row per system under ``systems``."""
        rows = [
            {"system": s, "param": p, "probability": q, "low": lo, "high": hi, "p_next": pn, "cluster": c}
            for s, p, q, lo, hi, pn, c in zip(
                self.systems, self.params, self.probabilities, self.low, self.high, self.p_next, self.cluster
            )
        ]
        return jsonable(
            {
                "systems": rows,
                "n_rankings": self.n_rankings,
                "n_originals": self.n_originals,
                "n_tied_rankings": self.n_tied_rankings,
                "alpha": self.alpha,
                "n_boot": self.n_boot,
                "confidence_level": self.confidence_level,
                "seed": self.seed,
                "ties": self.ties,
            }
        )


def top1_choices(groups: Sequence[Sequence[int]]) -> list[tuple[int, tuple[int, ...]]]:
    """A ranking with ties as top-1 choices (winner, the others of its choice set), Breslow's way.

    Each member a of a group chosen from the remaining set R becomes ``(a, R \\ {a})``, a
    final tied group too; only a last single candidate adds nothing. Without ties this is
    the usual decomposition of a ranking into successive choices.
    """
    remaining = [i for g in groups for i in g]
    out: list[tuple[int, tuple[int, ...]]] = []
    for group in groups:
        if len(remaining) == 1:
            break
        for a in group:
            out.append((a, tuple(b for b in remaining if b != a)))
        remaining = [b for b in remaining if b not in set(group)]
    return out


def _fit(
    n: int, rankings: list[tuple[tuple[int, ...], ...]], alpha: float, start: np.ndarray | None = None
) -> np.ndarray:
    """ML (``alpha=0``) or regularised estimate; ``start`` warm-starts I-LSR (same fixed point, fewer steps)."""
    import choix

    if all(len(g) == 1 for r in rankings for g in r):
        data = [tuple(g[0] for g in r) for r in rankings]
        return np.asarray(choix.ilsr_rankings(n, data, alpha=alpha, initial_params=start))
    choices = [c for r in rankings for c in top1_choices(r)]
    return np.asarray(choix.ilsr_top1(n, choices, alpha=alpha, initial_params=start))


def plackett_luce(
    rankings: Sequence[Ranking],
    *,
    alpha: float = 0.01,
    n_boot: int = 500,
    confidence_level: float = 0.95,
    significance_level: float = 0.05,
    seed: int = 0,
) -> PlackettLuceResult:
    """Fit Plackett–Luce to ``rankings`` (the module docstring) with bootstrap intervals.

    Systems are every system ranked at least once, sorted by name for the fit and
    returned best first. ``n_boot=0`` skips the bootstrap. Raises ``ValueError`` when
    there is nothing to fit, or when ``alpha=0`` and the comparisons do not connect the
    systems (choix's stationary distribution is then undefined).
    """
    if not rankings:
        raise ValueError("no rankings to fit")
    systems = sorted({s for r in rankings for s in r.systems})
    index = {s: i for i, s in enumerate(systems)}
    # One order whatever the order of the input (a file re-imported, rows read back in another
    # order, the members of a tie listed otherwise): the fit, the resampled originals and so
    # the intervals are a function of the rankings and the seed only (issue 42).
    rankings = sorted(rankings, key=lambda r: (r.original, r.judge, tuple(tuple(sorted(g)) for g in r.groups)))
    coded = [tuple(tuple(sorted(index[s] for s in g)) for g in r.groups) for r in rankings]
    params = _fit(len(systems), coded, alpha)

    by_original: dict[str, list[int]] = {}
    for pos, r in enumerate(rankings):
        by_original.setdefault(r.original, []).append(pos)
    originals = sorted(by_original)
    boots = []
    if n_boot > 0:
        rng = np.random.default_rng(seed)
        for _ in range(n_boot):
            drawn = rng.integers(0, len(originals), size=len(originals))
            sample = [coded[p] for o in drawn for p in by_original[originals[o]]]
            present = {i for r in sample for g in r for i in g}
            try:
                est = _fit(len(systems), sample, alpha, start=params)
            except ValueError:
                continue  # a resample whose comparisons do not connect the systems (alpha = 0)
            est = est.astype(float)
            est[[i for i in range(len(systems)) if i not in present]] = np.nan
            boots.append(est)
    tail = (1 - confidence_level) / 2 * 100
    if boots:
        arr = np.vstack(boots)
        low = [
            float(np.nanpercentile(arr[:, j], tail)) if np.isfinite(arr[:, j]).any() else math.nan
            for j in range(len(systems))
        ]
        high = [
            float(np.nanpercentile(arr[:, j], 100 - tail)) if np.isfinite(arr[:, j]).any() else math.nan
            for j in range(len(systems))
        ]
    else:
        low = high = [math.nan] * len(systems)
    theta = np.exp(params - params.max())
    prob = theta / theta.sum()
    order = sorted(range(len(systems)), key=lambda j: (-params[j], systems[j]))
    p_next: list[float | None] = []
    cluster, clusters = 1, []
    for pos, j in enumerate(order):
        clusters.append(cluster)
        p = None
        if boots and pos + 1 < len(order):
            d = arr[:, j] - arr[:, order[pos + 1]]
            d = d[np.isfinite(d)]
            if d.size:
                p = min(1.0, 2 * (1 + int((d <= 0).sum())) / (1 + d.size))
        p_next.append(p)
        if p is not None and p < significance_level:
            cluster += 1
    return PlackettLuceResult(
        systems=tuple(systems[j] for j in order),
        params=tuple(float(params[j]) for j in order),
        probabilities=tuple(float(prob[j]) for j in order),
        low=tuple(low[j] for j in order),
        high=tuple(high[j] for j in order),
        p_next=tuple(p_next),
        cluster=tuple(clusters),
        n_rankings=len(rankings),
        n_originals=len(originals),
        n_tied_rankings=sum(r.has_ties for r in rankings),
        alpha=float(alpha),
        n_boot=int(n_boot),
        confidence_level=float(confidence_level),
        seed=int(seed),
    )
