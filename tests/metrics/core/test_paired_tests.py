"""Paired bootstrap and approximate randomization from sufficient statistics (issue 16).

Reference: sacrebleu itself (``PairedTest`` with ``test_type="bs"``/``"ar"``) on the
same inputs, and sacrebleu's own scalar score functions on the same summed rows.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF, TER
from sacrebleu.significance import PairedTest

from metrics.core.base.bootstrap import paired_approximate_randomization, paired_bootstrap, pairwise_tests
from metrics.core.base.params import MetricError
from metrics.core.base.resampling import iter_resample_indices
from metrics.core.registry import create_metric
from metrics.core.sacre.backend import SacreBackend
from metrics.core.stats.significance import metric_pairwise_tests

HERE = Path(__file__).resolve()
FIXTURE = HERE.parents[3] / "fixtures" / "resources" / "bible_en.tsv.xz"


def _verses(n: int, start: int = 0) -> tuple[list[str], list[str]]:
    import lzma

    kjv, web = [], []
    with lzma.open(FIXTURE, "rt", encoding="utf-8") as fh:
        next(fh)
        for i, line in enumerate(fh):
            if i < start:
                continue
            _, k, w = line.rstrip("\n").split("\t")
            kjv.append(k)
            web.append(w)
            if len(kjv) == n:
                break
    return kjv, web


def _variant(base: list[str], originals: list[str], step: int, offset: int) -> list[str]:
    """``base`` with every ``step``-th candidate made worse (next verse) and, offset by
    ``offset``, some made better (the original itself): p lands mid-range."""
    return [
        base[i + 1] if i % step == 0 and i + 1 < len(base) else originals[i] if i % step == offset else s
        for i, s in enumerate(base)
    ]


SACRE = {"bleu": BLEU, "chrf": CHRF, "ter": TER}


def _sacre_p(slug, systems, originals, test, n, seed, monkeypatch):
    monkeypatch.setenv("SACREBLEU_SEED", str(seed))
    _, scores = PairedTest(list(systems), {"m": SACRE[slug]()}, [originals], test_type=test, n_samples=n)()
    key = next(k for k in scores if k != "System")
    return [r.p_value for r in scores[key][1:]], [r.score for r in scores[key]]


@pytest.mark.parametrize("slug", ["bleu", "chrf", "ter"])
@pytest.mark.parametrize("seed", [12345, 1, 777])
def test_paired_bootstrap_p_values_equal_sacrebleus_paired_bs_for_its_seeds(slug, seed, monkeypatch):
    # sacrebleu's TER is slow (pure-Python edit distance): fewer segments for it.
    kjv, web = _verses(120 if slug == "ter" else 300)
    weak = _variant(web, kjv, 30, 15)
    m = create_metric(slug)
    ours = paired_bootstrap(m, m.segment_stats(kjv, web), m.segment_stats(kjv, weak), n_resamples=400, seed=seed)
    (p,), (score_a, score_b) = _sacre_p(slug, [("a", web), ("b", weak)], kjv, "bs", 400, seed, monkeypatch)
    assert ours.pvalue == p
    assert 0.01 < p < 0.9  # a mid-range p-value: a real check, not the floor
    assert (ours.statistic_a, ours.statistic_b) == (score_a, score_b)


@pytest.mark.parametrize("slug", ["bleu", "chrf", "ter"])
@pytest.mark.parametrize("seed", [12345, 3])
def test_approximate_randomization_p_values_equal_sacrebleus_paired_ar(slug, seed, monkeypatch):
    kjv, web = _verses(100 if slug == "ter" else 250, start=400)
    weak = _variant(web, kjv, 25, 12)
    m = create_metric(slug)
    ours = paired_approximate_randomization(
        m, m.segment_stats(kjv, web), m.segment_stats(kjv, weak), n_trials=1000, seed=seed
    )
    (p,), _ = _sacre_p(slug, [("a", web), ("b", weak)], kjv, "ar", 1000, seed, monkeypatch)
    assert ours.pvalue == p
    assert 0.01 < p < 1.0


def test_ar_masks_drawn_in_blocks_are_sacrebleus_single_draw():
    from metrics.core.base.bootstrap import ar_masks

    for n in (7, 250, 3001):
        full = np.random.default_rng(5).integers(2, size=(1000, n), dtype=bool)
        blocks = np.vstack(list(ar_masks(n, 1000, 5, max_cells=40 * n)))
        assert np.array_equal(blocks, full)


def test_every_pair_of_a_leaderboard_gets_the_p_value_of_its_own_paired_test(monkeypatch):
    kjv, web = _verses(120, start=1000)
    systems = [
        ("s0", web),
        ("s1", _variant(web, kjv, 20, 10)),
        ("s2", _variant(web, kjv, 9, 4)),
        ("s3", _variant(web, kjv, 50, 0)),
    ]
    for slug, test, n in (("bleu", "bs", 300), ("bleu", "ar", 500), ("chrf", "ar", 300)):
        m = create_metric(slug)
        stats = {name: m.segment_stats(kjv, hyps) for name, hyps in systems}
        if True:
            board = metric_pairwise_tests(m, stats, test=test, n_resamples=n, seed=12345)
            assert board.systems == ("s0", "s1", "s2", "s3")
            for (a, ha), (b, hb) in itertools.combinations(systems, 2):
                (p,), _ = _sacre_p(slug, [(a, ha), (b, hb)], kjv, test, n, 12345, monkeypatch)
                assert board.pvalue(a, b) == board.pvalue(b, a) == p, (slug, test, a, b)
            assert all(board.pvalues[i][i] == 1.0 for i in range(4))


def test_vectorised_scores_equal_sacrebleus_scalar_code_for_every_dtype_and_option():
    rng = np.random.default_rng(0)
    backends = (
        [
            SacreBackend(BLEU(smooth_method=s, effective_order=e, max_ngram_order=o))
            for s in ("exp", "floor", "add-k", "none")
            for e in (False, True)
            for o in (2, 4)
        ]
        + [SacreBackend(CHRF(char_order=c, word_order=w)) for c, w in ((6, 0), (6, 2), (3, 1))]
        + [SacreBackend(TER())]
    )
    for backend in backends:
        obj = backend.obj
        if isinstance(obj, BLEU):
            k = 2 + 2 * obj.max_ngram_order
            total = rng.integers(0, 60, size=(400, obj.max_ngram_order))
            total[rng.random(total.shape) < 0.1] = 0
            correct = np.minimum(total, rng.integers(0, 40, size=total.shape))
            correct[rng.random(correct.shape) < 0.2] = 0
            rows = np.hstack([rng.integers(0, 80, size=(400, 2)), correct, total])
            assert rows.shape[1] == k
        elif isinstance(obj, CHRF):
            hyp = rng.integers(0, 50, size=(400, obj.order))
            ref = rng.integers(0, 50, size=(400, obj.order))
            match = np.minimum(np.minimum(hyp, ref), rng.integers(0, 50, size=(400, obj.order)))
            rows = np.stack([hyp, ref, match], axis=2).reshape(400, -1)
        else:
            rows = np.column_stack([rng.integers(0, 30, 400), rng.integers(0, 30, 400)])
        for dtype in (np.int64, np.float32, np.float64):
            x = rows.astype(dtype)
            expected = [backend.score_of(list(r) if dtype is np.float32 else r.tolist()) for r in x]
            got = backend.score_many(x)
            assert got.tolist() == expected, (obj, dtype)


def test_resampled_scores_equal_sacrebleus_own_resampling():
    """The float32 path: what sacrebleu's ``_bootstrap_resample`` computes, resample by resample."""
    kjv, web = _verses(120)
    for slug in ("bleu", "chrf", "ter"):
        m = create_metric(slug)
        stats = m.segment_stats(kjv, web)
        idx = next(iter_resample_indices(120, 50, seed=4))
        stats32 = stats.astype(np.float32)
        expected = [float(m._corpus.obj._compute_score_from_stats(s.sum(0)).score) for s in stats32[idx]]
        assert m.resample_scores(stats, idx).tolist() == expected


