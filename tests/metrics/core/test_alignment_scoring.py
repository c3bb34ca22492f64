"""Link scores, ParaMetric scores and annotator agreement, on hand-checked cases."""

import json
import math
import random

import pytest
from nltk.translate import Alignment as NltkAlignment
from nltk.translate.metrics import alignment_error_rate
from sklearn.metrics import cohen_kappa_score

from metrics.core.alignment.model import Alignment, FormatError
from metrics.core.alignment_scoring.agreement import annotator_agreement
from metrics.core.alignment_scoring.links import LinkCounts, link_scores
from metrics.core.alignment_scoring.paraphrases import (
    ParaphraseTable,
    paraphrase_scores,
    paraphrase_table_from_alignments,
    read_paraphrase_table,
    reference_paraphrases,
)
from metrics.core.alignment_scoring.phrases import align_scores, phrase_pairs
from metrics.core.phrases import PhrasePair


def al(t1, t2, sure=(), possible=()):
    return Alignment(tuple(t1.split()), tuple(t2.split()), frozenset(sure), frozenset(possible))


# ---------------------------------------------------------------- link scores


def test_link_scores_follow_och_and_ney_by_hand():
    gold = al("a b c", "x y z", sure={(0, 0), (1, 1)}, possible={(2, 2), (2, 1)})
    test = al("a b c", "x y z", sure={(0, 0), (2, 2), (1, 2)})
    s = link_scores(gold, test)
    # |A|=3, |S|=2, |A∩S|=1, |A∩P|=2
    assert s.counts == LinkCounts(n_test=3, n_sure=2, n_possible=4, test_sure=1, test_possible=2)
    assert s.precision == pytest.approx(2 / 3)
    assert s.recall == pytest.approx(1 / 2)
    assert s.f1 == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert s.aer == pytest.approx(1 - (1 + 2) / (3 + 2))


def _random_alignment(rng, n1, n2, p_sure=0.2, p_poss=0.15):
    sure, poss = set(), set()
    for i in range(n1):
        for j in range(n2):
            r = rng.random()
            if r < p_sure:
                sure.add((i, j))
            elif r < p_sure + p_poss:
                poss.add((i, j))
    return Alignment(
        tuple(f"w{i}" for i in range(n1)), tuple(f"v{j}" for j in range(n2)), frozenset(sure), frozenset(poss)
    )


def test_aer_equals_nltk_on_random_pairs():
    rng = random.Random(7)
    checked = 0
    for _ in range(300):
        n1, n2 = rng.randint(1, 8), rng.randint(1, 8)
        gold = _random_alignment(rng, n1, n2)
        test = _random_alignment(rng, n1, n2, 0.25, 0.1)
        if not (test.links or gold.sure):
            continue
        ours = link_scores(gold, test).aer
        # nltk: reference = S, hypothesis = A, possible = P ⊇ S
        theirs = alignment_error_rate(
            NltkAlignment(gold.sure), NltkAlignment(test.links), NltkAlignment(gold.sure | gold.possible)
        )
        assert ours == pytest.approx(theirs, abs=1e-12)
        checked += 1
    assert checked > 250


def test_corpus_aer_is_micro_averaged_like_nltk_on_the_concatenated_corpus():
    rng = random.Random(11)
    golds, tests = [], []
    s_all, a_all, p_all = set(), set(), set()
    off1 = off2 = 0
    for _ in range(20):
        n1, n2 = rng.randint(2, 9), rng.randint(2, 9)
        g, t = _random_alignment(rng, n1, n2), _random_alignment(rng, n1, n2, 0.3, 0.0)
        golds.append(g)
        tests.append(t)
        s_all |= {(i + off1, j + off2) for i, j in g.sure}
        p_all |= {(i + off1, j + off2) for i, j in g.links}
        a_all |= {(i + off1, j + off2) for i, j in t.links}
        off1, off2 = off1 + n1, off2 + n2
    ours = link_scores(golds, tests)
    assert ours.n_pairs == 20
    assert ours.aer == pytest.approx(
        alignment_error_rate(NltkAlignment(s_all), NltkAlignment(a_all), NltkAlignment(p_all))
    )


