# Over 400 lines: this session's feature work (protocols, screening, field studies, speed) landed here; splitting it along its seams is issue 17's remaining step, done once so code moves only once.
"""PEM's pivot-language F1 (Liu, Dahlmeier & Ng 2010, §4.2–4.3; DESIGN.md §4).

Adequacy without lexical overlap: both sentences are mapped into a bag of
*pivot-language* n-grams through a phrase table, and the bags are compared.

1. **Segmentation** (§4.2, eq. 2). The (Porter-stemmed) sentence is split into
   the phrase sequence p_1 … p_n maximising Π Pr(p_i), Pr(p) = N(p) / Σ N, over
   English phrases of at most 4 words found in the table; any single word may be
   a phrase, with N(w) = 0.5 when it is unseen. Solved exactly by dynamic
   programming over log-probabilities.
2. **Confusion network** (§4.3, Fig. 1). Each segment becomes a slot of
   alternative pivot phrases f with Pr(f | e) > ``edge_threshold`` (0.1); an
   unseen word translates to itself with probability 1. Slots in series form
   the network.
3. **Bag of pivot n-grams (BPNG).** Every n-gram (n ≤ ``max_n`` = 4) read along
   a path of the network gets the product of the probabilities of the edges it
   passes through; pivot phrases may be multi-word, so n-grams run across the
   words of consecutive edges. An n-gram's weight W(g) is the sum over all its
   occurrences; weights ≤ ``ngram_threshold`` (0.01) are dropped.
4. **Pivot F1.** precision = Σ_g min(W_R, W_P) / Σ_g W_P,
   recall = Σ_g min(W_R, W_P) / Σ_g W_R, F1 = 2PR / (P + R) = 2 Σmin / (ΣW_P + ΣW_R).

Choices the paper leaves open, made here and recorded in the signature's
version: when the table knows a phrase but none of its translations passes
``edge_threshold``, the slot keeps the single most probable one (so that no
slot is empty and the network stays connected); English tokens are lower-cased
even when not stemmed; an empty bag gives P = R = F1 = 0.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from metrics.core.base import Metric, Param, ResourceSpec, ResourceUnavailable
from metrics.core.cards import MetricCard
from metrics.core.phrase_table import PhraseTable
from metrics.core.registry import register
from metrics.core.target_f1 import english_tokens, f1_from_sums, overlap_stats
from metrics.core.text import stem as porter_stem

__all__ = [
    "UNSEEN_COUNT",
    "Slot",
    "F1Result",
    "prepare_tokens",
    "segment",
    "confusion_network",
    "ngram_bag",
    "pivot_bag",
    "bag_overlap_stats",
    "f1_from_stats",
    "pivot_f1",
    "PivotF1",
]

#: N(w) of an unseen single word (PEM §4.2).
UNSEEN_COUNT = 0.5

#: A confusion-network slot: alternative pivot phrases (as token tuples) and Pr(f | e).
Slot = tuple[tuple[tuple[str, ...], float], ...]


@dataclass(frozen=True)
class F1Result:
    """Bag-of-n-grams agreement between original R and paraphrase P (PEM §4.3).

    ``overlap`` = Σ_g min(W_R(g), W_P(g)); ``weight_p`` = Σ_g W_P(g);
    ``weight_r`` = Σ_g W_R(g).
    """

    precision: float
    recall: float
    f1: float
    overlap: float
    weight_p: float
    weight_r: float

    def stats(self) -> np.ndarray:
        """The additive statistics ``[overlap, weight_p, weight_r]``."""
        return np.array([self.overlap, self.weight_p, self.weight_r])


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
    slot_of = _slot_cache(table, edge_threshold)
    return [slot_of(" ".join(tokens[start:end])) for start, end in segment(tokens, table, max_phrase_len=max_phrase_len)]


#: Per phrase table (by identity) and edge threshold: English phrase → its slot.
_SLOT_CACHES: dict[tuple[int, float], tuple[PhraseTable, dict]] = {}


def _slot_cache(table: PhraseTable, edge_threshold: float):
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
    slot_of = _slot_cache(table, edge_threshold)
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
    own, opened = _slot_start(slots[0], max_n)
    out = list(own)
    if not opened:
        return tuple(out)
    app = out.append
    frontier = opened
    t = 1
    while frontier and t < len(slots):
        grown: dict[tuple[str, ...], float] = {}
        gget = grown.get
        ext = _slot_extension(slots[t], max_n)
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


def _slot_start(slot: Slot, max_n: int) -> tuple[tuple, dict]:
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


def _slot_extension(slot: Slot, max_n: int) -> tuple:
    """``(words, p, (words[:1], …, words[:min(len, max_n)]))`` for each alternative of ``slot``."""
    key = (id(slot), max_n)
    hit = _SLOT_EXTENSIONS.get(key)
    if hit is None or hit[0] is not slot:
        if len(_SLOT_EXTENSIONS) > 100_000:
            _SLOT_EXTENSIONS.clear()
        hit = _SLOT_EXTENSIONS[key] = (slot, tuple(
            (words, p, tuple(words[:n] for n in range(1, min(len(words), max_n) + 1))) for words, p in slot
        ))
    return hit[1]


def bag_overlap_stats(bag_r: Mapping, bag_p: Mapping) -> np.ndarray:
    """Additive F1 statistics of two weighted bags: ``[Σ_g min(W_R, W_P), Σ W_P, Σ W_R]``.

    The same statistics as target-language F1 (:func:`metrics.core.target_f1.overlap_stats`),
    with real-valued weights in place of counts.
    """
    return np.array(overlap_stats(bag_r, bag_p), dtype=np.float64)


def f1_from_stats(stats: Sequence[float] | np.ndarray) -> F1Result:
    """Precision Σmin/ΣW_P, recall Σmin/ΣW_R and their harmonic mean (0 when a bag is empty)."""
    overlap, w_p, w_r = (float(x) for x in stats)
    precision = overlap / w_p if w_p > 0 else 0.0
    recall = overlap / w_r if w_r > 0 else 0.0
    f1 = 2 * overlap / (w_p + w_r) if overlap > 0 else 0.0
    return F1Result(precision, recall, f1, overlap, w_p, w_r)


def pivot_f1(
    original: str,
    paraphrase: str,
    table: PhraseTable,
    *,
    stem: bool = True,
    edge_threshold: float = 0.1,
    ngram_threshold: float = 0.01,
    max_n: int = 4,
) -> F1Result:
    """Pivot-language F1 between original R and paraphrase P (PEM §4.3).

    precision = Σ_g min(W_R(g), W_P(g)) / Σ_g W_P(g),
    recall = Σ_g min(W_R(g), W_P(g)) / Σ_g W_R(g), F1 their harmonic mean, over
    the pivot n-gram bags of :func:`pivot_bag`. Symmetric in R and P.
    """
    def bag(sentence: str) -> dict[tuple[str, ...], float]:
        return pivot_bag(sentence, table, stem=stem, edge_threshold=edge_threshold, ngram_threshold=ngram_threshold,
                         max_n=max_n)

    return f1_from_stats(bag_overlap_stats(bag(original), bag(paraphrase)))


@lru_cache(maxsize=2)
def _load_table_cached(path: str, size: int, mtime_ns: int) -> PhraseTable:
    return PhraseTable.load(path)


def _load_table(path) -> PhraseTable:
    # A metric instance lives for one batch, but loading a real table takes
    # seconds: keep the last two tables per process (keyed by file identity, so
    # a rewritten file is reloaded).
    st = os.stat(path)
    return _load_table_cached(str(os.path.realpath(path)), st.st_size, st.st_mtime_ns)


# Share of a table's distinct English words that Porter stemming changes: about 2 % for
# the shipped (stemmed) Bible table — stemming is not quite idempotent — and about
# 40 % for plain English text.  Above RAW_SHARE a table is plain text; below
# STEMMED_SHARE (with at least JUDGE_MIN_WORDS words to judge from) it is stemmed.
RAW_SHARE, STEMMED_SHARE, JUDGE_MIN_WORDS = 0.2, 0.05, 200
_PREPARED: dict[tuple[int, bool], tuple[PhraseTable, PhraseTable]] = {}


def table_for_metric(table: PhraseTable, *, stem: bool) -> PhraseTable:
    """The phrase table with its English side keyed the way :func:`prepare_tokens`
    normalises sentences, or ``ValueError`` saying why the table cannot match.

    A table typed as text (upper case, or — with
    ``stem`` — unstemmed words: more than ``RAW_SHARE`` of its distinct words change
    under Porter stemming) is re-keyed: each English phrase through the metric's own
    tokenisation and stemming, counts of phrases that become equal summed.  PEM §4.3's
    example typed as in the paper ("Hello ," → "Bonjour ,") otherwise matched nothing
    and gave 0.2 instead of 0.38 (issue 12).  A table already keyed is returned as it
    is (re-stemming a stemmed word can change it: "agre" → "agr").  With ``stem``
    false, a table that looks stemmed (under ``STEMMED_SHARE`` of its words change)
    is refused: lower-cased sentences cannot match stemmed keys.
    """
    key = (id(table), stem)
    hit = _PREPARED.get(key)
    if hit is not None and hit[0] is table:
        return hit[1]
    words = {w for e in table.english for w in e.split(" ")}
    # Upper case never survives the metric's normalisation: such a table was typed as text.
    untokenised = any(w != w.lower() for w in words)
    alpha = sorted(w for w in words if any(ch.isalpha() for ch in w))
    # A share needs no census: every k-th word of at most 1,000 (nltk's Porter stemmer
    # takes ~0.1-0.7 ms a word; the shipped table has 10,000 words).
    sample = alpha[:: max(1, len(alpha) // 1000)]
    changed = sum(porter_stem(w) != w for w in sample) / len(sample) if sample else 0.0
    out = table
    if untokenised or (stem and changed > RAW_SHARE):
        counts: dict[tuple[str, str], float] = defaultdict(float)
        for row, english in enumerate(table.english):
            normal = " ".join(prepare_tokens(english, stem=stem))
            if not normal:
                continue
            for k in range(int(table.offsets[row]), int(table.offsets[row + 1])):
                counts[(normal, str(table.pivot[k]))] += float(table.count[k])
        out = PhraseTable.from_counts(dict(counts), sha256=table.sha256)
    elif not stem and len(alpha) >= JUDGE_MIN_WORDS and changed < STEMMED_SHARE:
        raise ValueError(
            f"the phrase table's English side looks Porter-stemmed (stemming changes {changed:.0%} of its words; "
            "plain text: about 40%) but stem is false, so no lower-cased sentence would match it; use stem=true "
            "or a table built with build_phrase_table --no-stem")
    if len(_PREPARED) >= 4:
        _PREPARED.clear()
    _PREPARED[key] = (table, out)
    return out


@register
class PivotF1(Metric):
    """Registered ``pivot-f1``: PEM's adequacy feature (see the module docstring).

    Statistics per segment: ``[Σmin, ΣW_P, ΣW_R]``; sentence score and corpus
    score are F1 = 2 Σmin / (ΣW_P + ΣW_R) of a row or of the summed rows.
    """

    slug = "pivot-f1"
    description = "PEM pivot-language F1: agreement of bags of pivot n-grams through a phrase table."
    version = "1"
    card = MetricCard(
        measures="Whether the candidate keeps the original's meaning: F1 between the bags of pivot-language "
                 "(Spanish) n-grams both sentences translate into through a phrase table.",
        direction="higher",
        range="0–1",
        needs="original (R), candidate (P) and an English→pivot phrase table (built in: Bible English→Spanish)",
        reference="Liu, Dahlmeier & Ng 2010, PEM: A Paraphrase Evaluation Metric Exploiting Parallel Texts (EMNLP), §4.1–4.3",
        caveats="Only as broad as the phrase table: words it has never seen translate to themselves, so "
                "out-of-domain text falls back to word overlap.",
    )
    params = {
        "edge_threshold": Param("edge_threshold", float, 0.1, "keep translations with Pr(f|e) above this",
                                minimum=0.0, maximum=1.0),
        "ngram_threshold": Param("ngram_threshold", float, 0.01, "keep pivot n-grams with weight above this",
                                 minimum=0.0),
        "max_n": Param("max_n", int, 4, "longest pivot n-gram", minimum=1, maximum=8),
        "stem": Param("stem", bool, True, "Porter-stem English (must match the phrase table)"),
    }
    resources = {
        "phrase_table": ResourceSpec(
            "phrase_table",
            "English→pivot phrase table (TSV english/pivot/count; build_phrase_table)",
            default="fixtures/resources/phrase_table_bible_en_es.tsv.xz",
            loader=_load_table,
        ),
    }
    stat_names = ("overlap", "weight_candidate", "weight_original")

    def _bag(self, sentence: str, table: PhraseTable, cache: dict) -> dict:
        if sentence not in cache:
            v = self.param_values
            cache[sentence] = pivot_bag(
                sentence, table, stem=v["stem"], edge_threshold=v["edge_threshold"],
                ngram_threshold=v["ngram_threshold"], max_n=v["max_n"],
            )
        return cache[sentence]

    def _segment_stats(self, originals, candidates, references):
        try:
            table = table_for_metric(self.resource("phrase_table"), stem=self.param_values["stem"])
        except ValueError as exc:
            raise ResourceUnavailable(f"resource 'phrase_table': {exc}") from exc
        cache: dict = {}  # an original is usually shared by several candidates
        rows = [
            bag_overlap_stats(self._bag(r, table, cache), self._bag(p, table, cache))
            for r, p in zip(originals, candidates)
        ]
        return np.vstack(rows)

    def scores_from_sums(self, sums: np.ndarray) -> np.ndarray:
        """F1 = 2 Σmin / (ΣW_P + ΣW_R); 0 where the overlap is 0 (:func:`target_f1.f1_from_sums`)."""
        return f1_from_sums(sums)
