"""Segmentation and confusion network of PEM's pivot F1 (§4.2–4.3): English tokens → phrases → slots.

Holds the tokenisation the phrase table is keyed by, the most probable segmentation
(with its per-table caches of log counts and phrase prefixes), the slots of
pivot alternatives per phrase (cached per table and edge threshold), and :func:`ragged`, the
indexing of ragged arrays that the batch (:mod:`.batch`) shares.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from metrics.core.phrase_table import PhraseTable
from metrics.core.target_f1 import english_tokens


def ragged(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``starts[i] … starts[i] + counts[i] − 1`` for every i, in order, and the i of each."""
    total = int(counts.sum())
    owner = np.repeat(np.arange(counts.size), counts)
    if not total:
        return owner, owner
    ends = np.cumsum(counts)
    return np.arange(total) + np.repeat(starts - ends + counts, counts), owner


#: N(w) of an unseen single word (PEM §4.2).
UNSEEN_COUNT = 0.5

#: A confusion-network slot: alternative pivot phrases (as token tuples) and Pr(f | e).
Slot = tuple[tuple[tuple[str, ...], float], ...]


def prepare_tokens(sentence: str, *, stem: bool = True) -> list[str]:
    """Tokens as the phrase table keys them: Porter-stemmed (PEM §4) or lower-cased.

    The same tokens as target-language F1 (:func:`metrics.core.target_f1.english_tokens`).
    """
    return english_tokens(sentence, stem=stem)


def segment(tokens: Sequence[str], table: PhraseTable, *, max_phrase_len: int = 4) -> list[tuple[int, int]]:
    """Most probable segmentation of ``tokens`` into phrases (PEM §4.2, eq. 2).

    Maximises Σ_i log Pr(p_i), Pr(p) = N(p) / Σ N, over segmentations whose
    phrases are table phrases of at most ``max_phrase_len`` tokens or single
    words (N = 0.5 when unseen). Returns half-open spans ``(start, end)`` in
    order. On ties the segmentation found first wins: at each end position,
    the longest last phrase.
    """
    # Forward relaxation: when ``start`` is reached best[start] is final, and the
    # candidates for one ``end`` arrive longest phrase first, so the strict ``>``
    # keeps the same phrase on ties as scanning each end from its longest phrase.
    # Same floats as best[start] + log N(p) − log Σ N (tested against the plain DP).
    # Extending a phrase stops as soon as it is no table phrase's proper prefix
    # (no longer phrase from this start can be in the table).
    n = len(tokens)
    log_total = math.log(table.total)
    info = _phrase_info(table).get
    best = [0.0] + [-math.inf] * n
    back = [0] * (n + 1)
    for start in range(n):
        base = best[start]
        phrase = tokens[start]
        hit = info(phrase)
        if hit is None:
            lc, more = _LOG_UNSEEN, False
        else:
            known, more = hit
            lc = _LOG_UNSEEN if known is None else known
        score = base + lc - log_total
        if score > best[start + 1]:
            best[start + 1] = score
            back[start + 1] = start
        end = start + 2
        stop = min(n, start + max_phrase_len)
        while more and end <= stop:
            phrase = phrase + " " + tokens[end - 1]
            hit = info(phrase)
            if hit is None:
                break  # neither a table phrase nor the start of one
            known, more = hit
            if known is not None:
                score = base + known - log_total
                if score > best[end]:
                    best[end] = score
                    back[end] = start
            end += 1
    spans = []
    end = n
    while end > 0:
        spans.append((back[end], end))
        end = back[end]
    return spans[::-1]


_LOG_UNSEEN = math.log(UNSEEN_COUNT)
#: Per phrase table (by identity): English phrase or proper prefix of one → (log N(e) or None, is a prefix).
_INFO_CACHES: dict[int, tuple[PhraseTable, dict]] = {}


def _phrase_info(table: PhraseTable) -> dict[str, tuple[float | None, bool]]:
    """Per table, what the segmentation asks of a word sequence in one dictionary probe:
    its log count (``math.log(float(N))``; None when N = 0 or not a table phrase) and
    whether it is a proper word prefix of a table phrase ("a b c" gives "a", "a b").

    Why: the segmentation probes every 1–4-gram of a sentence that can start a table
    phrase; one probe per n-gram (instead of a log-count dictionary and a prefix set)
    and no ``count_e``/``math.log`` per probe. Absent: neither a phrase nor a prefix.
    """
    entry = _INFO_CACHES.get(id(table))
    if entry is None or entry[0] is not table:
        if len(_INFO_CACHES) >= 4:
            _INFO_CACHES.pop(next(iter(_INFO_CACHES)))
        counts = table.n_e.tolist()
        logs = {e: math.log(float(counts[i])) for e, i in table.index.items() if float(counts[i]) > 0}
        prefixes: set[str] = set()
        for e in table.english:
            cut = e.rfind(" ")
            while cut > 0:
                e = e[:cut]
                if e in prefixes:
                    break  # its own prefixes are in already
                prefixes.add(e)
                cut = e.rfind(" ")
        info: dict[str, tuple[float | None, bool]] = {e: (lc, e in prefixes) for e, lc in logs.items()}
        for e in prefixes:
            if e not in info:
                info[e] = (None, True)
        entry = _INFO_CACHES[id(table)] = (table, info)
    return entry[1]