def test_empty_denominators_give_nan_and_json_null():
    s = link_scores(al("a", "b"), al("a", "b"))
    assert math.isnan(s.precision) and math.isnan(s.recall) and math.isnan(s.aer)
    assert s.to_dict()["aer"] is None


def test_scoring_refuses_pairs_over_different_tokens():
    with pytest.raises(ValueError, match="pair 0"):
        link_scores(al("a b", "c"), al("a x", "c"))
    with pytest.raises(ValueError, match="1 gold alignments but 2 test"):
        link_scores([al("a", "b")], [al("a", "b"), al("a", "b")])


# ---------------------------------------------------------------- AlignPrec / AlignRecall


def test_unaligned_words_at_the_edges_multiply_system_phrase_pairs():
    # Manual: "left" ~ "went away"; the system leaves "away" unaligned, so it may
    # attach to "went" or to "fast". Worked out by hand in the enumeration below.
    manual = al("he left quickly", "he went away fast", sure={(0, 0), (1, 1), (1, 2), (2, 3)})
    system = al("he left quickly", "he went away fast", sure={(0, 0), (1, 1), (2, 3)})
    assert phrase_pairs(manual) == {
        PhrasePair(0, 2, 0, 3),
        PhrasePair(0, 3, 0, 4),
        PhrasePair(1, 2, 1, 3),
        PhrasePair(1, 3, 1, 4),
        PhrasePair(2, 3, 3, 4),
    }  # ("he", "he") is dropped as identical
    assert phrase_pairs(system) == {
        PhrasePair(0, 2, 0, 2),
        PhrasePair(0, 2, 0, 3),
        PhrasePair(0, 3, 0, 4),
        PhrasePair(1, 2, 1, 2),
        PhrasePair(1, 2, 1, 3),
        PhrasePair(1, 3, 1, 4),
        PhrasePair(2, 3, 3, 4),
        PhrasePair(2, 3, 2, 4),
    }
    s = align_scores(manual, system)
    assert (s.counts.n_system, s.counts.n_manual, s.counts.n_common) == (8, 5, 5)
    assert s.align_prec == pytest.approx(5 / 8) and s.align_recall == 1.0


def test_many_to_many_block_matches_only_as_a_whole():
    manual = al("he kicked the bucket", "he died", sure={(0, 0), (1, 1), (2, 1), (3, 1)})
    system = al("he kicked the bucket", "he died", sure={(0, 0), (1, 1)})
    assert phrase_pairs(manual) == {PhrasePair(0, 4, 0, 2), PhrasePair(1, 4, 1, 2)}
    s = align_scores(manual, system)
    # system: he kicked(/the/the bucket) ~ he died, kicked(/the/the bucket) ~ died
    assert (s.counts.n_system, s.counts.n_manual, s.counts.n_common) == (6, 2, 2)
    assert s.align_prec == pytest.approx(1 / 3) and s.align_recall == 1.0


def test_phrase_pairs_are_span_pairs_so_the_wrong_occurrence_does_not_match():
    manual = al("the x the", "a", sure={(0, 0)})
    system = al("the x the", "a", sure={(2, 0)})
    # As text both share ("the", "a") and ("the x the", "a"); as spans only the whole.
    s = align_scores(manual, system)
    assert (s.counts.n_system, s.counts.n_manual, s.counts.n_common) == (3, 3, 1)
    assert s.align_prec == pytest.approx(1 / 3)


def test_identical_phrase_pairs_are_dropped_case_blind():
    manual = al("And the Word", "and the Word", sure={(0, 0), (1, 1), (2, 2)})
    assert phrase_pairs(manual) == frozenset()
    assert len(phrase_pairs(manual, drop_identical=False)) == 6
    s = align_scores([manual], [manual])
    assert math.isnan(s.align_prec)


def test_length_limit_bounds_both_phrases():
    t1, t2 = "a b c d e f g", "A1 B1 C1 D1 E1 F1 G1"
    diag = al(t1, t2, sure={(i, i) for i in range(7)})
    assert len(phrase_pairs(diag, max_len=2)) == 7 + 6
    assert len(phrase_pairs(diag)) == 7 + 6 + 5 + 4 + 3
    s = align_scores([diag], [diag], max_len=2)
    assert s.align_prec == s.align_recall == 1.0 and s.counts.n_manual == 13
    assert "max_len:2" in s.signature


