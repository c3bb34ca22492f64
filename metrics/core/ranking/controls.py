"""Controls in k-way rankings: a copy of the original is expected first, an unrelated sentence last.

paraeval adds controls to a study (PEM §5.1): the original itself (``identical``), a random
other sentence of the same domain (``random``) and a sentence drawn from a unigram language
model (``unigram``). Among the candidates of a ranking, the identical copy keeps all the
meaning and should be in the first group (tied first is fine: a perfect paraphrase may
equal it), and an unrelated sentence should be in the last group. A judge who puts them
elsewhere is not reading; these checks feed the judge's quality control.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .orders import Ranking

__all__ = ["EXPECTED_PLACE", "RankingControlCheck", "ranking_control_checks"]

#: Where each kind of control belongs in a ranking.
EXPECTED_PLACE: Mapping[str, str] = {"identical": "first", "random": "last", "unigram": "last"}


@dataclass(frozen=True)
class RankingControlCheck:
    """One control in one ranking: its group (1 = best) of ``n_groups``, and whether that is where it belongs."""

    judge: str
    original: str
    system: str
    control_kind: str
    group: int
    n_groups: int
    passed: bool


def ranking_control_checks(
    rankings: Sequence[Ranking], control_kinds: Mapping[str, str]
) -> tuple[RankingControlCheck, ...]:
    """Check every control that appears in ``rankings``.

    ``control_kinds`` maps a control's system name (``control:identical`` …) to its kind;
    kinds without an :data:`EXPECTED_PLACE` are not checked. ``identical`` passes in the
    first group, ``random`` and ``unigram`` in the last.
    """
    out = []
    for r in rankings:
        for pos, group in enumerate(r.groups, start=1):
            for system in group:
                kind = control_kinds.get(system)
                place = EXPECTED_PLACE.get(kind or "")
                if place is None or kind is None:
                    continue
                passed = pos == 1 if place == "first" else pos == len(r.groups)
                out.append(RankingControlCheck(r.judge, r.original, system, kind, pos, len(r.groups), passed))
    return tuple(out)
