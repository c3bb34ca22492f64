"""Pivot-language F1 against the worked example of PEM (Liu et al. 2010) §4.3.

Reading of the paper's example (pem-2010.txt, lines 300–431; the PDF extraction
splits the figures from the text). The phrase table it implies:

* "Morning , sir ." → "Bonjour , monsieur ." with probability 1.0 (Fig. 2, one
  segment: "the following phrase pair is found in the phrase table");
* "Hello ," → "Bonjour ," 0.9 and "Salut ," 0.1 (Fig. 1 and the Pr(·|Hello ,) lines);
* "." → "." 1.0; "Querrien" is out of vocabulary and translates to itself (1.0).

The segmentation of "Hello , Querrien ." is "Hello , ||| Querrien ||| .". The
BPNGs are listed in full in the paper; each has total weight 10.0, the overlap
is 0.9 + 1 + 1 + 0.9 (Bonjour, comma, period, Bonjour comma) = 3.8, so
P = R = F1 = 0.38. The paper keeps "Salut ," (0.1), so its edge threshold is off
in this example ("thresholds disabled": Pr > 0 and W > 0).

The counts below realise those probabilities; extra entries ("hello", ",",
"sir") give the segmenter real alternatives to reject.
"""

import numpy as np
import pytest

from metrics.core.base.signature import parse_signature
from metrics.core.phrase_table import PhraseTable, write_phrase_table
from metrics.core.pivot.bag import ngram_bag, pivot_bag
from metrics.core.pivot.f1 import bag_overlap_stats, f1_from_stats, pivot_f1
from metrics.core.pivot.metric import PivotF1
from metrics.core.pivot.network import confusion_network, prepare_tokens, segment
from metrics.core.registry import create_metric
from metrics.core.text import stem

R = "Morning , sir ."
P = "Hello , Querrien ."
OFF = {"edge_threshold": 0.0, "ngram_threshold": 0.0}


def key(text):
    return " ".join(prepare_tokens(text))


@pytest.fixture
def table():
    return PhraseTable.from_counts(
        {
            (key("Morning , sir ."), "bonjour , monsieur ."): 10,
            (key("Hello ,"), "bonjour ,"): 9,
            (key("Hello ,"), "salut ,"): 1,
            (".", "."): 100,
            (",", ","): 100,
            (key("Hello"), "bonjour"): 3,
            (key("sir"), "monsieur"): 5,
        }
    )


def test_segmentation_matches_the_paper(table):
    toks = prepare_tokens(P)
    assert [" ".join(toks[a:b]) for a, b in segment(toks, table)] == [key("Hello ,"), stem("Querrien"), "."]
    assert segment(prepare_tokens(R), table) == [(0, 4)]


def test_segmentation_maximises_the_product_of_phrase_probabilities():
    # "a b" is rare: Pr(a b) = 1/201 < Pr(a) Pr(b) = (100/201)² — two segments win.
    t = PhraseTable.from_counts({("a b", "x"): 1, ("a", "y"): 50, ("a", "y2"): 50, ("b", "z"): 100})
    assert segment(["a", "b"], t) == [(0, 1), (1, 2)]
    t2 = PhraseTable.from_counts({("a b", "x"): 100, ("a", "y"): 1, ("b", "z"): 1})
    assert segment(["a", "b"], t2) == [(0, 2)]


def test_confusion_network_is_figure_1(table):
    net = confusion_network(prepare_tokens(P), table, edge_threshold=0.0)
    assert net == [
        ((("bonjour", ","), pytest.approx(0.9)), (("salut", ","), pytest.approx(0.1))),
        (((stem("Querrien"),), 1.0),),
        (((".",), 1.0),),
    ]


def test_bag_of_pivot_ngrams_is_the_papers_list(table):
    q = stem("Querrien")
    bag = pivot_bag(P, table, **OFF)
    expected = {
        ("bonjour",): 0.9,
        ("salut",): 0.1,
        (",",): 1.0,
        (q,): 1.0,
        (".",): 1.0,
        ("bonjour", ","): 0.9,
        ("salut", ","): 0.1,
        (",", q): 1.0,
        (q, "."): 1.0,
        ("bonjour", ",", q): 0.9,
        ("salut", ",", q): 0.1,
        (",", q, "."): 1.0,
        ("bonjour", ",", q, "."): 0.9,
        ("salut", ",", q, "."): 0.1,
    }
    assert bag.keys() == expected.keys()
    assert all(bag[g] == pytest.approx(w) for g, w in expected.items())
    assert sum(bag.values()) == pytest.approx(10.0)
    morning = pivot_bag(R, table, **OFF)
    assert morning == {
        ("bonjour",): 1.0,
        (",",): 1.0,
        ("monsieur",): 1.0,
        (".",): 1.0,
        ("bonjour", ","): 1.0,
        (",", "monsieur"): 1.0,
        ("monsieur", "."): 1.0,
        ("bonjour", ",", "monsieur"): 1.0,
        (",", "monsieur", "."): 1.0,
        ("bonjour", ",", "monsieur", "."): 1.0,
    }


