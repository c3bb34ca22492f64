"""Vectorised n-gram overlap counts equal per-sentence Counter/set counting."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.core.ngram_counts import ngram_overlap
from metrics.core.pinc import ngram_set, pinc_score
from metrics.core.registry import create_metric
from metrics.core.target_f1 import english_tokens, ngram_counts, overlap_stats


def reference_counts(hyp, ref, n):
    h = Counter(tuple(hyp[i : i + n]) for i in range(len(hyp) - n + 1))
    r = Counter(tuple(ref[i : i + n]) for i in range(len(ref) - n + 1))
    clipped = sum(min(c, r[g]) for g, c in h.items())
    return clipped, sum(h.values()), sum(r.values()), len(h), len(set(h) & set(r))


sentences = st.lists(st.lists(st.sampled_from("a b c d the".split()), max_size=9), min_size=1, max_size=6)


@given(sentences, sentences, st.integers(1, 5))
@settings(max_examples=150, deadline=None)
def test_counts_equal_counter_arithmetic(hyps, refs, max_n):
    k = min(len(hyps), len(refs))
    hyps, refs = hyps[:k], refs[:k]
    ov = ngram_overlap(hyps, refs, max_n=max_n)
    for s, (h, r) in enumerate(zip(hyps, refs)):
        for n in range(1, max_n + 1):
            got = (
                ov.clipped[s, n - 1],
                ov.hyp_total[s, n - 1],
                ov.ref_total[s, n - 1],
                ov.hyp_distinct[s, n - 1],
                ov.common_distinct[s, n - 1],
            )
            assert got == reference_counts(h, r, n)
        assert (ov.hyp_len[s], ov.ref_len[s]) == (len(h), len(r))


def test_tokens_that_look_alike_are_not_confused():
    ov = ngram_overlap([["ab", "c"], ["a", "bc"]], [["a", "bc"], ["ab", "c"]], max_n=2)
    assert ov.clipped.tolist() == [[0, 0], [0, 0]]


def test_pinc_and_target_f1_metrics_equal_their_scalar_definitions():
    rng = random.Random(3)
    words = "the cat sat on mat dog ran a , . rivers flowed".split()
    originals = [" ".join(rng.choices(words, k=rng.randint(0, 12))) for _ in range(200)]
    candidates = [" ".join(rng.choices(words, k=rng.randint(0, 12))) for _ in range(200)]
    pinc = create_metric("pinc").score(originals, candidates)
    assert np.allclose(pinc.scores, [pinc_score(o.split(), c.split()) for o, c in zip(originals, candidates)])
    stats = create_metric("target-f1").segment_stats(originals, candidates)
    expected = [
        overlap_stats(ngram_counts(english_tokens(o)), ngram_counts(english_tokens(c)))
        for o, c in zip(originals, candidates)
    ]
    assert stats.tolist() == [list(map(float, e)) for e in expected]
    assert ngram_set(["a"], 1) == {("a",)}
