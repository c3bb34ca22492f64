"""Who judges which item, and in what order: seeded, balanced, reproducible.

PEM (Liu, Dahlmeier & Ng 2010, §5.1) presents every paraphrase pair to every judge
"in a random order and without any information as to which paraphrase system
produced the paraphrase". This module builds such plans:

* each judge gets an order drawn from their own seed (derived from the study's seed
  and the judge's name, so the plan is reproducible from the recorded seed alone);
* two items of the same original are never adjacent in a judge's order unless the
  counts make it unavoidable (seeing "the same sentence again" right away invites
  comparing candidates instead of rating each on its own);
* either every judge sees every item (fully crossed, as in PEM) or each item is
  seen by exactly ``k`` distinct judges and the judges' loads differ by at most one.

Pure Python: no Django. Items, groups (originals) and judges are plain strings.
"""

from __future__ import annotations

import hashlib
import heapq
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "AssignmentPlan",
    "JudgeOrder",
    "adjacent_same_group",
    "derive_seed",
    "distribute_items",
    "late_judge_items",
    "min_adjacent_same_group",
    "order_items",
    "plan_assignments",
]


def derive_seed(seed: int, *parts: object) -> int:
    """A 63-bit seed for a sub-task: ``SHA-256(str(seed) | parts...)`` truncated.

    Hashing (rather than ``seed + i``) keeps sub-seeds independent of each other
    and of the order in which judges or originals were added, and is stable across
    Python versions and processes (unlike ``hash()``).
    """
    text = "|".join([str(int(seed)), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") >> 1


def adjacent_same_group(order: Sequence[str], groups: Mapping[str, str]) -> int:
    """Number of positions i with ``groups[order[i]] == groups[order[i + 1]]``."""
    return sum(1 for a, b in zip(order, order[1:]) if groups[a] == groups[b])


def min_adjacent_same_group(group_sizes: Sequence[int]) -> int:
    """The fewest same-group neighbours any order of these groups can have.

    With n items and a largest group of size m, the other n − m items can separate
    at most n − m + 1 runs of the largest group, so ``max(0, m − (n − m) − 1)``
    neighbours are unavoidable; the greedy in :func:`order_items` attains it.
    """
    sizes = [s for s in group_sizes if s > 0]
    if not sizes:
        return 0
    n, m = sum(sizes), max(sizes)
    return max(0, m - (n - m) - 1)


def order_items(items: Sequence[str], groups: Mapping[str, str], *, seed: int) -> tuple[str, ...]:
    """A seeded random order of ``items`` with no two items of one group adjacent, if possible.

    Algorithm: draw items one at a time. With R items left, previous group p and a
    group h holding more than ⌊R/2⌋ of them, h must come next (otherwise the rest
    cannot be separated); else draw a uniformly random remaining item whose group is
    not p. Drawing an *item* uniformly makes each group's chance proportional to its
    remaining size, which keeps the order close to a uniform shuffle. When the counts
    make neighbours unavoidable (a group larger than ⌈n/2⌉) the same greedy yields the
    minimum number of them (see :func:`min_adjacent_same_group`). Within a group the
    items come in a seeded shuffled order. Cost: O(n log g) for n items in g groups.

    Preconditions: ``items`` are distinct and every item has a group.
    """
    if len(set(items)) != len(items):
        raise ValueError("items must be distinct")
    missing = [i for i in items if i not in groups]
    if missing:
        raise ValueError(f"item {missing[0]!r} has no group")
    rng = random.Random(seed)
    members: dict[str, list[str]] = defaultdict(list)
    for item in items:
        members[groups[item]].append(item)
    group_names = sorted(members)  # sorted: the result must not depend on input order of groups
    queues: list[list[str]] = []
    for g in group_names:
        q = sorted(members[g])
        rng.shuffle(q)
        queues.append(q)
    counts = [len(q) for q in queues]
    # One pool entry per remaining item, holding its group's index; removal swaps
    # with the last entry, so drawing is O(1).
    pool = [gi for gi, c in enumerate(counts) for _ in range(c)]
    rng.shuffle(pool)
    heap = [(-c, gi) for gi, c in enumerate(counts)]
    heapq.heapify(heap)

    def largest() -> tuple[int, int]:
        while heap and -heap[0][0] != counts[heap[0][1]]:
            heapq.heappop(heap)  # stale entry
        return (-heap[0][0], heap[0][1]) if heap else (0, -1)

    def draw(accept) -> int:
        # Rejection sampling is fast because an accepted group is always at least
        # a large share of the pool; a linear scan is the fallback when it is not.
        for _ in range(32):
            k = rng.randrange(len(pool))
            if accept(pool[k]):
                return k
        choices = [k for k, gi in enumerate(pool) if accept(gi)]
        return choices[rng.randrange(len(choices))] if choices else rng.randrange(len(pool))

    out: list[str] = []
    prev = -1
    while pool:
        remaining = len(pool)
        top_count, top = largest()
        if top_count > remaining // 2 and top != prev:
            k = draw(lambda gi, top=top: gi == top)
        else:
            k = draw(lambda gi, prev=prev: gi != prev)
        gi = pool[k]
        pool[k] = pool[-1]
        pool.pop()
        counts[gi] -= 1
        heapq.heappush(heap, (-counts[gi], gi))
        out.append(queues[gi].pop())
        prev = gi
    return tuple(out)


def distribute_items(
    items: Sequence[str], judges: Sequence[str], *, judges_per_item: int, seed: int
) -> dict[str, list[str]]:
    """Give each item to exactly ``judges_per_item`` distinct judges, loads within one.

    Items and judges are shuffled (seeded), then item i goes to the k judges at
    cyclic positions ``i·k, i·k + 1, …, i·k + k − 1 (mod J)``. Consecutive positions
    on a cycle of J ≥ k judges are distinct, and the N·k slots fill the cycle
    round-robin, so every judge receives ⌊N·k/J⌋ or ⌈N·k/J⌉ items.
    Returns judge → list of items (unordered; see :func:`order_items`).
    """
    k = int(judges_per_item)
    if not judges:
        raise ValueError("there are no judges")
    if len(set(judges)) != len(judges):
        raise ValueError("judges must be distinct")
    if not 1 <= k <= len(judges):
        raise ValueError(f"judges per item must be between 1 and the number of judges ({len(judges)}), not {k}")
    rng = random.Random(seed)
    shuffled_items = sorted(items)
    rng.shuffle(shuffled_items)
    shuffled_judges = sorted(judges)
    rng.shuffle(shuffled_judges)
    n_j = len(shuffled_judges)
    out: dict[str, list[str]] = {j: [] for j in sorted(judges)}
    slot = 0
    for item in shuffled_items:
        for _ in range(k):
            out[shuffled_judges[slot % n_j]].append(item)
            slot += 1
    return out


@dataclass(frozen=True)
class JudgeOrder:
    """One judge's items in presentation order, and the seed that ordered them."""

    judge: str
    seed: int
    items: tuple[str, ...]


@dataclass(frozen=True)
class AssignmentPlan:
    """Every judge's ordered items. ``judges_per_item`` is None when fully crossed."""

    seed: int
    judges_per_item: int | None
    orders: tuple[JudgeOrder, ...]

    def loads(self) -> dict[str, int]:
        """Judge → number of items."""
        return {o.judge: len(o.items) for o in self.orders}

    def judges_of(self) -> dict[str, list[str]]:
        """Item → judges who see it."""
        out: dict[str, list[str]] = defaultdict(list)
        for o in self.orders:
            for item in o.items:
                out[item].append(o.judge)
        return dict(out)


def plan_assignments(
    items: Sequence[str],
    groups: Mapping[str, str],
    judges: Sequence[str],
    *,
    seed: int,
    judges_per_item: int | None = None,
) -> AssignmentPlan:
    """Assign ``items`` to ``judges`` and order each judge's share.

    ``judges_per_item=None`` is the fully crossed design of PEM §5.1 (every judge
    rates every item); an integer k gives each item exactly k distinct judges with
    loads differing by at most one (:func:`distribute_items`). Each judge's order
    comes from :func:`order_items` with seed ``derive_seed(seed, "order", judge)``,
    so it depends only on the study seed, the judge's name and their items.
    ``groups`` maps each item to its original (the adjacency constraint).
    """
    judges = list(judges)
    if not judges:
        raise ValueError("there are no judges")
    if len(set(judges)) != len(judges):
        raise ValueError("judges must be distinct")
    if judges_per_item is None:
        shares = {j: list(items) for j in judges}
    else:
        shares = distribute_items(items, judges, judges_per_item=judges_per_item, seed=derive_seed(seed, "distribute"))
    orders = []
    for judge in sorted(judges):
        jseed = derive_seed(seed, "order", judge)
        orders.append(JudgeOrder(judge=judge, seed=jseed, items=order_items(shares[judge], groups, seed=jseed)))
    return AssignmentPlan(seed=int(seed), judges_per_item=judges_per_item, orders=tuple(orders))


def late_judge_items(judge_counts: Mapping[str, int], *, n_items: int, seed: int) -> list[str]:
    """Pick ``n_items`` items for a judge who joins after the plan was built.

    ``judge_counts`` maps each item to how many judges already have it. The items
    with the fewest judges are taken first (ties broken by a seeded shuffle), so the
    late judge evens out coverage instead of piling onto well-covered items.
    """
    if n_items < 0:
        raise ValueError("n_items must be non-negative")
    rng = random.Random(seed)
    pool = sorted(judge_counts)
    rng.shuffle(pool)
    ranked = sorted(pool, key=lambda item: judge_counts[item])  # stable: keeps the shuffle within ties
    return ranked[: min(n_items, len(ranked))]
