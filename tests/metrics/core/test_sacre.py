"""bleu, chrf and ter: equal to sacrebleu at sentence and corpus level, bootstrap included."""

from __future__ import annotations

import lzma
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.significance import PairedTest

from metrics.core.base.bootstrap import bootstrap_ci, paired_bootstrap
from metrics.core.base.params import MissingReference
from metrics.core.base.signature import parse_signature
from metrics.core.registry import create_metric

BIBLE = Path(__file__).resolve().parents[3] / "fixtures" / "resources" / "bible_en.tsv.xz"


def bible(n: int, start: int = 0) -> tuple[list[str], list[str]]:
    kjv, web = [], []
    with lzma.open(BIBLE, "rt", encoding="utf-8") as fh:
        next(fh)
        for i, line in enumerate(fh):
            if i < start:
                continue
            if len(kjv) == n:
                break
            _, k, w = line.rstrip("\n").split("\t")
            kjv.append(k)
            web.append(w)
    return kjv, web


ORIGINALS = [
    "The cat sat on the mat.",
    "In the beginning God created the heaven and the earth.",
    "Hello",
    "Short one",
    "",
]
CANDIDATES = [
    "A cat sat on a mat.",
    "In the beginning, God created the heavens and the earth.",
    "Hello there, friend.",
    "Something entirely different",
    "Empty original",
]


def test_sentence_and_corpus_bleu_equal_sacrebleu_to_the_last_digit():
    kjv, web = bible(300)
    res = create_metric("bleu").score(kjv + ORIGINALS, web + CANDIDATES)
    expected = [sacrebleu.sentence_bleu(c, [o]).score for o, c in zip(kjv + ORIGINALS, web + CANDIDATES)]
    assert list(res.scores) == expected
    assert res.corpus == sacrebleu.corpus_bleu(web + CANDIDATES, [kjv + ORIGINALS]).score


@pytest.mark.parametrize(
    "params, kwargs",
    [
        ({"lowercase": "true"}, {"lowercase": True}),
        ({"tokenize": "intl"}, {"tokenize": "intl"}),
        ({"smooth_method": "floor", "smooth_value": "0.2"}, {"smooth_method": "floor", "smooth_value": 0.2}),
        ({"smooth_method": "add-k"}, {"smooth_method": "add-k"}),
        ({"smooth_method": "none"}, {"smooth_method": "none"}),
    ],
)
def test_bleu_params_are_passed_to_sacrebleu(params, kwargs):
    kjv, web = bible(40)
    res = create_metric("bleu", params).score(kjv, web)
    assert list(res.scores) == [sacrebleu.sentence_bleu(c, [o], **kwargs).score for o, c in zip(kjv, web)]
    assert res.corpus == sacrebleu.corpus_bleu(web, [kjv], **kwargs).score


def test_bleu_against_the_reference_column():
    kjv, web = bible(20)
    refs = [w.upper() if i % 2 else w for i, w in enumerate(web)]
    res = create_metric("bleu", {"against": "reference"}).score(kjv, web, refs)
    assert list(res.scores) == [sacrebleu.sentence_bleu(c, [r]).score for c, r in zip(web, refs)]


def test_against_reference_without_one_names_the_row():
    with pytest.raises(MissingReference, match="segment 1"):
        create_metric("bleu", {"against": "reference"}).score(["a", "b"], ["a", "b"], ["a", None])
    with pytest.raises(MissingReference, match="segment 0"):
        create_metric("chrf", {"against": "reference"}).score(["a"], ["a"])


def test_chrf_and_chrfpp_equal_sacrebleu():
    kjv, web = bible(60)
    o, c = kjv + ORIGINALS, web + CANDIDATES
    for params, kw in (
        ({}, {}),
        ({"word_order": "2"}, {"word_order": 2}),
        ({"beta": "3", "lowercase": "yes"}, {"beta": 3}),
    ):
        res = create_metric("chrf", params).score(o, c)
        if "lowercase" in params:
            assert res.corpus == sacrebleu.metrics.CHRF(lowercase=True, **kw).corpus_score(c, [o]).score
            continue
        assert list(res.scores) == [sacrebleu.sentence_chrf(ci, [oi], **kw).score for oi, ci in zip(o, c)]
        assert res.corpus == sacrebleu.corpus_chrf(c, [o], **kw).score


def test_ter_equals_sacrebleu_and_lower_is_better():
    kjv, web = bible(40)
    o, c = kjv + ORIGINALS, web + CANDIDATES
    m = create_metric("ter")
    res = m.score(o, c)
    assert list(res.scores) == [sacrebleu.sentence_ter(ci, [oi]).score for oi, ci in zip(o, c)]
    assert res.corpus == sacrebleu.corpus_ter(c, [o]).score
    assert m.higher_is_better is False


def test_signature_carries_params_and_sacrebleus_own_signature():
    m = create_metric("bleu", {"tokenize": "intl"})
    parsed = parse_signature(m.signature())
    assert parsed["metric"] == "bleu"
    assert parsed["tokenize"] == "intl"
    assert parsed["effective_order"] == "sentence"
    reference = BLEU(tokenize="intl")
    reference.corpus_score(["a b c"], [["a b c"]])
    assert parsed["sacrebleu"] == reference.get_signature().format()


