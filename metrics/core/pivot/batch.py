"""Pivot-F1 statistics of a batch of pairs, with the n-gram enumeration vectorised over the batch.

Why (issue 16): enumerating the confusion networks' n-gram occurrences one tuple at a
time in Python was half of pivot-f1's time, and caching it does not help (windows of
phrases, and even pairs of consecutive phrases, rarely repeat in running text). Here
every window of every sentence of the batch is extended one slot at a time with NumPy
array operations, n-grams being integer codes (``bits`` bits per word id, at most
``max_n`` words, so a code fits in 63 bits).

The floats are those of the plain code (:func:`metrics.core.pivot.ngram_bag` and
:func:`metrics.core.target_f1.overlap_stats`), not merely close: each ``w * p`` is the
same product; every sum is taken in the plain code's order — the additions of a
sentence in the order the plain loops make them (window by window, each window slot
by slot, prefixes in their dictionary order, alternatives in slot order, shorter heads
first), an n-gram's additions in that order from 0.0 (``np.bincount`` adds its weights
one by one in array order), bags in first-occurrence order, ``Σ W`` and ``Σ min`` left
to right (``np.bincount`` again, in place of Python's ``sum``). Tested against the
plain implementation on Bible verse pairs.

When a batch's words do not fit the code (more than 2^bits − 1 distinct words after
a reset, e.g. ``max_n`` = 8), the caller falls back to :func:`pivot_bag` per sentence.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from metrics.core.phrase_table import PhraseTable
from metrics.core.pivot.bag import pivot_bag
from metrics.core.pivot.f1 import bag_overlap_stats
from metrics.core.pivot.network import fill_slots, prepare_tokens, ragged, segment

#: Pairs per block, and the most (prefix, alternative) pairs and additions one block may hold:
#: a block is ≈ 350 additions a sentence (1.4 M for 2,048 Bible pairs); a block over the
#: limit (low thresholds multiply the paths) is split in halves, down to one pair, which is
#: then bagged sentence by sentence like the plain code (the same statistics, less memory).
BLOCK_PAIRS = 2048
MAX_ADDITIONS = 4_000_000


class VocabularyFull(Exception):
    """More distinct words than an n-gram code can hold."""


class BlockTooLarge(Exception):
    """A block's arrays would exceed ``MAX_ADDITIONS`` entries."""


