"""The faster pivot-f1 (issue 16) gives the same floats as the plain implementation.

The plain implementation below is the code pivot-f1 had before the speed-up
(commit f45397f): the segmentation DP scanned every end position from its longest
phrase, each slot came from ``PhraseTable.translations`` (every translation,
sorted), and the bag was built by enumerating every slot's paths for every
sentence. The fast code caches slots, log counts and window contributions per
table (``pivot_bag``), and the metric computes a whole batch with NumPy
(:mod:`metrics.core.pivot.batch`); these tests run them and the plain code on real
Bible pairs and require equality, not closeness.
"""

from __future__ import annotations

import json
import lzma
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from metrics.core import pivot
from metrics.core.pivot import batch as pivot_batch
from metrics.core.pivot.bag import pivot_bag
from metrics.core.pivot.f1 import bag_overlap_stats
from metrics.core.pivot.network import UNSEEN_COUNT, confusion_network, fill_slots, prepare_tokens, segment, slot_cache
from metrics.core.pivot.table import table_for_metric
from metrics.core.registry import create_metric

SHARED = Path(__file__).resolve().parents[4] / "shared" / "data" / "bible" / "verses.jsonl.xz"


def plain_segment(tokens, table, max_phrase_len=4):
    n = len(tokens)
    log_total = math.log(table.total)
    best = [0.0] + [-math.inf] * n
    back = [0] * (n + 1)
    for end in range(1, n + 1):
        for length in range(min(max_phrase_len, end), 0, -1):
            start = end - length
            count = table.count_e(" ".join(tokens[start:end]))
            if count <= 0:
                if length > 1:
                    continue
                count = UNSEEN_COUNT
            score = best[start] + math.log(count) - log_total
            if score > best[end]:
                best[end] = score
                back[end] = start
    spans, end = [], n
    while end > 0:
        spans.append((back[end], end))
        end = back[end]
    return spans[::-1]


def plain_network(tokens, table, edge_threshold=0.1):
    slots = []
    for start, end in plain_segment(tokens, table):
        e = " ".join(tokens[start:end])
        trans = table.translations(e)
        if not trans:
            slots.append((((e,), 1.0),))
            continue
        kept = [(tuple(f.split(" ")), p) for f, p in trans if p > edge_threshold]
        if not kept:
            f, p = trans[0]
            kept = [(tuple(f.split(" ")), p)]
        slots.append(tuple(kept))
    return slots


def plain_bag(network, max_n=4, ngram_threshold=0.01):
    bag = defaultdict(float)
    n_slots = len(network)
    for s in range(n_slots):
        frontier = defaultdict(float)
        for words, p in network[s]:
            for k in range(len(words)):
                rest = words[k:]
                for n in range(1, min(len(rest), max_n) + 1):
                    bag[rest[:n]] += p
                if len(rest) < max_n:
                    frontier[rest] += p
        t = s + 1
        while frontier and t < n_slots:
            grown = defaultdict(float)
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


def _pairs(n: int):
    if not SHARED.exists():
        pytest.skip("../shared/data/bible is absent")
    kjv, web = [], []
    with lzma.open(SHARED, "rt", encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if i % 7:  # spread over the whole Bible
                continue
            v = json.loads(line)
            kjv.append(" ".join(v["kjv"].split()))
            web.append(" ".join(v["web"].split()))
            if len(kjv) == n:
                break
    return kjv, web


@pytest.fixture(scope="module")
def metric():
    m = create_metric("pivot-f1")
    if m.missing_resources():
        pytest.skip("the Bible phrase table is not available")
    return m


def test_fast_pivot_f1_statistics_equal_the_plain_implementation_on_bible_pairs(metric):
    kjv, web = _pairs(2500)
    table = metric.resource("phrase_table")
    fast = metric.segment_stats(kjv, web)
    plain = np.vstack(
        [
            bag_overlap_stats(
                plain_bag(plain_network(prepare_tokens(r), table)), plain_bag(plain_network(prepare_tokens(p), table))
            )
            for r, p in zip(kjv, web)
        ]
    )
    assert np.array_equal(fast, plain)
    # Twice more, now from warm caches: still the same floats.
    assert np.array_equal(metric.segment_stats(kjv[:300], web[:300]), plain[:300])


def test_fast_segmentation_and_slots_equal_the_plain_ones(metric):
    kjv, web = _pairs(400)
    table = metric.resource("phrase_table")
    for sentence in kjv + web:
        tokens = prepare_tokens(sentence)
        assert segment(tokens, table) == plain_segment(tokens, table)
        assert confusion_network(tokens, table) == plain_network(tokens, table)
        for thr in (0.0, 0.5):
            assert confusion_network(tokens, table, edge_threshold=thr) == plain_network(tokens, table, thr)


def plain_stats(originals, candidates, table, edge_threshold=0.1, max_n=4, ngram_threshold=0.01):
    def bag(sentence):
        return plain_bag(plain_network(prepare_tokens(sentence), table, edge_threshold), max_n, ngram_threshold)

    return np.vstack([bag_overlap_stats(bag(r), bag(p)) for r, p in zip(originals, candidates)])


def _mixed_batch():
    """Verse pairs with what a metric run brings: an original shared by several candidates,
    a pair of equal sentences, an empty candidate, a one-word sentence, unseen words."""
    kjv, web = _pairs(300)
    originals = kjv[:200] + [kjv[0]] * 3 + [kjv[5], "", "Amen", "Zyxwvut qwerty flibbertigibbet ."]
    candidates = web[:200] + [web[1], web[2], kjv[0], kjv[5], "", "", "Quux amen ."]
    return originals, candidates


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"ngram_threshold": 0.0},
        {"edge_threshold": 0.05},
        {"edge_threshold": 0.5},
        {"max_n": 1},
        {"max_n": 2},
        {"max_n": 5},
    ],
)
def test_batch_statistics_equal_the_plain_implementation_for_each_parameter(metric, params, monkeypatch):
    table = table_for_metric(metric.resource("phrase_table"), stem=True)
    originals, candidates = _mixed_batch()
    monkeypatch.setattr(pivot_batch, "BLOCK_PAIRS", 64)  # several blocks, bags recomputed per block
    m = create_metric("pivot-f1", params=params)
    fast = m.segment_stats(originals, candidates)
    kw = {"edge_threshold": 0.1, "max_n": 4, "ngram_threshold": 0.01, **params}
    assert np.array_equal(fast, plain_stats(originals, candidates, table, **kw))


