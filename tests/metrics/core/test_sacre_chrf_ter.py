"""chrf and ter statistics computed in bulk equal sacrebleu's own, bit for bit.

The tables below are sacrebleu's own test cases (sacrebleu's ``test/test_chrf.py``
and ``test/test_ter.py``, github.com/mjpost/sacrebleu); each is checked with
``==`` against sacrebleu itself (statistics, sentence and corpus scores), and
against the value sacrebleu's test expects.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import sacrebleu
from sacrebleu.metrics import lib_ter
from sacrebleu.metrics.chrf import CHRF
from sacrebleu.metrics.ter import TER

from metrics.core.registry import create_metric
from metrics.core.sacre.chrf_stats import chrf_ngram_stats
from metrics.core.sacre.ter_stats import ter_stats, translation_edit_rate

from .test_sacre import EDGE, bible

# sacrebleu test/test_chrf.py: (hypotheses, references, options, expected score).
_EPS = {"char_order": 6, "word_order": 0, "beta": 3, "eps_smoothing": True}
_EFF = {"char_order": 6, "word_order": 0, "beta": 3, "eps_smoothing": False}
_WS = {"char_order": 6, "word_order": 0, "beta": 3, "whitespace": True}
RISK_H = (
    " risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists ."
)
RISK_R = (
    "risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists ."
)
OBAMA_H = " Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "
OBAMA_R = "Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."
MAUER = "Niemand hat die Absicht, eine Mauer zu errichten"
CHRF_CASES = [
    (["abcdefg"], ["hijklmnop"], _EPS, 0.0),
    (["a"], ["b"], _EPS, 0.0),
    ([""], ["b"], _EPS, 0.0),
    ([""], ["ref"], _EPS, 0.0),
    ([""], ["reference"], _EPS, 0.0),
    (["aa"], ["ab"], _EPS, 8.3333),
    (["a", "b"], ["a", "c"], _EPS, 8.3333),
    (["a"], ["a"], _EPS, 16.6667),
    (["a b c"], ["a b c"], _EPS, 50.0),
    (["a b c"], ["abc"], _EPS, 50.0),
    ([RISK_H], [RISK_R], _EPS, 63.361730),
    ([OBAMA_H], [OBAMA_R], _EPS, 64.1302698),
    ([MAUER], [MAUER], _EPS, 100.0),
    (["a"], ["a"], _EFF, 100.0),
    ([""], ["reference"], _EFF, 0.0),
    (["a b c"], ["a b c"], _EFF, 100.0),
    (["a b c"], ["abc"], _EFF, 100.0),
    ([""], ["c"], _EFF, 0.0),
    (["a", "b"], ["a", "c"], _EFF, 50.0),
    (["aa"], ["ab"], _EFF, 25.0),
    ([" ".join(OBAMA_H.split())], [OBAMA_R], _WS, 67.3481606),
    ([RISK_H.strip()], [RISK_R], _WS, 65.2414427),
    # test_chrf_sentence_level (eps smoothing, sacrebleu's defaults otherwise)
    (
        ["Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře."],
        ["Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře."],
        {"eps_smoothing": True},
        39.14078509,
    ),
    (
        ["Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři."],
        ["A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři."],
        {"eps_smoothing": True},
        31.22557079,
    ),
    (
        ["Lapali po dechu, jejich životy skončily dřív, než skutečně začaly."],
        ["Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli."],
        {"eps_smoothing": True},
        57.15704367,
    ),
]

# sacrebleu test/test_ter.py: (hypotheses, references, expected TER / 100).
WMT_H = [
    'wählen Sie " Bild neu berechnen , " um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu entfernen , damit das '
    "Bild ungefähr dieselbe Größe aufweist wie die andere Größe .",
    "wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im Menü des Aufgabenbedienfelds "
    'die Option " Alle Aufgaben aktualisieren . "',
    'klicken Sie auf der Registerkarte " Optionen " auf die Schaltfläche " Benutzerdefiniert " und geben Sie Werte für '
    '" Fehlerkorrektur-Level " und " Y / X-Verhältnis " ein .',
    "Sie können beispielsweise ein Dokument erstellen , das ein Auto über die Bühne enthält .",
    'wählen Sie im Dialogfeld " Neu aus Vorlage " eine Vorlage aus und klicken Sie auf " Neu . "',
]
WMT_R = [
    'wählen Sie " Bild neu berechnen , " um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu entfernen , damit die '
    "Darstellung des Bildes in einer anderen Größe beibehalten wird .",
    WMT_H[1],
    'klicken Sie auf der Registerkarte " Optionen " auf die Schaltfläche " Benutzerdefiniert " und geben Sie für " '
    'Fehlerkorrektur-Level " und " Y / X-Verhältnis " niedrigere Werte ein .',
    "Sie können beispielsweise ein Dokument erstellen , das ein Auto enthalt , das sich über die Bühne bewegt .",
    WMT_H[4],
]
TER_CASES = [
    (["aaaa bbbb cccc dddd"], ["aaaa bbbb cccc dddd"], 0),
    (["dddd eeee ffff"], ["aaaa bbbb cccc"], 1),
    ([""], ["a"], 1),
    (["d e f g h a b c"], ["a b c d e f g h"], 1 / 8),
    (WMT_H, WMT_R, 0.136),
]

CHRF_OPTS = ("char_order", "word_order", "beta", "lowercase", "whitespace", "eps_smoothing")


@pytest.mark.parametrize("hyps, refs, opts, expected", CHRF_CASES)
def test_chrf_equals_sacrebleu_on_sacrebleus_own_test_cases(hyps, refs, opts, expected):
    params = {k: str(v) for k, v in opts.items()}
    res = create_metric("chrf", params).score(refs, hyps)
    # sacrebleu's corpus_chrf/sentence_chrf call this option remove_whitespace; CHRF calls it whitespace.
    assert res.corpus == CHRF(**opts).corpus_score(hyps, [refs]).score
    assert abs(res.corpus - expected) < 1e-4  # sacrebleu's own tolerance for its expected value
    assert list(res.scores) == [CHRF(**opts).sentence_score(h, [r]).score for h, r in zip(hyps, refs)]
    c = CHRF(**opts)
    assert np.array_equal(chrf_ngram_stats(c, hyps, refs), np.array(c._extract_corpus_statistics(hyps, [refs])))


@pytest.mark.parametrize("hyps, refs, expected", TER_CASES)
def test_ter_equals_sacrebleu_on_sacrebleus_own_test_cases(hyps, refs, expected):
    res = create_metric("ter").score(refs, hyps)
    assert res.corpus == sacrebleu.corpus_ter(hyps, [refs]).score
    assert abs(res.corpus - 100 * expected) < 1e-3  # sacrebleu's own tolerance
    assert list(res.scores) == [sacrebleu.sentence_ter(h, [r]).score for h, r in zip(hyps, refs)]


ODD = ["", " ", "a", "a b", "x\u00a0y", "\ud800x", "ab ab ab", "(hi) there.", "«Ça», dit-il!", "a\tb\nc"]


@pytest.mark.parametrize(
    "opts",
    [{}, {"word_order": 2}, {"lowercase": True, "whitespace": True}, {"char_order": 1, "word_order": 3, "beta": 1}],
)
def test_chrf_statistics_equal_sacrebleus_on_real_pairs(opts):
    kjv, web = bible(400, start=3000)
    hyps = web + ODD + EDGE + ODD[::-1]
    refs = kjv + ODD[::-1] + EDGE[::-1] + ODD
    c = CHRF(**opts)
    ours = chrf_ngram_stats(c, hyps, refs)
    assert np.array_equal(ours, np.array(c._extract_corpus_statistics(hyps, [refs]), dtype=np.float64))
    params = {k: str(v) for k, v in opts.items()}
    res = create_metric("chrf", params).score(refs, hyps)
    assert list(res.scores) == [CHRF(**opts).sentence_score(h, [r]).score for h, r in zip(hyps, refs)]
    assert res.corpus == CHRF(**opts).corpus_score(hyps, [refs]).score


@pytest.mark.parametrize(
    "opts", [{}, {"normalized": True, "asian_support": True}, {"no_punct": True, "case_sensitive": True}]
)
def test_ter_statistics_equal_sacrebleus_on_real_pairs(opts):
    # The verse pairs, and some WEB verses against the next KJV verse (unrelated
    # sentences: many shifts tried, long distances). sacrebleu's scores come from
    # its own statistics through its own formulas (sentence_ter and corpus_ter do
    # exactly this), so sacrebleu's slow shift search runs once.
    kjv, web = bible(150, start=9000)
    hyps = web + web[1:21] + ODD + EDGE
    refs = kjv + kjv[:20] + ODD[::-1] + EDGE[::-1]
    t = TER(**opts)
    theirs = t._extract_corpus_statistics(hyps, [refs])
    assert np.array_equal(ter_stats(t, hyps, refs), np.array(theirs))
    params = {k: str(v) for k, v in opts.items()}
    res = create_metric("ter", params).score(refs, hyps)
    assert list(res.scores) == [t._aggregate_and_compute([row]).score for row in theirs]
    assert res.corpus == t._aggregate_and_compute(theirs).score


def test_translation_edit_rate_equals_sacrebleus_on_random_word_sequences():
    # Small vocabularies make many equal words: many shift candidates, ties
    # between them, repeated shifts. Some pairs are long and unlike (distance
    # past the bound, where sacrebleu's beam is used) or permutations of each
    # other (the 1,000-candidate limit).
    rng = random.Random(44)
    beyond = capped = 0
    for k in range(300):
        vocab = rng.choice([2, 3, 5, 20])
        long = k % 50 == 0
        r = [f"w{rng.randrange(vocab)}" for _ in range(rng.randrange(40, 60) if long else rng.randrange(0, 30))]
        h = [f"w{rng.randrange(vocab)}" for _ in range(rng.randrange(40, 60) if long else rng.randrange(0, 30))]
        if k % 3 == 0 and r:  # the reference with a few blocks moved
            h = list(r)
            for _ in range(rng.randrange(1, 6)):
                i, j, n = rng.randrange(len(h)), rng.randrange(len(h)), rng.randrange(1, 6)
                block = h[i : i + n]
                del h[i : i + n]
                h[j:j] = block
        expected = lib_ter.translation_edit_rate(h, r)
        assert translation_edit_rate(h, r) == expected, (h, r)
        d = expected[0]
        beyond += d + abs(len(h) - len(r)) > 48
        capped += len(set(h)) <= 3 and len(h) > 40
    assert beyond > 0 and capped > 0
