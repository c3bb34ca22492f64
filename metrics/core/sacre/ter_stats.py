"""sacrebleu's TER segment statistics (Snover et al. 2006), bit for bit and with cheap edit distances.

:func:`ter_stats` gives ``TER._extract_corpus_statistics`` for one reference per
segment; :func:`translation_edit_rate` is sacrebleu's ``lib_ter.translation_edit_rate``
(Tercom's greedy shift search) with the same candidates, in the same order, the
same limits and the same tie-breaking, but each candidate's edit distance comes
from rapidfuzz's compiled Levenshtein wherever it provably equals sacrebleu's
beam-restricted one, and the alignment trace from a row-at-a-time DP.

Why the distances agree. sacrebleu's ``BeamEditDistance`` fills, in row i (hypothesis
word i), only the cells j with ``|j − ⌊i·r⌋|`` inside a beam of width w = 25 (r =
|ref| / |hyp|; wider for very unequal lengths), so it is the minimum over the
paths inside that band, ≥ the true Levenshtein distance D. A path of cost D
through cell (i, j) needs at least |x| + |δ − x| edits (x = j − i, δ = |ref| − |hyp|),
from which |j − i·r| ≤ (D + |δ|)/2; so when D + |δ| ≤ 2w − 2 = 48 every path of cost
D lies inside the band, and the beam distance is D. Then the traces agree too: the
trace-back visits only cells of cost-D paths, and a predecessor outside the band is
never a minimal one. Past that bound sacrebleu's own ``BeamEditDistance`` is used.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate

import numpy as np
from rapidfuzz.distance import Levenshtein
from sacrebleu.metrics import lib_ter
from sacrebleu.metrics.ter import TER as _SacreTER

__all__ = ["ter_stats", "translation_edit_rate"]

#: D + |δ| up to this bound: sacrebleu's beam distance is the true Levenshtein distance D.
_EXACT_BOUND = 2 * lib_ter._BEAM_WIDTH - 2
_MAX_SHIFT_SIZE = lib_ter._MAX_SHIFT_SIZE
_MAX_SHIFT_DIST = lib_ter._MAX_SHIFT_DIST
_MAX_SHIFT_CANDIDATES = lib_ter._MAX_SHIFT_CANDIDATES


def _as_chars(words_h: list[str], words_r: list[str]) -> tuple[str, str] | None:
    """Both word lists as strings with one character per distinct word (equal words ⇔ equal characters).

    rapidfuzz compares strings in C without hashing; str slicing and ``+`` make the
    shifts cheap. Code points stop short of the surrogates; None past them.
    """
    ids: dict[str, str] = {}
    for w in words_r:
        if w not in ids:
            ids[w] = chr(len(ids))
    for w in words_h:
        if w not in ids:
            ids[w] = chr(len(ids))
    if len(ids) >= 0xD800:
        return None
    return "".join(ids[w] for w in words_h), "".join(ids[w] for w in words_r)


def _ids(words: str) -> np.ndarray:
    """The characters of ``words`` as code points."""
    return np.frombuffer(words.encode("utf-32-le"), dtype=np.uint32)


def _trace(h: str, r: str, r_ids: np.ndarray, done: tuple[str, np.ndarray] | None) -> tuple[int, str, np.ndarray]:
    """Levenshtein distance of ``h`` into ``r``, sacrebleu's trace of it (unbanded), and the DP matrix.

    Row by row, vectorised: t_j = min(diag_j, up_j) with diag_j = D[i−1][j−1] + [h_i ≠ r_j]
    and up_j = D[i−1][j] + 1; then D[i][j] = min_k≤j (t_k + j − k), a running minimum
    of t_k − k. ``done`` (an earlier hypothesis and its matrix) gives the rows of the
    prefix they share: a shift leaves the words before it alone. The trace-back
    re-derives each cell's operation with sacrebleu's preference — substitution or
    no-op, then deletion, then insertion, a later one only when strictly cheaper —
    so the trace is ``BeamEditDistance``'s whenever the distances agree (module docstring).
    """
    n_h, n_r = len(h), len(r)
    cols = np.arange(n_r + 1)
    dist = np.empty((n_h + 1, n_r + 1), dtype=np.int64)
    first = 1
    if done is not None:
        old, old_dist = done
        while first <= n_h and old[first - 1] == h[first - 1]:
            first += 1
        dist[:first] = old_dist[:first]
    else:
        dist[0] = cols
    if first <= n_h:
        differ = (_ids(h[first - 1 :])[:, None] != r_ids[None, :]).astype(np.int64)
        t = np.empty(n_r + 1, dtype=np.int64)
        for i in range(first, n_h + 1):
            prev = dist[i - 1]
            np.minimum(prev[:-1] + differ[i - first], prev[1:] + 1, out=t[1:])
            t[0] = i
            t -= cols
            np.minimum.accumulate(t, out=dist[i])
            dist[i] += cols
    rows = dist.tolist()
    trace = []
    i, j = n_h, n_r
    while i > 0 or j > 0:
        cur = rows[i][j]
        if i > 0 and j > 0 and rows[i - 1][j - 1] + (h[i - 1] != r[j - 1]) == cur:
            trace.append(" " if h[i - 1] == r[j - 1] else "s")
            i -= 1
            j -= 1
        elif i > 0 and rows[i - 1][j] + 1 == cur:
            trace.append("d")
            i -= 1
        else:
            trace.append("i")
            j -= 1
    return rows[n_h][n_r], "".join(reversed(trace)), dist


def _pairs(h: str, positions: dict[str, list[int]], r: str):
    """``lib_ter._find_shifted_pairs(h, r)`` in the same order, visiting only matching starts."""
    n_h, n_r = len(h), len(r)
    for start_h in range(n_h):
        for start_r in positions.get(h[start_h], ()):
            if abs(start_r - start_h) > _MAX_SHIFT_DIST:
                continue
            length = 0
            while h[start_h + length] == r[start_r + length] and length < _MAX_SHIFT_SIZE:
                length += 1
                yield start_h, start_r, length
                if n_h == start_h + length or n_r == start_r + length:
                    break


def _perform_shift(words: str, start: int, length: int, target: int) -> str:
    """``lib_ter._perform_shift`` on a string."""
    if target < start:
        return words[:target] + words[start : start + length] + words[target:start] + words[start + length :]
    if target > start + length:
        return words[:start] + words[start + length : target] + words[start : start + length] + words[target:]
    return (
        words[:start]
        + words[start + length : length + target]
        + words[start : start + length]
        + words[length + target :]
    )


def translation_edit_rate(words_hyp: list[str], words_ref: list[str]) -> tuple[int, int]:
    """``sacrebleu.metrics.lib_ter.translation_edit_rate``: (edits, reference length), identical.

    TER's edits = shifts + Levenshtein distance after the shifts (Snover et al.
    2006): greedily apply the shift that lowers the word edit distance most
    (ties: longer, then earlier in the hypothesis, then earlier target), while one
    does and fewer than 1,000 candidates were tried in all.
    """
    n_r, n_h = len(words_ref), len(words_hyp)
    if n_r == 0:
        return n_h, 0
    chars = _as_chars(words_hyp, words_ref)
    if chars is None:
        return lib_ter.translation_edit_rate(words_hyp, words_ref)
    h, r = chars
    delta_len = abs(n_r - n_h)  # shifts keep the hypothesis length
    beam: lib_ter.BeamEditDistance | None = None
    # Distances of the shifted hypotheses tried: several (start, target) pairs of
    # one round give the same words, and sacrebleu's trie cache saves only prefixes.
    memo: dict[str, int] = {}

    def distance(words: str) -> int:
        d = memo.get(words)
        if d is None:
            d = Levenshtein.distance(words, r)
            if d + delta_len > _EXACT_BOUND:
                nonlocal beam
                beam = beam or lib_ter.BeamEditDistance(r)  # type: ignore[arg-type]
                d = beam(words)[0]  # type: ignore[arg-type]
            memo[words] = d
        return d

    positions: dict[str, list[int]] = {}
    for j, c in enumerate(r):
        positions.setdefault(c, []).append(j)
    r_ids = _ids(r)
    done = None
    shifts = 0
    checked = 0
    while True:
        pre_score, inv_trace, dist = _trace(h, r, r_ids, done)
        done = (h, dist)
        if pre_score + delta_len > _EXACT_BOUND:
            beam = beam or lib_ter.BeamEditDistance(r)  # type: ignore[arg-type]
            pre_score, inv_trace = beam(h)  # type: ignore[arg-type]
        if pre_score == 0:
            break  # nothing is wrong, so no candidate passes the filters below
        # sacrebleu's _shift: align from the flipped trace, then try every candidate.
        align, ref_err, hyp_err = lib_ter.trace_to_alignment(lib_ter._flip_trace(inv_trace))
        hyp_cum = [0, *accumulate(hyp_err)]
        ref_cum = [0, *accumulate(ref_err)]
        best = None
        for start_h, start_r, length in _pairs(h, positions, r):
            if hyp_cum[start_h + length] == hyp_cum[start_h]:
                continue
            if ref_cum[start_r + length] == ref_cum[start_r]:
                continue
            if start_h <= align[start_r] < start_h + length:
                continue
            prev_idx = -1
            for offset in range(-1, length):
                if start_r + offset == -1:
                    idx = 0
                elif start_r + offset in align:
                    idx = align[start_r + offset] + 1
                else:
                    break
                if idx == prev_idx:
                    continue
                prev_idx = idx
                shifted = _perform_shift(h, start_h, length, idx)
                candidate = (pre_score - distance(shifted), length, -start_h, -idx, shifted)
                checked += 1
                if not best or candidate > best:
                    best = candidate
            if checked >= _MAX_SHIFT_CANDIDATES:
                break
        if checked >= _MAX_SHIFT_CANDIDATES or best is None or best[0] <= 0:
            break
        shifts += 1
        h = best[4]
    return shifts + pre_score, n_r


def ter_stats(ter: _SacreTER, hyps: Sequence[str], refs: Sequence[str]) -> np.ndarray:
    """sacrebleu's TER segment statistics for one reference per segment.

    Row i is exactly ``TER._extract_corpus_statistics(hyps, [refs])[i]``:
    ``[edits, ref_length]`` over the words of sacrebleu's own preprocessing
    (``TER._preprocess_segment``: the Tercom tokenizer of its options, then ``split``).
    Each distinct (hypothesis, reference) pair is computed once per call.
    """
    if len(refs) != len(hyps):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} references")
    prep = ter._preprocess_segment
    out = np.zeros((len(hyps), 2))
    done: dict[tuple[str, str], tuple[int, int]] = {}
    for i, pair in enumerate(zip(hyps, refs)):
        res = done.get(pair)
        if res is None:
            res = done[pair] = translation_edit_rate(prep(pair[0]).split(), prep(pair[1]).split())
        out[i] = res
    return out