def test_a_block_over_the_size_limit_is_split_down_to_pairs_bagged_one_by_one(metric, monkeypatch):
    table = table_for_metric(metric.resource("phrase_table"), stem=True)
    originals, candidates = _mixed_batch()
    monkeypatch.setattr(pivot_batch, "MAX_ADDITIONS", 2_000)  # a few verses; long verses alone are over
    calls = []
    monkeypatch.setattr(pivot_batch, "pivot_bag", lambda *a, **k: calls.append(a[0]) or pivot_bag(*a, **k))
    fast = create_metric("pivot-f1").segment_stats(originals, candidates)
    assert calls  # some pairs went the bag-by-bag way
    assert np.array_equal(fast, plain_stats(originals, candidates, table))


def test_statistics_fall_back_to_bag_by_bag_when_the_words_do_not_fit_the_codes(metric):
    # max_n = 8 leaves 7 bits a word: a block's words overflow the codes.
    table = table_for_metric(metric.resource("phrase_table"), stem=True)
    originals, candidates = _mixed_batch()
    m = create_metric("pivot-f1", params={"max_n": 8})
    fast = m.segment_stats(originals[:60], candidates[:60])
    assert not pivot_batch.batch_kernel(table, 0.1, 8).usable
    assert np.array_equal(fast, plain_stats(originals[:60], candidates[:60], table, max_n=8))


def test_a_full_vocabulary_is_reset_between_blocks_and_the_block_recomputed(metric):
    table = table_for_metric(metric.resource("phrase_table"), stem=True)
    originals, candidates = _mixed_batch()
    kernel = pivot_batch.batch_kernel(table, 0.1, 4)
    # Words of earlier batches have taken all but a few codes.
    kernel.word_ids.clear()
    kernel.word_ids.update({f"<earlier {i}>": i + 1 for i in range((1 << kernel.bits) - 5)})
    fast = kernel.stats(originals, candidates, stem=True, ngram_threshold=0.01)
    assert kernel.usable
    assert "<earlier 0>" not in kernel.word_ids and len(kernel.word_ids) < 1 << kernel.bits
    assert np.array_equal(fast, plain_stats(originals, candidates, table))


def test_slots_filled_together_equal_the_slots_one_by_one(metric):
    kjv, web = _pairs(300)
    table = metric.resource("phrase_table")
    for thr in (0.1, 0.0, 0.5, 0.9):  # 0.9: many phrases keep only their most probable translation
        phrases = list(
            dict.fromkeys(
                " ".join(prepare_tokens(s)[a:b]) for s in kjv + web for a, b in segment(prepare_tokens(s), table)
            )
        )
        pivot.network.SLOT_CACHES.clear()
        together = fill_slots(table, thr, phrases)
        pivot.network.SLOT_CACHES.clear()
        one_by_one = [slot_cache(table, thr)(e) for e in phrases]
        assert together == one_by_one
        assert list(together) == plain_network_slots(phrases, table, thr)


def plain_network_slots(phrases, table, edge_threshold):
    out = []
    for e in phrases:
        trans = table.translations(e)
        if not trans:
            out.append((((e,), 1.0),))
            continue
        kept = [(tuple(f.split(" ")), p) for f, p in trans if p > edge_threshold]
        out.append(tuple(kept) if kept else ((tuple(trans[0][0].split(" ")), trans[0][1]),))
    return out
