"""Statistics of side-by-side comparison judgments: win rates, a Bradley–Terry ranking,
agreement on pairs, and the judges' accuracy on control pairs.

A *comparison* is one judge's answer on one pair as shown: the system on the left,
the system on the right and the answer ``"left"``, ``"tie"`` or ``"right"`` (the
judge's "A better / tie / B better", A being the left one). Everything here first
turns comparisons into their *canonical* form — systems in name order (a, b) and an
outcome ``"a"``, ``"tie"`` or ``"b"`` — so that the side a system was shown on
never matters.

* Win rates (as WMT's relative ranking, Callison-Burch et al. 2007): per system pair
  and per system, wins, ties and losses are counted and shown; the *score* is
  (wins + ties / 2) / comparisons, and the *win rate without ties* is
  wins / (wins + losses).
* Bradley–Terry (Bradley & Terry 1952): P(i beats j) = 1 / (1 + exp(θ_j − θ_i)),
  θ fitted by maximum likelihood with the ``choix`` library's I-LSR
  (Maystre & Grossglauser 2015, ``choix.ilsr_pairwise``), θ centred on 0. A tie
  counts as half a win for each side (every decisive comparison enters choix twice,
  a tie once in each direction: the same likelihood up to a factor 2). ``alpha``
  is choix's regularisation (a small prior comparison between every two systems),
  so a system that never lost still gets a finite θ. Intervals: percentile
  bootstrap over comparisons (seeded).
* Agreement: Krippendorff's α at the nominal level over the canonical three-way
  outcomes, units = (original, system pair), coders = judges (the ``krippendorff``
  package; Krippendorff 2011).
* Controls: a control pair has an expected outcome (the genuine paraphrase beats a
  control candidate). Per judge, the share answered as expected and a one-sided
  binomial test against the chance rate 1/3 (a judge who answers at random gets
  about a third right); at level ``qc_alpha`` a judge *passes* when better than chance.

Pure Python (numpy, scipy, choix, krippendorff): no Django.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import cast

import choix
import krippendorff
import numpy as np
from scipy.stats import binomtest

__all__ = [
    "ANSWERS",
    "BradleyTerryResult",
    "Comparison",
    "bradley_terry",
    "comparison_agreement",
    "comparison_summary",
    "control_accuracy",
    "pair_win_rates",
    "system_win_rates",
]

ANSWERS = ("left", "tie", "right")
#: Default regularisation of the Bradley–Terry fit (choix's ``alpha``).
DEFAULT_BT_ALPHA = 0.01


@dataclass(frozen=True)
class Comparison:
    """One judge's answer on one pair as shown. ``expected`` (controls only) names the
    system expected to win, or ``"tie"``; None for genuine pairs."""

    judge: str
    original: str
    left: str
    right: str
    answer: str
    is_control: bool = False
    expected: str | None = None

    @property
    def system_a(self) -> str:
        return min(self.left, self.right)

    @property
    def system_b(self) -> str:
        return max(self.left, self.right)

    @property
    def outcome(self) -> str:
        """``"a"``, ``"tie"`` or ``"b"``: the answer with the systems in name order."""
        if self.answer not in ANSWERS:
            raise ValueError(f"an answer is one of {', '.join(ANSWERS)}, not {self.answer!r}")
        if self.answer == "tie":
            return "tie"
        winner = self.left if self.answer == "left" else self.right
        return "a" if winner == self.system_a else "b"

    @property
    def winner(self) -> str | None:
        """The system the judge preferred; None for a tie."""
        return {"a": self.system_a, "b": self.system_b}.get(self.outcome)


def _genuine(comparisons: Iterable[Comparison]) -> list[Comparison]:
    return [c for c in comparisons if not c.is_control]


def pair_win_rates(comparisons: Iterable[Comparison]) -> list[dict]:
    """Per system pair (a < b by name, controls left out): n, a's wins, ties, b's wins,
    a's score (wins + ties/2)/n and a's win rate without ties (None when every answer is a tie)."""
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for c in _genuine(comparisons):
        counts[(c.system_a, c.system_b)][("a", "tie", "b").index(c.outcome)] += 1
    out = []
    for (a, b), (wa, t, wb) in sorted(counts.items()):
        n = wa + t + wb
        out.append(
            {
                "system_a": a,
                "system_b": b,
                "n": n,
                "wins_a": wa,
                "ties": t,
                "wins_b": wb,
                "score_a": (wa + t / 2) / n,
                "win_rate_a": wa / (wa + wb) if wa + wb else None,
            }
        )
    return out


def system_win_rates(comparisons: Iterable[Comparison]) -> list[dict]:
    """Per system over all its genuine comparisons: n, wins, ties, losses, score
    (wins + ties/2)/n and win rate without ties; sorted by score, best first."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for c in _genuine(comparisons):
        if c.outcome == "tie":
            counts[c.system_a][1] += 1
            counts[c.system_b][1] += 1
        else:
            winner = c.system_a if c.outcome == "a" else c.system_b  # not a tie: c.winner, typed str
            loser = c.system_b if winner == c.system_a else c.system_a
            counts[winner][0] += 1
            counts[loser][2] += 1
    rows = []
    for s, (w, t, lost) in counts.items():
        n = w + t + lost
        rows.append(
            {
                "system": s,
                "n": n,
                "wins": w,
                "ties": t,
                "losses": lost,
                "score": (w + t / 2) / n,
                "win_rate": w / (w + lost) if w + lost else None,
            }
        )
    return sorted(rows, key=lambda r: (-r["score"], r["system"]))