def test_possible_links_count_in_phrase_pairs_unless_told_otherwise():
    a = al("a b", "x y", sure={(0, 0)}, possible={(1, 1)})
    assert PhrasePair(1, 2, 1, 2) in phrase_pairs(a)
    assert PhrasePair(1, 2, 1, 2) not in phrase_pairs(a, use_possible=False)


# ---------------------------------------------------------------- reference paraphrases


KEY = "some want to impeach him"


def group_of_paper_example():
    """The key sentence of ParaMetric's Figure 1 against two other translations."""
    return [
        al(KEY, "some propose to impeach him", sure={(i, i) for i in range(5)}),
        al(
            KEY,
            "some are proposing an indictment against him",
            sure={(0, 0), (1, 1), (1, 2), (2, 3), (3, 3), (3, 4), (3, 5), (2, 4), (2, 5), (4, 6)},
        ),
    ]


def test_reference_paraphrases_pool_every_pair_of_the_group():
    ref = reference_paraphrases(group_of_paper_example())
    assert ref["want"] == {"propose", "are proposing"}
    # the 7-word "some are proposing an indictment against him" exceeds max_len 5
    assert ref["some want to impeach him"] == {"some propose to impeach him"}
    assert ref["to impeach"] == {"an indictment against"}
    assert ref["to impeach him"] == {"an indictment against him"}
    assert "impeach" not in ref  # identical in pair 1, inside a block in pair 2
    assert "some" not in ref  # only ever paired with itself


def test_reference_group_members_must_share_the_key_sentence():
    with pytest.raises(ValueError, match="member 1"):
        reference_paraphrases([al("a b", "c d", sure={(0, 0)}), al("a x", "c d", sure={(0, 0)})])


# ---------------------------------------------------------------- LB-Precision / Rel-Recall


def test_lb_precision_is_correct_over_posited_unique_pairs():
    group = group_of_paper_example()
    table = read_paraphrase_table(
        "want\tpropose\t0.5\n"  # correct
        "Want\tpropose\t0.4\n"  # same pair again: counted once
        "want\twish\t0.3\n"  # posited, not in the reference
        "want\tdesire\t0.001\n"  # below min_prob
        "him\this\t0.2\n"  # posited, wrong
        "impeach him\tan indictment against him\t0.1\n"  # "impeach" ~ "an indictment against" in
        # pair 2 only together with "to", so this is not a reference pair: wrong
        "to impeach him\tan indictment against him\t0.1\n"  # correct
        "some\tsome\t0.9\n"  # identical: never posited
        "want\ta b c d e f\t0.2\n"  # longer than max_len: not posited
        "elephant\tpachyderm\t0.9\n"  # not a phrase of the key sentence
    )
    s = paraphrase_scores([group], table, min_prob=0.01)
    assert (s.n_posited, s.n_correct) == (5, 2)
    assert s.lb_precision == pytest.approx(2 / 5)
    ref = reference_paraphrases(group)
    assert s.n_reference == sum(len(v) for v in ref.values())
    assert s.rel_recall == pytest.approx(2 / s.n_reference)
    by = {b.length: b for b in s.by_length}
    assert (by[1].n_posited, by[1].n_correct) == (3, 1)
    assert (by[2].n_posited, by[3].n_posited, by[3].n_correct) == (1, 1, 1)
    assert sum(b.n_reference for b in s.by_length) == s.n_reference
    d = s.to_dict()
    assert json.loads(json.dumps(d)) == d and d["by_length"][0]["length"] == 1
    assert d["by_length"][4]["lb_precision"] is None  # nothing of 5 words posited: undefined


def test_a_phrase_occurring_twice_in_the_key_sentence_is_counted_once():
    group = [al("the cat saw the dog", "a cat saw a dog", sure={(i, i) for i in range(5)})]
    table = ParaphraseTable({"the": {"a": 0.5, "this": 0.5}})
    s = paraphrase_scores([group], table)
    assert (s.n_posited, s.n_correct) == (2, 1)


