"""sacrebleu's chrF and chrF++ segment statistics, computed in bulk and bit for bit.

:func:`chrf_ngram_stats` gives ``CHRF._extract_corpus_statistics`` for one
reference per segment: the character n-grams of every segment are counted at
once over Unicode code points (:func:`metrics.core.ngram_counts.ngram_overlap_ids`)
instead of one ``Counter`` per order and sentence, and chrF++'s word n-grams the
same way over sacrebleu's own word splitting (``CHRF._remove_punctuation``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sacrebleu.metrics.chrf import CHRF as _SacreCHRF

from metrics.core.ngram_counts import NgramOverlap, ngram_overlap, ngram_overlap_ids

__all__ = ["chrf_ngram_stats"]


def _code_points(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every text's characters as code points (one array, texts in order), and each text's length."""
    lens = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    # UTF-32 has one 4-byte unit per code point, so the buffer is the code points;
    # "surrogatepass" keeps a lone surrogate (legal in a str) as its own character.
    flat = "".join(texts).encode("utf-32-le", "surrogatepass")
    return np.frombuffer(flat, dtype=np.uint32).astype(np.int64), lens


def _triples(ov: NgramOverlap) -> np.ndarray:
    """``[hyp, ref, match]`` per order as ``CHRF._get_match_statistics`` counts them.

    hyp = Σ_g c_hyp(g) = max(0, len_hyp − n + 1), but 0 when the reference has no
    n-gram of that order (sacrebleu: "don't count hits if no reference exists");
    ref = max(0, len_ref − n + 1); match = Σ_g min(c_hyp(g), c_ref(g)).
    """
    hyp = np.where(ov.ref_total > 0, ov.hyp_total, 0)
    return np.stack([hyp, ov.ref_total, ov.clipped], axis=2).reshape(len(hyp), -1)


def chrf_ngram_stats(chrf: _SacreCHRF, hyps: Sequence[str], refs: Sequence[str]) -> np.ndarray:
    """sacrebleu's chrF segment statistics for one reference per segment, in bulk.

    Row i is exactly ``CHRF._extract_corpus_statistics(hyps, [refs])[i]``:
    ``[hyp_n, ref_n, match_n]`` for character orders n = 1..``char_order``, then
    word orders 1..``word_order`` (Popović 2015, 2017). Characters are those of
    the lower-cased text when ``lowercase``, with all whitespace removed unless
    ``whitespace`` (``''.join(s.split())``, as sacrebleu's ``extract_all_char_ngrams``).
    Word n-grams join tokens with a space in sacrebleu; tokens hold no space, so
    comparing token tuples is the same equality.
    """
    n_seg = len(hyps)
    if len(refs) != n_seg:
        raise ValueError(f"{n_seg} hypotheses but {len(refs)} references")
    prep = chrf._preprocess_segment
    h = [prep(s) for s in hyps]
    r = [prep(s) for s in refs]
    blocks = []
    if chrf.char_order > 0:
        if chrf.whitespace:
            hc, rc = h, r
        else:
            hc = ["".join(s.split()) for s in h]
            rc = ["".join(s.split()) for s in r]
        hyp_ids, hyp_len = _code_points(hc)
        ref_ids, ref_len = _code_points(rc)
        ov = ngram_overlap_ids(np.concatenate([hyp_ids, ref_ids]), hyp_len, ref_len, max_n=chrf.char_order)
        blocks.append(_triples(ov))
    if chrf.word_order > 0:
        words = chrf._remove_punctuation
        blocks.append(_triples(ngram_overlap([words(s) for s in h], [words(s) for s in r], max_n=chrf.word_order)))
    if not blocks:
        return np.zeros((n_seg, 0))
    return np.hstack(blocks).astype(np.float64)
