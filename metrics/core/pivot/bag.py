"""The bag of pivot n-grams (BPNG, PEM §4.3) of a confusion network, and of a sentence.

:func:`ngram_bag` is the plain enumeration of a network's n-gram occurrences;
:func:`pivot_bag` gives the same floats for a sentence from cached per-window
additions; :func:`slot_start` and :func:`slot_extension` are the per-slot parts both
this and the batch statistics (:mod:`metrics.core.pivot.batch`) are built from.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from metrics.core.phrase_table import PhraseTable
from metrics.core.pivot.network import Slot, prepare_tokens, segment, slot_cache


def ngram_bag(
    network: Sequence[Slot],
    *,
    max_n: int = 4,
    ngram_threshold: float = 0.01,
) -> dict[tuple[str, ...], float]:
    """Bag of pivot n-grams of a confusion network (PEM §4.3).

    W(g) = Σ over occurrences of g along network paths of Π Pr(edge) over the
    edges the occurrence passes through (n ≤ ``max_n``); kept when
    W(g) > ``ngram_threshold``. Exact and polynomial: n-gram prefixes that reach
    a slot boundary are merged with their summed weights before being extended
    into the next slot (weights of continuations multiply, so merging is exact).
    When every slot's probabilities sum to 1 (no thresholding), W(g) is the
    expected number of occurrences of g in a sentence drawn from the network.
    """
    bag: dict[tuple[str, ...], float] = defaultdict(float)
    n_slots = len(network)
    for s in range(n_slots):
        # Occurrences that start inside slot s.
        frontier: dict[tuple[str, ...], float] = defaultdict(float)
        for words, p in network[s]:
            for k in range(len(words)):
                rest = words[k:]
                for n in range(1, min(len(rest), max_n) + 1):
                    bag[rest[:n]] += p
                if len(rest) < max_n:
                    frontier[rest] += p
        t = s + 1
        while frontier and t < n_slots:
            grown: dict[tuple[str, ...], float] = defaultdict(float)
            for prefix, w in frontier.items():
                room = max_n - len(prefix)
                for words, p in network[t]:
                    wp = w * p
                    for n in range(1, min(len(words), room) + 1):
                        bag[prefix + words[:n]] += wp
                    if len(words) < room:
                        grown[prefix + words] += wp
            frontier = grown
            t += 1
    return {g: w for g, w in bag.items() if w > ngram_threshold}


def pivot_bag(
    sentence: str,
    table: PhraseTable,
    *,
    stem: bool = True,
    edge_threshold: float = 0.1,
    ngram_threshold: float = 0.01,
    max_n: int = 4,
) -> dict[tuple[str, ...], float]:
    """BPNG of an English sentence: tokens → segmentation → network → n-gram bag.

    Equal, float for float, to ``ngram_bag(confusion_network(tokens))``, but each
    slot's n-grams are read from a cache of *windows* (see :func:`_window_contributions`).
    """
    tokens = prepare_tokens(sentence, stem=stem)
    slot_of = slot_cache(table, edge_threshold)
    phrases = [" ".join(tokens[a:b]) for a, b in segment(tokens, table)]
    windows = _window_cache(table, edge_threshold, max_n)
    bag: dict[tuple[str, ...], float] = {}
    get = bag.get
    for s in range(len(phrases)):
        key = tuple(phrases[s : s + max_n])
        contrib = windows.get(key)
        if contrib is None:
            if len(windows) > 20_000:  # bounded memory (windows rarely repeat: ~11 % hits on verses)
                windows.clear()
            contrib = windows[key] = _window_contributions([slot_of(e) for e in key], max_n)
        for g, w in contrib:
            bag[g] = get(g, 0.0) + w
    return {g: w for g, w in bag.items() if w > ngram_threshold}


#: Per phrase table (by identity), edge threshold and max_n: window of phrases → contributions.
_WINDOW_CACHES: dict[tuple[int, float, int], tuple[PhraseTable, dict]] = {}


def _window_cache(table: PhraseTable, edge_threshold: float, max_n: int) -> dict:
    key = (id(table), float(edge_threshold), int(max_n))
    entry = _WINDOW_CACHES.get(key)
    if entry is None or entry[0] is not table:
        if len(_WINDOW_CACHES) >= 4:
            _WINDOW_CACHES.pop(next(iter(_WINDOW_CACHES)))
        entry = _WINDOW_CACHES[key] = (table, {})
    return entry[1]


def _window_contributions(slots: Sequence[Slot], max_n: int) -> tuple[tuple[tuple[str, ...], float], ...]:
    """The additions ``bag[g] += w`` that :func:`ngram_bag` makes for the n-grams
    starting in ``slots[0]``, in its order.

    An occurrence starting in slot s covers at least one word per slot, so it
    ends by slot s + max_n − 1: its n-grams and weights depend on those ≤ max_n
    slots only. Why: verses repeat phrase sequences ("and it came to pass"), and
    enumerating a window's paths was half of pivot-f1's time; replaying the same
    additions in the same order keeps every weight the same float. Each slot's
    own part (its n-grams and the prefixes it leaves open) and its extension
    table (each alternative's leading n-grams) are computed once per slot.
    """
    own, opened = slot_start(slots[0], max_n)
    out = list(own)
    if not opened:
        return tuple(out)
    app = out.append
    frontier = opened
    t = 1
    while frontier and t < len(slots):
        grown: dict[tuple[str, ...], float] = {}
        gget = grown.get
        ext = slot_extension(slots[t], max_n)
        for prefix, w in frontier.items():
            room = max_n - len(prefix)
            for words, p, heads in ext:
                wp = w * p
                for h in heads[:room]:
                    app((prefix + h, wp))
                if len(words) < room:
                    g = prefix + words
                    grown[g] = gget(g, 0.0) + wp
        frontier = grown
        t += 1
    return tuple(out)


#: Per slot object (the slot cache shares them; held alongside, so an id is never reused while cached) and max_n.
_SLOT_STARTS: dict[tuple[int, int], tuple[Slot, tuple, dict]] = {}
_SLOT_EXTENSIONS: dict[tuple[int, int], tuple[Slot, tuple]] = {}


def slot_start(slot: Slot, max_n: int) -> tuple[tuple, dict]:
    """The additions of the n-grams inside ``slot`` (in :func:`ngram_bag`'s order) and the
    open prefixes it hands to the next slot (prefix → summed weight, in insertion order)."""
    key = (id(slot), max_n)
    hit = _SLOT_STARTS.get(key)
    if hit is None or hit[0] is not slot:
        if len(_SLOT_STARTS) > 100_000:
            _SLOT_STARTS.clear()
        out: list[tuple[tuple[str, ...], float]] = []
        frontier: dict[tuple[str, ...], float] = {}
        for words, p in slot:
            for k in range(len(words)):
                rest = words[k:]
                for n in range(1, min(len(rest), max_n) + 1):
                    out.append((rest[:n], p))
                if len(rest) < max_n:
                    frontier[rest] = frontier.get(rest, 0.0) + p
        hit = _SLOT_STARTS[key] = (slot, tuple(out), frontier)
    # The frontier is grown from, never changed: sharing it is safe.
    return hit[1], hit[2]


def slot_extension(slot: Slot, max_n: int) -> tuple:
    """``(words, p, (words[:1], …, words[:min(len, max_n)]))`` for each alternative of ``slot``."""
    key = (id(slot), max_n)
    hit = _SLOT_EXTENSIONS.get(key)
    if hit is None or hit[0] is not slot:
        if len(_SLOT_EXTENSIONS) > 100_000:
            _SLOT_EXTENSIONS.clear()
        hit = _SLOT_EXTENSIONS[key] = (
            slot,
            tuple((words, p, tuple(words[:n] for n in range(1, min(len(words), max_n) + 1))) for words, p in slot),
        )
    return hit[1]