def confusion_network(
    tokens: Sequence[str],
    table: PhraseTable,
    *,
    edge_threshold: float = 0.1,
    max_phrase_len: int = 4,
) -> list[Slot]:
    """The pivot confusion network of a token sequence (PEM §4.3, Fig. 1).

    One slot per segment of :func:`segment`, holding the translations f of the
    segment's phrase e with Pr(f | e) > ``edge_threshold`` (probabilities are not
    renormalised after thresholding). An unseen word translates to itself with
    probability 1; a known phrase none of whose translations pass the threshold
    keeps its most probable one.
    """
    slot_of = slot_cache(table, edge_threshold)
    return [
        slot_of(" ".join(tokens[start:end])) for start, end in segment(tokens, table, max_phrase_len=max_phrase_len)
    ]


#: Per phrase table (by identity) and edge threshold: English phrase → its slot.
SLOT_CACHES: dict[tuple[int, float], tuple[PhraseTable, dict]] = {}


def slot_cache(table: PhraseTable, edge_threshold: float):
    """A function English phrase → slot, remembered per table and threshold.

    Why: the profile of pivot-f1 on Bible verses was dominated (≈ 55 %) by
    ``PhraseTable.translations`` building and sorting every translation of
    frequent words ("the" has hundreds) for every occurrence, only to keep the
    few above the threshold. Here each distinct phrase is looked up once per
    table; only the translations that pass the threshold are sorted, by the
    same key (−Pr, f), so slots are exactly those the plain code builds (tested).
    The table is held alongside its id so the id cannot be reused while cached.
    """
    cache = _slots(table, edge_threshold)
    index, offsets, pivot, count, n_e = table.index, table.offsets, table.pivot, table.count, table.n_e

    def slot_of(e: str) -> Slot:
        slot = cache.get(e)
        if slot is not None:
            return slot
        i = index.get(e)
        if i is None:
            slot = (((e,), 1.0),)
        else:
            lo, hi = int(offsets[i]), int(offsets[i + 1])
            probs = count[lo:hi] / n_e[i]
            keep = np.flatnonzero(probs > edge_threshold)
            if keep.size == 0:
                # The most probable translation; ties broken by the pivot phrase.
                top = probs.max()
                keep = np.flatnonzero(probs == top)
                keep = keep[[min(range(keep.size), key=lambda j: pivot[lo + keep[j]])]]
            pairs = sorted(((pivot[lo + j], float(probs[j])) for j in keep.tolist()), key=lambda fp: (-fp[1], fp[0]))
            slot = tuple((tuple(f.split(" ")), p) for f, p in pairs)
        cache[e] = slot
        return slot

    return slot_of


def _slots(table: PhraseTable, edge_threshold: float) -> dict[str, Slot]:
    """The slot cache of a table and threshold (the table is held alongside its id)."""
    key = (id(table), float(edge_threshold))
    entry = SLOT_CACHES.get(key)
    if entry is None or entry[0] is not table:
        if len(SLOT_CACHES) >= 4:
            SLOT_CACHES.pop(next(iter(SLOT_CACHES)))
        entry = SLOT_CACHES[key] = (table, {})
    return entry[1]


def fill_slots(table: PhraseTable, edge_threshold: float, phrases: Sequence[str]) -> list[Slot]:
    """The slots of ``phrases`` (as :func:`slot_cache` gives them), those not cached yet computed together.

    Why: a batch of new text meets thousands of phrases the cache has not seen, and
    :func:`slot_cache` spends most of a miss in NumPy calls on a few numbers. Here the
    probabilities of every missing phrase's translations come from one division of the
    gathered counts by each phrase's N(e) (the same floats as ``count[lo:hi] / n_e[i]``),
    and only the kept translations are sorted in Python, by the same key.
    """
    cache = _slots(table, edge_threshold)
    index = table.index
    known: list[str] = []
    rows: list[int] = []
    for e in dict.fromkeys(phrases):
        if e in cache:
            continue
        i = index.get(e)
        if i is None:
            cache[e] = (((e,), 1.0),)
        else:
            known.append(e)
            rows.append(i)
    if known:
        row = np.array(rows, dtype=np.int64)
        lo = table.offsets[row].astype(np.int64)
        flat, owner = ragged(lo, table.offsets[row + 1].astype(np.int64) - lo)
        probs = table.count[flat] / table.n_e[row][owner]
        keep = np.flatnonzero(probs > edge_threshold)
        kept = np.bincount(owner[keep], minlength=len(known))
        fallback = slot_cache(table, edge_threshold)
        pivot = table.pivot[flat[keep]].tolist()
        neg = (-probs[keep]).tolist()  # sorting (−Pr, f) pairs is sorting by the key (−Pr, f); −(−p) = p
        at = 0
        for e, n in zip(known, kept.tolist()):
            if not n:
                fallback(e)  # no translation passes the threshold: the most probable one
                continue
            pairs = sorted(zip(neg[at : at + n], pivot[at : at + n])) if n > 1 else [(neg[at], pivot[at])]
            cache[e] = tuple((tuple(f.split(" ")), -q) for q, f in pairs)
            at += n
    return [cache[e] for e in phrases]