def test_pivot_f1_reproduces_the_papers_0_38(table):
    res = pivot_f1(R, P, table, **OFF)
    assert res.overlap == pytest.approx(0.9 + 1 + 1 + 0.9)
    assert res.weight_p == pytest.approx(10.0) and res.weight_r == pytest.approx(10.0)
    assert round(res.precision, 2) == round(res.recall, 2) == round(res.f1, 2) == 0.38
    assert pivot_f1(P, R, table, **OFF).f1 == pytest.approx(res.f1)  # symmetric


def test_default_thresholds_drop_the_edge_at_exactly_0_1(table):
    # Pr(Salut , | Hello ,) = 0.1 is not > 0.1: the Hello bag loses every Salut
    # n-gram (total 9.3, hand-computed from the paper's list), the overlap stays 3.7.
    res = pivot_f1(R, P, table)
    assert res.weight_p == pytest.approx(9.3)
    assert res.overlap == pytest.approx(3.7)
    assert res.f1 == pytest.approx(2 * 3.7 / 19.3)


def test_ngram_threshold_keeps_only_weights_above_it():
    net = [((("a",), 0.5), (("b",), 0.5)), ((("c",), 0.5), (("d",), 0.5))]
    bag = ngram_bag(net, ngram_threshold=0.3)
    assert bag == {("a",): 0.5, ("b",): 0.5, ("c",): 0.5, ("d",): 0.5}
    assert len(ngram_bag(net, ngram_threshold=0.0)) == 8


def test_ngram_weights_sum_over_paths_and_are_capped_at_max_n():
    # The same bigram reached along two paths adds up: 0.5·1 + 0.5·1.
    net = [((("a", "x"), 0.5), (("a",), 0.5)), ((("x",), 1.0),)]
    bag = ngram_bag(net, ngram_threshold=0.0, max_n=2)
    assert bag[("a", "x")] == pytest.approx(1.0)
    assert bag[("x", "x")] == pytest.approx(0.5)
    assert max(len(g) for g in bag) == 2


def test_known_phrase_with_no_translation_above_threshold_keeps_its_best_one():
    t = PhraseTable.from_counts({("w", f"f{i}"): 1.5 if i == 3 else 1.0 for i in range(20)})
    net = confusion_network(["w"], t, edge_threshold=0.1)
    assert net == [((("f3",), pytest.approx(1.5 / 20.5)),)]


def test_f1_of_empty_bags_is_zero():
    assert f1_from_stats(bag_overlap_stats({}, {})).f1 == 0.0
    assert f1_from_stats(bag_overlap_stats({("a",): 1.0}, {})).precision == 0.0


def test_registered_metric_gives_the_papers_figure_and_additive_stats(table, tmp_path):
    path = write_phrase_table(
        {(e, f): round(p * table.count_e(e)) for e in table.english for f, p in table.translations(e)},
        tmp_path / "phrase_table_toy.tsv.gz",
    )
    m = create_metric("pivot-f1", {"edge_threshold": "0", "ngram_threshold": "0"}, {"phrase_table": path})
    assert isinstance(m, PivotF1)
    stats = m.segment_stats([R, R], [P, R])
    assert stats.shape == (2, 3)
    np.testing.assert_allclose(stats[0], [3.8, 10.0, 10.0])
    scores = m.sentence_scores(stats)
    assert round(scores[0], 2) == 0.38 and scores[1] == pytest.approx(1.0)
    assert m.aggregate(stats) == pytest.approx(2 * 13.8 / 40)  # ratio of summed statistics
    sig = parse_signature(m.signature())
    assert sig["metric"] == "pivot-f1" and sig["edge_threshold"] == "0.0"
    assert len(sig["res"]["phrase_table"]) == 12


def test_metric_accepts_a_loaded_table(table):
    m = PivotF1(resources={"phrase_table": table}, edge_threshold=0.0, ngram_threshold=0.0)
    assert round(m.score([R], [P]).corpus, 2) == 0.38
    assert "phrase_table=in-memory" in m.signature()


def brute_force_bag(net, max_n):
    """Expected n-gram counts of a sentence drawn path by path from the network.

    When every slot's probabilities sum to 1, Σ over whole paths of
    Pr(path) × (occurrences of g on the path) equals PEM's weight — the
    probabilities of the slots an occurrence does not touch sum out to 1.
    """
    import itertools
    from collections import defaultdict

    bag = defaultdict(float)
    for path in itertools.product(*net):
        words = [w for phrase, _ in path for w in phrase]
        prob = float(np.prod([p for _, p in path]))
        for i in range(len(words)):
            for j in range(i + 1, min(i + max_n, len(words)) + 1):
                bag[tuple(words[i:j])] += prob
    return dict(bag)


def test_ngram_bag_equals_brute_force_enumeration_on_random_networks():
    rng = np.random.default_rng(0)
    vocab = ["a", "b", "c", "d"]
    for _ in range(30):
        net = []
        for _slot in range(rng.integers(1, 5)):
            k = rng.integers(1, 4)
            probs = rng.dirichlet(np.ones(k))
            net.append(tuple((tuple(rng.choice(vocab, rng.integers(1, 3))), float(p)) for p in probs))
        max_n = int(rng.integers(1, 5))
        fast = ngram_bag(net, max_n=max_n, ngram_threshold=0.0)
        slow = brute_force_bag(net, max_n)
        assert fast.keys() == slow.keys()
        assert all(fast[g] == pytest.approx(slow[g]) for g in slow)


