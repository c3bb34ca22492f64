"""A judge's ranking of k candidates: ordered groups of tied systems.

A ranking is written best first. In files (and JSON) it is a list whose elements are a
system name or a list of names that tie: ``["human1", ["machine1", "machine2"], "machine3"]``
puts human1 first, the two machines tied second and third, machine3 last — the form of
Label Studio's and Argilla's ranking exports with ties as nested lists. In code it is a
tuple of groups, ``(("human1",), ("machine1", "machine2"), ("machine3",))``.

Positions of tied candidates are *mid-ranks* (the mean of the places they share), the
convention of Kendall (1948) and of ``scipy.stats.rankdata(method="average")``: above,
human1 has rank 1, the machines 2.5 each, machine3 rank 4.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Ranking", "groups_from_json", "groups_to_json", "midranks"]


@dataclass(frozen=True)
class Ranking:
    """One judge's ranking of the candidates of one original, best group first."""

    judge: str
    original: str
    groups: tuple[tuple[str, ...], ...]

    @property
    def systems(self) -> tuple[str, ...]:
        """Every ranked system, best first (tied ones in the order given)."""
        return tuple(s for group in self.groups for s in group)

    @property
    def has_ties(self) -> bool:
        return any(len(g) > 1 for g in self.groups)


def groups_from_json(value: object) -> tuple[tuple[str, ...], ...]:
    """The groups of a ranking given as a list of names and lists of tied names.

    Raises ``ValueError`` naming the problem: not a list, an element that is neither a
    non-empty string nor a list of them, an empty or nested group, a system named twice,
    fewer than two systems. One-element lists are allowed (a group of one).
    """
    if not isinstance(value, list):
        raise ValueError("a ranking is a list of systems, best first (ties as nested lists)")
    groups: list[tuple[str, ...]] = []
    seen: set[str] = set()
    for pos, element in enumerate(value, start=1):
        names = element if isinstance(element, list) else [element]
        if not names:
            raise ValueError(f"place {pos} is an empty list of tied systems")
        group = []
        for name in names:
            if isinstance(name, list):
                raise ValueError(f"place {pos}: ties are one level of nesting (a list of names), not deeper")
            if not isinstance(name, str) or not name.strip():
                shown = repr(name) if len(repr(name)) <= 40 else repr(name)[:39] + "…"
                raise ValueError(f"place {pos}: a system is a non-empty string, not {shown}")
            name = name.strip()
            if name in seen:
                raise ValueError(f"system {name[:100]!r} is ranked twice")
            seen.add(name)
            group.append(name)
        groups.append(tuple(group))
    if len(seen) < 2:
        raise ValueError("a ranking needs at least two systems")
    return tuple(groups)


def groups_to_json(groups: Sequence[Sequence[str]]) -> list[str | list[str]]:
    """The file form of ``groups``: a name for a group of one, a list for a tie."""
    return [g[0] if len(g) == 1 else list(g) for g in groups]


def midranks(groups: Sequence[Sequence[str]]) -> dict[str, float]:
    """Each system's rank, 1 = best, tied systems sharing the mean of their places.

    A group of size t starting after p systems gets p + (t + 1) / 2.
    """
    out: dict[str, float] = {}
    placed = 0
    for group in groups:
        rank = placed + (len(group) + 1) / 2
        for name in group:
            out[name] = rank
        placed += len(group)
    return out