class BatchKernel:
    """Per phrase table, edge threshold and max_n: the word ids of the n-gram codes, kept across batches.

    One batch at a time (a lock): the word ids are numbered as words come, and two threads
    numbering at once could give two words one id.
    """

    def __init__(self, table: PhraseTable, edge_threshold: float, max_n: int) -> None:
        self.table = table
        self.max_n = max_n
        self.bits = 63 // max_n
        self.edge_threshold = edge_threshold
        #: False once a block's own words overflowed the codes (callers then bag sentence by sentence).
        self.usable = True
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self.word_ids: dict[str, int] = {}

    def _word_ids(self, words: list[str]) -> list[int]:
        """Each word's id (1 …), new words numbered as they come; ``VocabularyFull`` past the codes' room."""
        ids = self.word_ids
        get = ids.get
        out = [get(w) for w in words]
        if None in out:
            limit = 1 << self.bits
            for j, w in enumerate(words):
                if out[j] is None:
                    i = get(w)
                    if i is None:
                        i = ids[w] = len(ids) + 1
                        if i >= limit:
                            raise VocabularyFull
                    out[j] = i
        return out  # type: ignore[return-value]

    def _codes(self, wid: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
        """Row i, column n − 1: the code of the n words ``wid[start[i]:start[i] + n]`` (n ≤ length[i], max_n)."""
        out = np.zeros((start.size, self.max_n), dtype=np.int64)
        code = np.zeros(start.size, dtype=np.int64)
        last = max(wid.size - 1, 0)
        for n in range(self.max_n):
            code = np.where(length > n, (code << self.bits) | wid[np.minimum(start + n, last)], code)
            out[:, n] = code
        return out

    def stats(
        self, originals: Sequence[str], candidates: Sequence[str], *, stem: bool, ngram_threshold: float
    ) -> np.ndarray:
        """Rows ``[Σ_g min(W_R, W_P), Σ W_P, Σ W_R]`` of the pairs (original R, candidate P)."""
        with self._lock:
            rows = [
                self._bounded(
                    originals[lo : lo + BLOCK_PAIRS], candidates[lo : lo + BLOCK_PAIRS], stem, ngram_threshold
                )
                for lo in range(0, len(originals), BLOCK_PAIRS)
            ]
        return np.vstack(rows) if rows else np.zeros((0, 3))

    def _bounded(
        self, originals: Sequence[str], candidates: Sequence[str], stem: bool, ngram_threshold: float
    ) -> np.ndarray:
        try:
            return self._coded(originals, candidates, stem, ngram_threshold)
        except BlockTooLarge:
            if len(originals) == 1:
                r, p = (
                    pivot_bag(
                        s,
                        self.table,
                        stem=stem,
                        edge_threshold=self.edge_threshold,
                        ngram_threshold=ngram_threshold,
                        max_n=self.max_n,
                    )
                    for s in (originals[0], candidates[0])
                )
                return bag_overlap_stats(r, p)[None, :]
            h = len(originals) // 2
            return np.vstack(
                [
                    self._bounded(originals[:h], candidates[:h], stem, ngram_threshold),
                    self._bounded(originals[h:], candidates[h:], stem, ngram_threshold),
                ]
            )

    def _coded(
        self, originals: Sequence[str], candidates: Sequence[str], stem: bool, ngram_threshold: float
    ) -> np.ndarray:
        try:
            return self._block(originals, candidates, stem, ngram_threshold)
        except VocabularyFull:
            self._reset()  # words of earlier batches no longer take up codes
            try:
                return self._block(originals, candidates, stem, ngram_threshold)
            except VocabularyFull:
                self.usable = False  # one block's words alone overflow: do not try again
                raise

    def _block(
        self, originals: Sequence[str], candidates: Sequence[str], stem: bool, ngram_threshold: float
    ) -> np.ndarray:
        index: dict[str, int] = {}
        pair_r = np.array([index.setdefault(s, len(index)) for s in originals], dtype=np.int64)
        pair_p = np.array([index.setdefault(s, len(index)) for s in candidates], dtype=np.int64)
        n_sent = len(index)

        # Per sentence (Python): tokens, segmentation, each phrase's slot as a block-local number.
        table = self.table
        local: dict[str, int] = {}
        pos_slot: list[int] = []
        lengths: list[int] = []
        for sentence in index:
            tokens = prepare_tokens(sentence, stem=stem)
            spans = segment(tokens, table)
            for a, b in spans:
                e = tokens[a] if b - a == 1 else " ".join(tokens[a:b])
                li = local.get(e)
                if li is None:
                    li = local[e] = len(local)
                pos_slot.append(li)
            lengths.append(len(spans))
        slots = fill_slots(table, self.edge_threshold, list(local))
        if not slots:
            return np.zeros((len(pair_r), 3))
        bits, max_n = self.bits, self.max_n

        # Every alternative of the block's slots, slot by slot: word ids, length, Pr(f | e).
        wid_l = self._word_ids([w for slot in slots for words, _ in slot for w in words])
        len_l = [len(words) for slot in slots for words, _ in slot]
        p_l = [p for slot in slots for _, p in slot]
        n_alt = [len(slot) for slot in slots]
        wid = np.array(wid_l, dtype=np.int64)
        alt_l = np.array(len_l, dtype=np.int64)
        alt_p = np.array(p_l, dtype=np.float64)
        cnt_alt = np.array(n_alt, dtype=np.int64)
        off_alt = np.cumsum(cnt_alt) - cnt_alt
        alt_slot = np.repeat(np.arange(len(slots)), cnt_alt)

        # Each slot's own n-grams (slot_start's order: alternative, suffix start k, length n)
        # and the suffixes it leaves open (merged per slot as a dict does).
        k, sa = ragged(np.zeros_like(alt_l), alt_l)
        rest = alt_l[sa] - k
        codes = self._codes(wid, (np.cumsum(alt_l) - alt_l)[sa] + k, rest)
        m = np.minimum(rest, max_n)
        own_c = codes[np.arange(max_n) < m[:, None]]
        own_w = np.repeat(alt_p[sa], m)
        cnt_own = np.bincount(np.repeat(alt_slot[sa], m), minlength=len(slots))
        off_own = np.cumsum(cnt_own) - cnt_own
        op = np.flatnonzero(rest < max_n)
        fr_slot, fr_l, fr_w = alt_slot[sa][op], rest[op], alt_p[sa][op]
        fr_c = codes[op, fr_l - 1]
        if op.size:
            fr_slot, (fr_c, fr_l), fr_w = _merge(fr_slot, fr_c, (fr_c, fr_l), fr_w)
        cnt_fr = np.bincount(fr_slot, minlength=len(slots))
        off_fr = np.cumsum(cnt_fr) - cnt_fr
        # Each alternative's heads (its first 1 … max_n words) and, when shorter than max_n, itself.
        heads = codes[k == 0]
        alt_hn = np.minimum(alt_l, max_n)
        alt_c = heads[np.arange(alt_l.size), alt_hn - 1]

        pos = np.array(pos_slot, dtype=np.int64)
        sent_len = np.array(lengths, dtype=np.int64)
        pos_sent = np.repeat(np.arange(n_sent), sent_len)
        pos_end = np.cumsum(sent_len)[pos_sent] if pos.size else pos

        # Depth 1: each window's own n-grams and the prefixes it leaves open.
        budget = MAX_ADDITIONS - int(cnt_own[pos].sum())
        if budget < 0:
            raise BlockTooLarge
        idx, win = ragged(off_own[pos], cnt_own[pos])
        add_win, add_code, add_w = [win], [own_c[idx]], [own_w[idx]]
        idx, f_win = ragged(off_fr[pos], cnt_fr[pos])
        f_code, f_len, f_w = fr_c[idx], fr_l[idx], fr_w[idx]
        for d in range(1, max_n):
            ok = f_win + d < pos_end[f_win]
            f_win, f_code, f_len, f_w = f_win[ok], f_code[ok], f_len[ok], f_w[ok]
            if not f_win.size:
                break
            nxt = pos[f_win + d]
            budget -= int(cnt_alt[nxt].sum())
            if budget < 0:
                raise BlockTooLarge
            alt, ent = ragged(off_alt[nxt], cnt_alt[nxt])  # (prefix, alternative) pairs in loop order
            wp = f_w[ent] * alt_p[alt]
            room = max_n - f_len[ent]
            n_heads = np.minimum(alt_hn[alt], room)
            budget -= int(n_heads.sum())
            if budget < 0:
                raise BlockTooLarge
            n0, q = ragged(np.zeros_like(alt), n_heads)  # heads[:room]
            add_win.append(f_win[ent][q])
            add_code.append((f_code[ent][q] << (bits * (n0 + 1))) | heads[alt[q], n0])
            add_w.append(wp[q])
            g = alt_l[alt] < room
            ent, alt, wp = ent[g], alt[g], wp[g]
            f_win, f_len = f_win[ent], f_len[ent] + alt_l[alt]
            f_code = (f_code[ent] << (bits * alt_l[alt])) | alt_c[alt]
            if f_win.size:  # merge equal prefixes of a window, weights summed in order
                f_win, (f_code, f_len), f_w = _merge(f_win, f_code, (f_code, f_len), wp)
            else:
                f_w = wp

        # Bags: a sentence's additions window by window (stable: depths stay in order).
        win = np.concatenate(add_win)
        if not win.size:
            return np.zeros((len(pair_r), 3))
        order = np.argsort(win, kind="stable")
        code = np.concatenate(add_code)[order]
        sent = pos_sent[win[order]]
        b_sent, (b_code,), b_w = _merge(sent, code, (code,), np.concatenate(add_w)[order])
        keep = b_w > ngram_threshold
        b_sent, b_code, b_w = b_sent[keep], b_code[keep], b_w[keep]
        size = np.bincount(b_sent, minlength=n_sent)
        start = np.cumsum(size) - size
        total = np.bincount(b_sent, weights=b_w, minlength=n_sent)

        # Σ_g min(W_R, W_P) over the smaller bag's n-grams in its order (R's on equal sizes).
        p_small = size[pair_p] < size[pair_r]
        small = np.where(p_small, pair_p, pair_r)
        large = np.where(p_small, pair_r, pair_p)
        overlap: np.ndarray = np.zeros(len(pair_r))
        if b_code.size:
            uniq, cid = np.unique(b_code, return_inverse=True)
            key = b_sent * uniq.size + cid
            sorter = np.argsort(key)
            si, k = ragged(start[small], size[small])
            want = large[k] * uniq.size + cid[si]
            at = sorter[np.minimum(np.searchsorted(key, want, sorter=sorter), key.size - 1)]
            hit = key[at] == want
            overlap = np.bincount(k[hit], weights=np.minimum(b_w[si[hit]], b_w[at[hit]]), minlength=len(pair_r))
        return np.column_stack([overlap, total[pair_p], total[pair_r]]).astype(np.float64)


def _merge(group: np.ndarray, code: np.ndarray, carry: tuple, weights: np.ndarray):
    """Equal (group, code) entries merged as a dict per group does: first-occurrence order, the
    first entry's ``carry`` values, weights summed from 0.0 in array order. ``group`` must be
    non-decreasing (entries of a group contiguous)."""
    # Stable by code: equal codes keep their array order, so a group's equal codes are adjacent.
    order = np.argsort(code, kind="stable")
    sc, sg = code[order], group[order]
    new = np.empty(order.size, dtype=bool)
    new[:1] = True
    np.not_equal(sc[1:], sc[:-1], out=new[1:])
    new[1:] |= sg[1:] != sg[:-1]
    members = np.empty(order.size, dtype=np.int64)
    members[order] = np.cumsum(new) - 1
    first = order[new]  # each merged entry's first position
    sums = np.bincount(members, weights=weights, minlength=first.size)
    by_first = np.argsort(first)
    first = first[by_first]
    return group[first], tuple(c[first] for c in carry), sums[by_first]


#: Per phrase table (by identity), edge threshold and max_n: its kernel.
_KERNELS: dict[tuple[int, float, int], BatchKernel] = {}


def batch_kernel(table: PhraseTable, edge_threshold: float, max_n: int) -> BatchKernel:
    """The (cached) :class:`BatchKernel` of a table and parameters."""
    key = (id(table), float(edge_threshold), int(max_n))
    k = _KERNELS.get(key)
    if k is None or k.table is not table:
        if len(_KERNELS) >= 4:
            _KERNELS.pop(next(iter(_KERNELS)))
        k = _KERNELS[key] = BatchKernel(table, float(edge_threshold), int(max_n))
    return k