def test_paired_tests_refuse_misaligned_or_empty_input():
    m = create_metric("bleu")
    a = np.ones((5, 10))
    with pytest.raises(ValueError):
        pairwise_tests(m, [a, np.ones((4, 10))])
    with pytest.raises(ValueError):
        pairwise_tests(m, [a])
    with pytest.raises(ValueError):
        pairwise_tests(m, [a, a], test="t")
    with pytest.raises(MetricError):
        paired_approximate_randomization(m, np.zeros((0, 10)), np.zeros((0, 10)))


def test_a_system_against_itself_follows_sacrebleu_including_its_ar_quirk(monkeypatch):
    """sacrebleu counts strictly (> |Δ|): with Δ = 0 and identical systems no trial or
    resample counts, so both tests give the floor 1 / (T + 1). Same here (a quirk
    the docs point out: compare a system with itself only through the scores)."""
    kjv, web = _verses(100)
    m = create_metric("bleu")
    s = m.segment_stats(kjv, web)
    ar = paired_approximate_randomization(m, s, s, n_trials=200)
    (p_ar,), _ = _sacre_p("bleu", [("a", web), ("b", web)], kjv, "ar", 200, 12345, monkeypatch)
    assert ar.pvalue == p_ar == 1 / 201
    bs = paired_bootstrap(m, s, s, n_resamples=200)
    (p_bs,), _ = _sacre_p("bleu", [("a", web), ("b", web)], kjv, "bs", 200, 12345, monkeypatch)
    assert bs.pvalue == p_bs == 1 / 201
