"""The faster pivot-f1 (issue 16) gives the same floats as the plain implementation.

The plain implementation below is the code pivot-f1 had before the speed-up
(commit f45397f): the segmentation DP scanned every end position from its longest
phrase, each slot came from ``PhraseTable.translations`` (every translation,
sorted), and the bag was built by enumerating every slot's paths for every
sentence. The fast code caches slots, log counts and window contributions per
table; these tests run both on real Bible pairs and require equality, not closeness.
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
from metrics.core.pivot import UNSEEN_COUNT, bag_overlap_stats, prepare_tokens
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
    plain = np.vstack([
        bag_overlap_stats(plain_bag(plain_network(prepare_tokens(r), table)),
                          plain_bag(plain_network(prepare_tokens(p), table)))
        for r, p in zip(kjv, web)
    ])
    assert np.array_equal(fast, plain)
    # Twice more, now from warm caches: still the same floats.
    assert np.array_equal(metric.segment_stats(kjv[:300], web[:300]), plain[:300])


def test_fast_segmentation_and_slots_equal_the_plain_ones(metric):
    kjv, web = _pairs(400)
    table = metric.resource("phrase_table")
    for sentence in kjv + web:
        tokens = prepare_tokens(sentence)
        assert pivot.segment(tokens, table) == plain_segment(tokens, table)
        assert pivot.confusion_network(tokens, table) == plain_network(tokens, table)
        for thr in (0.0, 0.5):
            assert pivot.confusion_network(tokens, table, edge_threshold=thr) == plain_network(tokens, table, thr)
