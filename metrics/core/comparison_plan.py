"""Which candidate pairs a side-by-side comparison study shows, and on which side.

Side-by-side (relative) judging shows the original with two candidates of
*different* systems for the same original and asks which is better. Relative
judgments separate close systems better than absolute scores (WMT's relative
ranking, Callison-Burch et al. 2007; Bojar et al. 2016), provided that

* every pair of systems is compared about equally often (a pair compared more often
  than the others weighs more in the ranking): :func:`plan_pairs` draws the pairs of
  each original so that the counts per *system pair* differ by at most one whenever
  the originals allow it;
* neither the order of the items nor the side a system appears on tells the judge
  anything: the order comes from :func:`metrics.core.assignment.plan_assignments`
  like the absolute protocol's; the side is a seeded coin per judge and item
  (:func:`sides_for_judge`), never the order of system names or ids.

Controls (:func:`plan_control_pairs`): each control candidate of an original (the
original copied, a random sentence, a unigram-LM sentence; see
:mod:`metrics.core.controls`) is set against one genuine candidate of the same
original, drawn with the seed; the genuine paraphrase is the expected winner.

Pure Python: no Django. Originals and systems are plain strings.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import combinations

from metrics.core.assignment import derive_seed

__all__ = ["PAIR_SEP", "pair_key", "pair_key_split", "plan_control_pairs", "plan_pairs", "sides_for_judge"]

PAIR_SEP = "\x1f"


def pair_key(original: str, system_a: str, system_b: str) -> str:
    """A stable key of one pair: the two systems in name order (the side is drawn later)."""
    a, b = sorted((system_a, system_b))
    return f"{original}{PAIR_SEP}{a}{PAIR_SEP}{b}"


def pair_key_split(key: str) -> tuple[str, str, str]:
    original, a, b = key.split(PAIR_SEP)
    return original, a, b


def plan_pairs(
    systems_by_original: Mapping[str, Sequence[str]], *, per_original: int | None = None, seed: int
) -> list[str]:
    """Pair keys (:func:`pair_key`) of the genuine pairs to judge, sorted.

    ``systems_by_original`` maps each original to the systems that have a candidate
    for it. ``per_original=None`` takes every pair of distinct systems of every
    original (all C(m, 2) of them). With a number, each original contributes that
    many pairs (or all it has, if fewer), chosen greedily: originals in a seeded
    order, each taking the pairs compared least often so far (ties broken by the
    seed), so the count per system pair stays balanced.
    """
    if per_original is not None and per_original < 1:
        raise ValueError("per_original must be at least 1 (or None for every pair)")
    rng = random.Random(derive_seed(seed, "pairs"))
    counts: Counter[tuple[str, str]] = Counter()
    out: list[str] = []
    originals = sorted(systems_by_original)
    rng.shuffle(originals)
    for original in originals:
        systems = sorted(set(systems_by_original[original]))
        pairs = list(combinations(systems, 2))
        if per_original is not None and len(pairs) > per_original:
            rng.shuffle(pairs)
            pairs.sort(key=lambda p: counts[p])  # stable: the shuffle breaks ties
            pairs = pairs[:per_original]
        for a, b in pairs:
            counts[(a, b)] += 1
            out.append(pair_key(original, a, b))
    return sorted(out)


def plan_control_pairs(
    controls_by_original: Mapping[str, Sequence[str]],
    genuine_by_original: Mapping[str, Sequence[str]],
    *,
    seed: int,
) -> list[str]:
    """Pair keys setting each control system of an original against one genuine system of it.

    The genuine partner is drawn with the seed from the systems that have a genuine
    candidate for that original; originals without one get no control pair.
    """
    out: list[str] = []
    for original in sorted(controls_by_original):
        genuine = sorted(set(genuine_by_original.get(original, ())))
        if not genuine:
            continue
        rng = random.Random(derive_seed(seed, "control-pairs", original))
        for control in sorted(controls_by_original[original]):
            out.append(pair_key(original, control, rng.choice(genuine)))
    return sorted(out)


def sides_for_judge(order: Sequence[str], *, seed: int) -> list[bool]:
    """For each pair key of a judge's order: True when the key's *second* system goes on the left.

    One fair coin per item from the judge's own seed, so the side carries no
    information about the systems (a system is on the left half the time whatever
    its name), and the plan is reproducible from the recorded seed.
    """
    rng = random.Random(derive_seed(seed, "sides"))
    return [rng.random() < 0.5 for _ in order]
