"""Segmentation and confusion network of PEM's pivot F1 (§4.2–4.3): English tokens → phrases → slots.

Holds the tokenisation the phrase table is keyed by, the most probable segmentation
(with its per-table caches of log counts and phrase prefixes), and the slots of
pivot alternatives per phrase (cached per table and edge threshold).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from metrics.core.phrase_table import PhraseTable
from metrics.core.target_f1 import english_tokens

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
    log_count = _log_counts(table)
    prefixes = _phrase_prefixes(table)
    best = [0.0] + [-math.inf] * n
    back = [0] * (n + 1)
    for start in range(n):
        base = best[start]
        phrase = tokens[start]
        lc = log_count(phrase)
        score = base + (_LOG_UNSEEN if lc is None else lc) - log_total
        if score > best[start + 1]:
            best[start + 1] = score
            back[start + 1] = start
        for end in range(start + 2, min(n, start + max_phrase_len) + 1):
            if phrase not in prefixes:
                break
            phrase = phrase + " " + tokens[end - 1]
            lc = log_count(phrase)
            if lc is None:
                continue
            score = base + lc - log_total
            if score > best[end]:
                best[end] = score
                back[end] = start
    spans = []
    end = n
    while end > 0:
        spans.append((back[end], end))
        end = back[end]
    return spans[::-1]


_LOG_UNSEEN = math.log(UNSEEN_COUNT)
#: Per phrase table (by identity): English phrase → log N(e), or None when unseen.
_LOG_COUNT_CACHES: dict[int, tuple[PhraseTable, dict]] = {}


#: Per phrase table (by identity): every proper prefix (whole words) of its English phrases.
_PREFIX_CACHES: dict[int, tuple[PhraseTable, frozenset]] = {}


def _phrase_prefixes(table: PhraseTable) -> frozenset:
    """The proper word prefixes of the table's English phrases ("a b c" gives "a", "a b"), per table."""
    entry = _PREFIX_CACHES.get(id(table))
    if entry is None or entry[0] is not table:
        if len(_PREFIX_CACHES) >= 4:
            _PREFIX_CACHES.pop(next(iter(_PREFIX_CACHES)))
        out = set()
        for e in table.english:
            cut = e.rfind(" ")
            while cut > 0:
                e = e[:cut]
                if e in out:
                    break  # its own prefixes are in already
                out.add(e)
                cut = e.rfind(" ")
        entry = _PREFIX_CACHES[id(table)] = (table, frozenset(out))
    return entry[1]


def _log_counts(table: PhraseTable):
    """A function phrase → log N(e) (None when N(e) = 0), built once per table.

    Why: the segmentation looks up every 1–4-gram of a sentence; going through
    ``count_e`` (a method call, a NumPy scalar, a float) and ``math.log`` each
    time was a quarter of pivot-f1's time. One dictionary of every table
    phrase's log count (the same floats: ``math.log(float(N))``) answers the
    probes; a phrase it lacks is unseen.
    """
    entry = _LOG_COUNT_CACHES.get(id(table))
    if entry is None or entry[0] is not table:
        if len(_LOG_COUNT_CACHES) >= 4:
            _LOG_COUNT_CACHES.pop(next(iter(_LOG_COUNT_CACHES)))
        counts = table.n_e.tolist()
        logs = {e: math.log(float(counts[i])) for e, i in table.index.items() if float(counts[i]) > 0}
        entry = _LOG_COUNT_CACHES[id(table)] = (table, logs)
    return entry[1].get


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
    return [slot_of(" ".join(tokens[start:end])) for start, end in segment(tokens, table, max_phrase_len=max_phrase_len)]


#: Per phrase table (by identity) and edge threshold: English phrase → its slot.
_SLOT_CACHES: dict[tuple[int, float], tuple[PhraseTable, dict]] = {}


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
    key = (id(table), float(edge_threshold))
    entry = _SLOT_CACHES.get(key)
    if entry is None or entry[0] is not table:
        if len(_SLOT_CACHES) >= 4:
            _SLOT_CACHES.pop(next(iter(_SLOT_CACHES)))
        entry = _SLOT_CACHES[key] = (table, {})
    cache = entry[1]
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
