"""Head-to-head win rates from k-way rankings.

A ranking of k candidates contains k(k − 1)/2 pairwise outcomes. For systems a and b,
over the rankings that contain both: W = rankings with a above b, L = with b above a,
T = with the two tied (same group). The win rate of a over b is

    (W + T/2) / (W + T + L),

ties counting half. ``decisive_win_rate`` leaves ties out, W / (W + L): the per-pair term
of WMT's "expected wins" (Koehn 2012; Bojar et al. 2013), which ignores ties. A system's
overall win rate pools its outcomes against every other system.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from metrics.core.stats.results import jsonable

from .orders import Ranking, midranks

__all__ = ["PairRecord", "SystemRecord", "pairwise_records", "system_win_rates"]


@dataclass(frozen=True)
class PairRecord:
    """Outcomes of system ``a`` against system ``b`` (a < b by name)."""

    a: str
    b: str
    wins: int
    ties: int
    losses: int

    @property
    def n(self) -> int:
        return self.wins + self.ties + self.losses

    @property
    def win_rate(self) -> float:
        """(wins + ties / 2) / n for ``a``; 1 − it is ``b``'s."""
        return (self.wins + self.ties / 2) / self.n if self.n else float("nan")

    @property
    def decisive_win_rate(self) -> float:
        """wins / (wins + losses) for ``a``, ties left out; NaN when every meeting was a tie."""
        decided = self.wins + self.losses
        return self.wins / decided if decided else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "a": self.a,
                "b": self.b,
                "wins": self.wins,
                "ties": self.ties,
                "losses": self.losses,
                "n": self.n,
                "win_rate": self.win_rate,
                "decisive_win_rate": self.decisive_win_rate,
            }
        )


@dataclass(frozen=True)
class SystemRecord:
    """A system's outcomes pooled over every opponent, and how often it was ranked first."""

    system: str
    wins: int
    ties: int
    losses: int
    firsts: int
    n_rankings: int

    @property
    def win_rate(self) -> float:
        n = self.wins + self.ties + self.losses
        return (self.wins + self.ties / 2) / n if n else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "system": self.system,
                "wins": self.wins,
                "ties": self.ties,
                "losses": self.losses,
                "firsts": self.firsts,
                "n_rankings": self.n_rankings,
                "win_rate": self.win_rate,
            }
        )


def pairwise_records(rankings: Sequence[Ranking]) -> tuple[PairRecord, ...]:
    """W, T, L of every pair of systems that met in a ranking, sorted by (a, b)."""
    counts: dict[tuple[str, str], list[int]] = {}
    for r in rankings:
        rank = midranks(r.groups)
        names = sorted(rank)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                c = counts.setdefault((a, b), [0, 0, 0])
                c[0 if rank[a] < rank[b] else 1 if rank[a] == rank[b] else 2] += 1
    return tuple(PairRecord(a, b, *c) for (a, b), c in sorted(counts.items()))


def system_win_rates(rankings: Sequence[Ranking]) -> tuple[SystemRecord, ...]:
    """Every system's pooled record, best win rate first.

    ``firsts`` counts the rankings where the system is in the first group (alone or tied).
    """
    tally: dict[str, list[int]] = {}
    for p in pairwise_records(rankings):
        ta = tally.setdefault(p.a, [0, 0, 0])
        tb = tally.setdefault(p.b, [0, 0, 0])
        ta[0] += p.wins
        ta[1] += p.ties
        ta[2] += p.losses
        tb[0] += p.losses
        tb[1] += p.ties
        tb[2] += p.wins
    firsts = dict.fromkeys(tally, 0)
    seen = dict.fromkeys(tally, 0)
    for r in rankings:
        for s in r.groups[0]:
            firsts[s] = firsts.get(s, 0) + 1
        for s in r.systems:
            seen[s] = seen.get(s, 0) + 1
    records = [SystemRecord(s, tally[s][0], tally[s][1], tally[s][2], firsts[s], seen[s]) for s in tally]
    return tuple(sorted(records, key=lambda x: (-x.win_rate, x.system)))