def test_bleu_paired_bootstrap_gives_sacrebleus_p_value():
    kjv, web = bible(400)
    # System B differs both ways: every 40th candidate is the next verse (worse),
    # every 40th (offset 20) the original itself (better) — p lands mid-range.
    other = [web[i + 1] if i % 40 == 0 else kjv[i] if i % 40 == 20 else w for i, w in enumerate(web)]
    m = create_metric("bleu")
    a = m.segment_stats(kjv, web)
    b = m.segment_stats(kjv, other)
    ours = paired_bootstrap(m, a, b, n_resamples=1000)
    sigs, scores = PairedTest(
        [("base", web), ("other", other)], {"BLEU": BLEU()}, [kjv], test_type="bs", n_samples=1000
    )()
    theirs = scores["BLEU"][1]
    assert 0.05 < ours.pvalue < 0.5  # a real comparison, not the floor 1/1001
    assert ours.pvalue == theirs.p_value
    assert ours.statistic_b == pytest.approx(theirs.score)
    assert ours.statistic_a == scores["BLEU"][0].score


def test_chrf_paired_bootstrap_gives_sacrebleus_p_value():
    from sacrebleu.metrics.chrf import CHRF

    kjv, web = bible(200)
    weak = [w.lower() for w in web]
    m = create_metric("chrf")
    ours = paired_bootstrap(m, m.segment_stats(kjv, web), m.segment_stats(kjv, weak), n_resamples=200)
    _, scores = PairedTest([("a", web), ("b", weak)], {"chrF": CHRF()}, [kjv], test_type="bs", n_samples=200)()
    assert ours.pvalue == scores["chrF2"][1].p_value


def test_bootstrap_ci_of_bleu_brackets_the_corpus_score():
    kjv, web = bible(200)
    m = create_metric("bleu")
    stats = m.segment_stats(kjv, web)
    res = bootstrap_ci(m, stats, n_resamples=200)
    assert res.ci_low < res.statistic < res.ci_high
    assert res.statistic == sacrebleu.corpus_bleu(web, [kjv]).score


def test_stats_are_sacrebleus_segment_statistics():
    m = create_metric("bleu")
    stats = m.segment_stats(["the cat sat"], ["the cat"])
    # [sys_len, ref_len, correct 1..4, total 1..4]
    assert stats.tolist() == [[2, 3, 2, 1, 0, 0, 2, 1, 0, 0]]
    assert np.array_equal(stats, np.array(BLEU()._extract_corpus_statistics(["the cat"], [["the cat sat"]])))


def test_references_cached_across_calls_give_sacrebleus_statistics_for_each_system():
    # The same metric scores three systems against one set of originals (the
    # second and third calls reuse the originals' tokens), and the originals as
    # candidates (a text cached as a reference is tokenized alike as a hypothesis).
    kjv, web = bible(300, start=1000)
    other = web[1:] + web[:1]
    m = create_metric("bleu", {"lowercase": True})
    for hyps in (web, other, kjv, EDGE * 2):
        refs = kjv[: len(hyps)]
        expected = BLEU(lowercase=True)._extract_corpus_statistics(hyps, [refs])
        assert np.array_equal(m.segment_stats(refs, hyps), np.array(expected, dtype=np.float64))
    assert len(m._corpus._ref_tokens) == len(set(kjv))


EDGE = [
    "a &amp; b &quot;x&quot; &lt;y&gt; <skipped> well-\nknown\n3.14, 1,000 -5 x-1 end.",
    "",
    " ",
    "a.b,c 1.a a.1 a.. ,, 1., .1",
    "»«“”’ God’s",
    "12-3 a-b (c) [d] {e} ~`^_|\\ @#$%*+=<>?/!",
    "Trailing spaces   ",
]


def test_fast_13a_tokenizer_equals_sacrebleus():
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    from metrics.core.sacre.bleu_stats import FAST_13A

    kjv, web = bible(3000)
    tok = Tokenizer13a()
    for line in kjv + web + EDGE:
        assert FAST_13A(line) == tok(line), line


def test_fast_13a_tokenizer_equals_sacrebleus_on_random_punctuation_and_digits():
    # Every mix of digits, letters, ".", ",", "-" and spaces: lines with and
    # without adjacent ".," (which take sacrebleu's own rules).
    import random

    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    from metrics.core.sacre.bleu_stats import FAST_13A

    rng = random.Random(16)
    tok = Tokenizer13a()
    lines = ["".join(rng.choice("a1.,- \n") for _ in range(rng.randrange(1, 14))) for _ in range(20_000)]
    assert sum(("." in x or "," in x) and not any(p in x for p in ("..", ".,", ",.", ",,")) for x in lines) > 5000
    for line in lines:
        assert FAST_13A(line) == tok(line), repr(line)


@pytest.mark.parametrize(
    "opts", [{}, {"lowercase": True}, {"max_ngram_order": 6}, {"tokenize": "char"}, {"tokenize": "intl"}]
)
def test_vectorised_bleu_statistics_equal_sacrebleus(opts):
    from metrics.core.sacre.bleu_stats import bleu_ngram_stats

    kjv, web = bible(1500)
    hyps = web + ["", "", "a a", "a b", "x y z", "the the the the the"] + EDGE
    refs = kjv + ["", "a", "a a a a a", "", "x y", "the the"] + EDGE[::-1]
    b = BLEU(**opts)
    assert np.array_equal(bleu_ngram_stats(b, hyps, refs), np.array(b._extract_corpus_statistics(hyps, [refs])))