def test_metric_instances_share_a_loaded_table_until_the_file_changes(table, tmp_path):
    import os

    counts = {(e, f): round(p * table.count_e(e)) for e in table.english for f, p in table.translations(e)}
    path = write_phrase_table(counts, tmp_path / "pt.tsv")
    first = PivotF1(resources={"phrase_table": path}).resource("phrase_table")
    assert PivotF1(resources={"phrase_table": path}).resource("phrase_table") is first
    write_phrase_table({("a", "b"): 1}, path)
    os.utime(path, ns=(0, 10**18))  # a different mtime even on coarse clocks
    assert PivotF1(resources={"phrase_table": path}).resource("phrase_table").english == ("a",)


def test_a_phrase_table_typed_as_in_the_paper_gives_its_0_38_through_the_metric(tmp_path):
    """Issue 12: keys typed as text ("Hello ,", "Morning , sir .") matched nothing once
    sentences were stemmed and lower-cased, and F1 came out 0.2. The loader now keys
    them the way pivot-f1 normalises sentences."""
    raw = {
        ("Morning , sir .", "bonjour , monsieur ."): 10,
        ("Hello ,", "bonjour ,"): 9,
        ("Hello ,", "salut ,"): 1,
        (".", "."): 100,
        (",", ","): 100,
        ("Hello", "bonjour"): 3,
        ("sir", "monsieur"): 5,
    }
    path = write_phrase_table(raw, tmp_path / "paper.tsv")
    m = create_metric("pivot-f1", params=OFF, resources={"phrase_table": str(path)})
    assert round(m.score([R], [P]).corpus, 2) == 0.38


def test_a_stemmed_phrase_table_is_refused_with_the_reason_when_stem_is_off(tmp_path):
    from metrics.core.base.params import ResourceUnavailable
    from metrics.core.text import tokenize

    words = sorted({w.lower() for w in tokenize(" ".join(_ENGLISH_WORDS)) if w.isalpha()})
    counts = {(stem(w), f"p{k}"): 1 for k, w in enumerate(words)}
    path = write_phrase_table(counts, tmp_path / "stemmed.tsv")
    m = create_metric("pivot-f1", params={"stem": False}, resources={"phrase_table": str(path)})
    with pytest.raises(ResourceUnavailable, match="looks Porter-stemmed"):
        m.score([R], [P])
    ok = create_metric("pivot-f1", params={"stem": True}, resources={"phrase_table": str(path)})
    assert 0 <= ok.score([R], [P]).corpus <= 1


_ENGLISH_WORDS = (
    "In the beginning God created the heaven and the earth and the earth was without form and void and darkness "
    "was upon the face of the deep and the Spirit of God moved upon the face of the waters and God said let there "
    "be light and there was light and God saw the light that it was good and God divided the light from the "
    "darkness and God called the light Day and the darkness he called Night and the evening and the morning were "
    "the first day and God said let there be a firmament in the midst of the waters and let it divide the waters "
    "from the waters running walked talking houses trees cities nations kingdoms gathered blessed multiplied "
    "creeping creatures cattle fishes fowls seasons signs lights stars greater lesser ruling dividing yielding "
    "seeds fruits herbs grasses abundantly moving living having bringing forth replenishing subduing dominion "
    "everything wherein whales winged kinds beasts creeping thing image likeness male female blessing rested "
    "finished hosts sanctified generations watered formed breathed nostrils planted eastward pleasant knowledge "
    "rivers compassed onyx stones parted heads watering dressing keeping commanded freely eating surely dying "
    "helpers naming deep sleeping ribs closed flesh builded brought leaving cleaving naked ashamed serpents "
    "subtil touching opened eyes desired wise sewed aprons walking hearing voices hiding afraid telling "
    "beguiled cursed bellies enmity bruising heels sorrows conceptions desires ruling thistles sweating faces "
    "returning dust coats skins driving cherubims flaming swords turning guarding ways tilling grounds offering "
    "firstlings respected wroth fallen countenances accepted sinning lying doors talking rising slaying keepers "
    "crying bloods receiving fugitives vagabonds punishments bearing marks dwelling building cities begetting "
    "tents harps organs instructors artificers brasses irons wounding hurting avenged seventies calling names "
    "prophesying walking translating begotten daughters lived years died comforting toilings repenting grieving "
    "destroying corrupted filled violence making arks gophers rooms pitching cubits windows stories establishing "
    "covenants keeping alive gathering foods storing commanded entering clean beasts sevens pairs raining forty "
    "days nights fountains broken prevailed mountains covered expired remembered assuaged restrained abated "
    "resting months tops appeared opening ravens doves olives leaves plucked removed coverings drying going "
    "altars smelling savours imaginations seedtimes harvests colds heats summers winters ceasing"
).split()