@dataclass(frozen=True)
class BradleyTerryResult:
    """θ per system (log-strength, centred on 0; higher is better), with bootstrap intervals."""

    systems: tuple[str, ...]
    theta: tuple[float, ...]
    ci_low: tuple[float, ...] = ()
    ci_high: tuple[float, ...] = ()
    n: int = 0
    alpha: float = DEFAULT_BT_ALPHA
    confidence_level: float = 0.95
    n_boot: int = 0
    extra: dict = field(default_factory=dict)

    def strengths(self) -> np.ndarray:
        """exp(θ) normalised to mean 1 (the form choix's test cases state their estimates in)."""
        s = np.exp(np.asarray(self.theta))
        return s / s.mean()

    def ranking(self) -> list[dict]:
        rows = [
            {
                "system": s,
                "theta": t,
                "ci_low": self.ci_low[i] if self.ci_low else None,
                "ci_high": self.ci_high[i] if self.ci_high else None,
            }
            for i, (s, t) in enumerate(zip(self.systems, self.theta))
        ]
        rows.sort(key=lambda r: (-cast(float, r["theta"]), cast(str, r["system"])))
        for rank, r in enumerate(rows, 1):
            r["rank"] = rank
        return rows


def _choix_data(outcomes: Sequence[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """(i, j, outcome "a"/"tie"/"b") → choix's (winner, loser) list, ties as half a win each."""
    data: list[tuple[int, int]] = []
    for i, j, o in outcomes:
        if o == "a":
            data += [(i, j), (i, j)]
        elif o == "b":
            data += [(j, i), (j, i)]
        else:
            data += [(i, j), (j, i)]
    return data


def _fit(n_items: int, data: list[tuple[int, int]], alpha: float) -> np.ndarray:
    return np.asarray(choix.ilsr_pairwise(n_items, data, alpha=alpha, max_iter=1000, tol=1e-10))


def bradley_terry(
    comparisons: Iterable[Comparison],
    *,
    alpha: float = DEFAULT_BT_ALPHA,
    n_boot: int = 200,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> BradleyTerryResult:
    """Bradley–Terry θ per system from genuine comparisons (controls left out), fitted by
    ``choix.ilsr_pairwise``; percentile bootstrap intervals over comparisons (``n_boot=0``: none).

    Raises ValueError with fewer than two systems.
    """
    genuine = _genuine(comparisons)
    systems = tuple(sorted({c.system_a for c in genuine} | {c.system_b for c in genuine}))
    if len(systems) < 2:
        raise ValueError("a Bradley–Terry ranking needs comparisons between at least two systems")
    index = {s: i for i, s in enumerate(systems)}
    outcomes = [(index[c.system_a], index[c.system_b], c.outcome) for c in genuine]
    theta = _fit(len(systems), _choix_data(outcomes), alpha)
    low: tuple[float, ...] = ()
    high: tuple[float, ...] = ()
    if n_boot > 0:
        rng = np.random.default_rng(seed)
        draws = np.empty((n_boot, len(systems)))
        for b in range(n_boot):
            pick = rng.integers(0, len(outcomes), size=len(outcomes))
            draws[b] = _fit(len(systems), _choix_data([outcomes[k] for k in pick]), alpha)
        tail = (1 - confidence_level) / 2 * 100
        low = tuple(float(x) for x in np.percentile(draws, tail, axis=0))
        high = tuple(float(x) for x in np.percentile(draws, 100 - tail, axis=0))
    return BradleyTerryResult(
        systems=systems,
        theta=tuple(float(x) for x in theta),
        ci_low=low,
        ci_high=high,
        n=len(outcomes),
        alpha=alpha,
        confidence_level=confidence_level,
        n_boot=n_boot,
    )


def comparison_agreement(comparisons: Iterable[Comparison]) -> dict:
    """Krippendorff's α (nominal) over canonical outcomes of genuine pairs judged by ≥ 2 judges.

    Returns ``{"alpha", "units", "judgments"}`` (units and judgments that entered);
    ``alpha`` is None when no pair has two judgments or every answer is the same
    (α is undefined without variation).
    """
    cells: dict[tuple[str, str, str], dict[str, str]] = defaultdict(dict)
    for c in _genuine(comparisons):
        cells[(c.original, c.system_a, c.system_b)][c.judge] = c.outcome
    units = [u for u, by_judge in sorted(cells.items()) if len(by_judge) >= 2]
    judges = sorted({j for u in units for j in cells[u]})
    n_judgments = sum(len(cells[u]) for u in units)
    codes = {"a": 0.0, "tie": 1.0, "b": 2.0}
    if not units:
        return {"alpha": None, "units": 0, "judgments": 0}
    data = np.full((len(judges), len(units)), np.nan)
    for k, u in enumerate(units):
        for j, o in cells[u].items():
            data[judges.index(j), k] = codes[o]
    values = set(data[~np.isnan(data)].tolist())
    alpha = None
    if len(values) > 1:
        alpha = float(
            krippendorff.alpha(reliability_data=data, level_of_measurement="nominal", value_domain=[0.0, 1.0, 2.0])
        )
    return {"alpha": alpha, "units": len(units), "judgments": n_judgments}


#: The values of a :func:`control_accuracy` row for a judge who answered no control yet.
CONTROL_ACCURACY_BLANK = {"n": 0, "correct": 0, "accuracy": None, "pvalue": None, "passes": None}


def control_accuracy(comparisons: Iterable[Comparison], *, qc_alpha: float = 0.05) -> list[dict]:
    """Per judge with control pairs: n, answered as expected, accuracy, the one-sided binomial
    p-value against chance (1/3) and ``passes`` (p < ``qc_alpha``)."""
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for c in comparisons:
        if not c.is_control or c.expected is None:
            continue
        got = "tie" if c.outcome == "tie" else c.winner
        per[c.judge][0] += 1
        per[c.judge][1] += int(got == c.expected)
    rows = []
    for judge, (n, ok) in sorted(per.items()):
        p = float(binomtest(ok, n, 1 / 3, alternative="greater").pvalue)
        rows.append({"judge": judge, "n": n, "correct": ok, "accuracy": ok / n, "pvalue": p, "passes": p < qc_alpha})
    return rows


def comparison_summary(
    comparisons: Sequence[Comparison],
    *,
    excluded_judges: Iterable[str] = (),
    qc_alpha: float = 0.05,
    n_boot: int = 200,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> dict:
    """Everything the report shows for a comparison study, JSON-able.

    Excluded judges are left out of the win rates, the ranking and the agreement but
    kept in the control accuracy (as the absolute report keeps them in judge QC).
    """
    excluded = set(excluded_judges)
    kept = [c for c in comparisons if c.judge not in excluded]
    genuine = _genuine(kept)
    out: dict = {
        "n_comparisons": len(genuine),
        "n_control_comparisons": sum(1 for c in kept if c.is_control),
        "n_judges": len({c.judge for c in kept}),
        "pairs": pair_win_rates(kept),
        "systems": system_win_rates(kept),
        "agreement": comparison_agreement(kept),
        "controls": control_accuracy(comparisons, qc_alpha=qc_alpha),
        "bradley_terry": None,
        "excluded_judges": sorted(excluded),
    }
    if len({c.system_a for c in genuine} | {c.system_b for c in genuine}) >= 2:
        bt = bradley_terry(genuine, n_boot=n_boot, confidence_level=confidence_level, seed=seed)
        out["bradley_terry"] = {
            "ranking": bt.ranking(),
            "alpha": bt.alpha,
            "n": bt.n,
            "n_boot": bt.n_boot,
            "confidence_level": bt.confidence_level,
        }
    return out


def system_pairs(systems: Iterable[str]) -> list[tuple[str, str]]:
    """Every unordered pair of distinct systems, in name order (for tables with empty cells)."""
    return list(combinations(sorted(set(systems)), 2))


def comparisons_from_rows(rows: Iterable[Mapping]) -> list[Comparison]:
    """Build :class:`Comparison` values from mappings with the same keys (e.g. a CSV's rows)."""
    return [
        Comparison(
            judge=str(r["judge"]),
            original=str(r["original"]),
            left=str(r["left"]),
            right=str(r["right"]),
            answer=str(r["answer"]),
            is_control=bool(r.get("is_control", False)),
            expected=r.get("expected") or None,
        )
        for r in rows
    ]