def test_counting_reproduces_the_papers_156_of_230():
    # 23 one-word phrases, each with 10 reference paraphrases (one per pair);
    # the table posits 10 for each, of which 156 in all are right.
    key = " ".join(f"k{n}" for n in range(23))
    group = []
    for m in range(10):
        other = " ".join(f"p{m}x{n}" for n in range(23))
        group.append(al(key, other, sure={(n, n) for n in range(23)}))
    table = ParaphraseTable()
    right = 156
    for n in range(23):
        for m in range(10):
            if right > 0:
                table.add(f"k{n}", f"p{m}x{n}", 0.1)
                right -= 1
            else:
                table.add(f"k{n}", f"wrong{m}x{n}", 0.1)
    s = paraphrase_scores([group], table, max_len=1)
    assert (s.n_correct, s.n_posited) == (156, 230)
    assert round(s.lb_precision, 2) == 0.68
    assert s.rel_recall == pytest.approx(156 / 230)  # 23 × 10 reference pairs at max_len 1


def test_paraphrase_table_format_errors_name_the_line():
    with pytest.raises(FormatError) as err:
        read_paraphrase_table("a\tb\t0.5\nc\td\tlots\n")
    assert (err.value.line, err.value.column) == (2, 3)
    with pytest.raises(FormatError, match="not in"):
        read_paraphrase_table("a\tb\t1.5\n")
    with pytest.raises(FormatError, match="fields"):
        read_paraphrase_table("a b\n")


def test_table_entries_without_probability_pass_every_filter():
    t = read_paraphrase_table("a\tb\nA\tc\t0.2\n")
    assert t.paraphrases("a", min_prob=0.5) == {"b"}
    assert t.paraphrases("a") == {"b", "c"}
    assert read_paraphrase_table(t.to_tsv()).paraphrases("a") == {"b", "c"}


def test_table_from_alignments_is_symmetric_relative_frequency():
    a = al("he left", "he went", sure={(0, 0), (1, 1)})
    b = al("he left", "he departed", sure={(0, 0), (1, 1)})
    t = paraphrase_table_from_alignments([a, a, b])
    entries = {(p, q): pr for p, q, pr in t.items()}
    assert entries[("left", "went")] == pytest.approx(2 / 3)
    assert entries[("left", "departed")] == pytest.approx(1 / 3)
    assert entries[("went", "left")] == 1.0


# ---------------------------------------------------------------- agreement


def test_kappa_over_grid_cells_equals_sklearn():
    rng = random.Random(3)
    xs, ys, lab_x, lab_y = [], [], [], []
    for _ in range(15):
        n1, n2 = rng.randint(2, 9), rng.randint(2, 9)
        x = _random_alignment(rng, n1, n2, 0.15, 0.1)
        y = _random_alignment(rng, n1, n2, 0.15, 0.1)
        xs.append(x)
        ys.append(y)
        for i in range(n1):
            for j in range(n2):
                lab_x.append(1 if (i, j) in x.sure else 2 if (i, j) in x.possible else 0)
                lab_y.append(1 if (i, j) in y.sure else 2 if (i, j) in y.possible else 0)
    agr = annotator_agreement(xs, ys)
    assert agr.n_cells == len(lab_x)
    assert agr.kappa == pytest.approx(cohen_kappa_score(lab_x, lab_y))
    assert agr.kappa_linked == pytest.approx(cohen_kappa_score([v > 0 for v in lab_x], [v > 0 for v in lab_y]))
    assert agr.link == link_scores(xs, ys)


def test_identical_annotations_agree_perfectly():
    a = al("a b c", "x y z", sure={(0, 0), (1, 1)}, possible={(2, 2)})
    agr = annotator_agreement([a], [a])
    assert agr.kappa == 1.0 and agr.kappa_linked == 1.0 and agr.link.aer == 0.0 and agr.observed == 1.0


def test_reference_pairs_of_one_pair_equal_the_shared_phrase_extraction():
    from metrics.core.phrases import phrase_pairs_text

    a = group_of_paper_example()[1]
    ref = reference_paraphrases([a])
    flat = {(p, q) for p, qs in ref.items() for q in qs}
    assert flat == phrase_pairs_text(a.tokens1, a.tokens2, a.links)
