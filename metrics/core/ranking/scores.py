"""The 0–100 scores a ranking study may ask beside the order (issue 42): per system, the mean
raw score and WMT's per-judge z-score (:mod:`metrics.core.stats.zscores`); per judge, whether
the scores agree with the judge's own order.

**Scores against the order.** Within one ranking, every pair of candidates the judge put in
different groups is a pair: it *agrees* when the better-ranked candidate got the higher
score, *contradicts* when it got the lower one, and is a *score tie* when both got the same
score (a tie in the order says nothing about the scores and is no pair). Per judge: the
counts, the share contradicting, and the mean over their rankings of Kendall's τ-b between
the scores and the order (scipy's ``kendalltau``, which corrects for ties in both; a
ranking whose scores are all equal has no τ and is left out of the mean). A judge whose
scores often contradict their own order is not reading the sentences, or reads the scale
upside down.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations

import pandas as pd
from scipy.stats import kendalltau

from ..stats.zscores import system_zscores

__all__ = ["JudgeScoreOrder", "ScoredCandidate", "score_order_agreement", "system_scores"]

#: The criterion name of a ranking's scores in the judgment frame.
CRITERION = "score"


@dataclass(frozen=True)
class ScoredCandidate:
    """One candidate of one judge's ranking: its 0–100 score and its mid-rank (1 = best)."""

    judge: str
    ranking: str
    original: str
    system: str
    score: float
    rank: float
    is_control: bool = False


@dataclass(frozen=True)
class JudgeScoreOrder:
    judge: str
    n_rankings: int
    pairs: int
    agree: int
    score_ties: int
    contradict: int
    share_contradicting: float | None
    mean_tau: float | None
    n_tau: int

    def to_dict(self) -> dict:
        return asdict(self)


def system_scores(candidates: Iterable[ScoredCandidate]) -> pd.DataFrame:
    """Per genuine system: ``n_originals``, ``n_judgments``, ``n_z``, mean ``raw`` score and mean
    ``z``, as :func:`metrics.core.stats.zscores.system_zscores` computes them (WMT's z: each
    judge's scores standardised over their genuine candidates; controls left out)."""
    rows = [
        {
            "judge": c.judge,
            "item": f"{c.ranking}:{c.system}",
            "original": c.original,
            "system": c.system,
            "is_control": False,
            "control_kind": None,
            "criterion": CRITERION,
            "score": float(c.score),
        }
        for c in candidates
        if not c.is_control  # they count in no mean, and each judge's scale is their genuine scores'
    ]
    if not rows:
        return pd.DataFrame(columns=["system", "criterion", "n_originals", "n_judgments", "n_z", "raw", "z"])
    return system_zscores(pd.DataFrame(rows), criteria=[CRITERION])


def score_order_agreement(candidates: Iterable[ScoredCandidate]) -> list[JudgeScoreOrder]:
    """Per judge (by name), how their scores agree with their own order (the module docstring).
    Controls count: a judge's scores and order of a control are theirs as much."""
    by_ranking: dict[tuple[str, str], list[ScoredCandidate]] = defaultdict(list)
    for c in candidates:
        by_ranking[(c.judge, c.ranking)].append(c)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # rankings, agree, ties, contradict
    taus: dict[str, list[float]] = defaultdict(list)
    for (judge, _), shown in sorted(by_ranking.items()):
        tally = counts[judge]
        tally[0] += 1
        for a, b in combinations(shown, 2):
            if a.rank == b.rank:
                continue
            better, worse = (a, b) if a.rank < b.rank else (b, a)
            if better.score > worse.score:
                tally[1] += 1
            elif better.score == worse.score:
                tally[2] += 1
            else:
                tally[3] += 1
        tau = _tau([-c.rank for c in shown], [c.score for c in shown])
        if tau is not None:
            taus[judge].append(tau)
    out = []
    for judge in sorted(counts):
        n, agree, ties, contradict = counts[judge]
        pairs = agree + ties + contradict
        out.append(
            JudgeScoreOrder(
                judge=judge,
                n_rankings=n,
                pairs=pairs,
                agree=agree,
                score_ties=ties,
                contradict=contradict,
                share_contradicting=contradict / pairs if pairs else None,
                mean_tau=sum(taus[judge]) / len(taus[judge]) if taus[judge] else None,
                n_tau=len(taus[judge]),
            )
        )
    return out


def _tau(order: Sequence[float], scores: Sequence[float]) -> float | None:
    """Kendall's τ-b of one ranking's scores against its order; None where undefined (a constant)."""
    if len(order) < 2 or len(set(order)) < 2 or len(set(scores)) < 2:
        return None
    tau = float(kendalltau(order, scores).statistic)
    return tau if math.isfinite(tau) else None
