"""Which candidates of an original are ranked together, and in which screen order.

A ranking study shows a judge k candidates of one original at once. When an original has
k genuine candidates or fewer, they form one set. With more, the original gets
⌈n / k⌉ sets of k that cover every one of its systems at least once; the remaining
places go to the systems used least so far over the whole study (ties broken by a seeded
draw), so that over many originals every system is ranked about as often as the others
(the balance WMT's relative ranking sought by sampling systems uniformly; Callison-Burch
et al. 2007, §3.1). Controls (PEM §5.1: a copy of the original, unrelated sentences) are
added in sets of their own, one per control of the original: the control with k − 1 of
the original's genuine candidates (the least used), so that a judge's control checks
(:mod:`.controls`) compare it with real paraphrases.

A set is named by its *key*: the original and the sorted system names, joined with
:data:`SEP` (what :func:`set_key` writes and :func:`set_key_split` reads back). The order
on a judge's screen is a seeded shuffle per judge and set (:func:`screen_order`), so a
place on the screen says nothing about a system.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence

from ..assignment import derive_seed

__all__ = ["SEP", "plan_sets", "screen_order", "set_key", "set_key_split"]

SEP = "\x1f"  # the unit separator: never part of an original id or a system name


def set_key(original: str, systems: Sequence[str]) -> str:
    """The key of a set: the original, then its systems in name order."""
    return SEP.join([original, *sorted(systems)])


def set_key_split(key: str) -> tuple[str, tuple[str, ...]]:
    """(original, systems in name order) of a :func:`set_key`."""
    original, *systems = key.split(SEP)
    return original, tuple(systems)


def _least_used(pool: Sequence[str], used: Counter[str], n: int, rng: random.Random) -> list[str]:
    """``n`` systems of ``pool`` with the fewest uses so far (ties in a seeded random order)."""
    shuffled = list(pool)
    rng.shuffle(shuffled)
    return sorted(shuffled, key=lambda s: used[s])[:n]


def plan_sets(
    genuine_by_original: Mapping[str, Sequence[str]],
    controls_by_original: Mapping[str, Sequence[str]],
    *,
    k: int,
    seed: int,
) -> list[str]:
    """The keys of every set to rank (module docstring), sorted.

    An original with fewer than two genuine systems gets no genuine set (there is nothing
    to order); its controls still get a set when it has one genuine system (the control
    and that candidate). ``k`` is at least 2.
    """
    if k < 2:
        raise ValueError("a ranking orders at least two candidates (k >= 2)")
    used: Counter[str] = Counter()  # places in genuine sets so far, per system
    partnered: Counter[str] = Counter()  # places beside a control so far, per system
    out: list[str] = []
    for original in sorted(genuine_by_original):
        genuine = sorted(set(genuine_by_original[original]))
        rng = random.Random(derive_seed(seed, "ranking-sets", original))
        if len(genuine) >= 2:
            n_sets = math.ceil(len(genuine) / k)
            order = _least_used(genuine, used, len(genuine), rng)
            sets = [order[i::n_sets] for i in range(n_sets)]  # every system once, sizes within one
            used.update(genuine)
            for chosen in sets:  # the free places: the systems used least so far
                extra = _least_used([s for s in genuine if s not in chosen], used, k - len(chosen), rng)
                used.update(extra)
                out.append(set_key(original, [*chosen, *extra]))
        if not genuine:
            continue
        for control in sorted(set(controls_by_original.get(original, ()))):
            partners = _least_used(genuine, partnered, min(k - 1, len(genuine)), rng)
            partnered.update(partners)
            out.append(set_key(original, [control, *partners]))
    return sorted(out)


def screen_order(systems: Sequence[str], *, seed: int, key: str) -> list[str]:
    """``systems`` in the order one judge sees them: a shuffle seeded by the judge's seed and
    the set's key (reproducible from the recorded seed, independent of names and ids)."""
    shown = sorted(systems)
    random.Random(derive_seed(seed, "screen", key)).shuffle(shown)
    return shown
