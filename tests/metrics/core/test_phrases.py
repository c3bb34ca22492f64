"""Consistent phrase extraction (ParaMetric §3 / Och & Ney 2004)."""

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.core.phrases import PhrasePair, extract_phrase_pairs, phrase_pairs_text


def brute_force(links, len1, len2, max_len, max_len2=None):
    """The definition, enumerated literally over every span pair."""
    max2 = max_len if max_len2 is None else max_len2
    links = set(links)
    out = []
    for i1, i2 in itertools.combinations_with_replacement(range(len1), 2):
        if i2 - i1 + 1 > max_len:
            continue
        for j1, j2 in itertools.combinations_with_replacement(range(len2), 2):
            if j2 - j1 + 1 > max2:
                continue
            inside = any(i1 <= i <= i2 and j1 <= j <= j2 for i, j in links)
            leaving = any((i1 <= i <= i2) != (j1 <= j <= j2) for i, j in links)
            if inside and not leaving:
                out.append(PhrasePair(i1, i2 + 1, j1, j2 + 1))
    return sorted(out)


def test_one_to_one_diagonal_gives_all_contiguous_sub_blocks():
    pairs = extract_phrase_pairs([(0, 0), (1, 1), (2, 2)], 3, 3)
    assert pairs == [
        PhrasePair(0, 1, 0, 1),
        PhrasePair(0, 2, 0, 2),
        PhrasePair(0, 3, 0, 3),
        PhrasePair(1, 2, 1, 2),
        PhrasePair(1, 3, 1, 3),
        PhrasePair(2, 3, 2, 3),
    ]


def test_unaligned_words_at_the_edges_extend_phrases_on_both_sides():
    # "the house" vs "house": sentence-1 word 0 is unaligned.
    pairs = extract_phrase_pairs([(1, 0)], 2, 1)
    assert pairs == [PhrasePair(0, 2, 0, 1), PhrasePair(1, 2, 0, 1)]
    # and an unaligned word on side 2 at both edges
    pairs = extract_phrase_pairs([(0, 1)], 1, 3)
    assert set(pairs) == {PhrasePair(0, 1, s, e) for s in (0, 1) for e in (2, 3)}


def test_crossing_links_block_inconsistent_spans():
    # 0-1, 1-0 (a swap): the single words are consistent, and so is the whole block,
    # but word 0 of side 1 with word 0 of side 2 is not.
    pairs = extract_phrase_pairs([(0, 1), (1, 0)], 2, 2)
    assert pairs == [PhrasePair(0, 1, 1, 2), PhrasePair(0, 2, 0, 2), PhrasePair(1, 2, 0, 1)]


def test_many_to_many_block_is_extracted_only_whole():
    links = [(i, j) for i in (0, 1) for j in (0, 1, 2)]  # "kick the bucket" ~ "die"-like block
    pairs = extract_phrase_pairs(links, 2, 3)
    assert pairs == [PhrasePair(0, 2, 0, 3)]


def test_length_limit_applies_to_both_sides():
    links = [(i, i) for i in range(7)]
    pairs = extract_phrase_pairs(links, 7, 7, max_len=5)
    assert max(p.end1 - p.start1 for p in pairs) == 5
    assert max(p.end2 - p.start2 for p in pairs) == 5
    assert len(pairs) == 7 + 6 + 5 + 4 + 3
    pairs = extract_phrase_pairs([(0, 0), (0, 4)], 1, 5, max_len=4)
    assert pairs == []  # the target span would need 5 words


def test_identical_phrases_are_dropped_case_blind():
    t1 = "some want to impeach him".split()
    t2 = "some propose to impeach him".split()
    links = [(i, i) for i in range(5)]
    pairs = phrase_pairs_text(t1, t2, links)
    assert ("some", "some") not in pairs
    assert ("to impeach him", "to impeach him") not in pairs
    assert ("want", "propose") in pairs
    assert ("some want", "some propose") in pairs
    assert ("want to impeach him", "propose to impeach him") in pairs
    kept = phrase_pairs_text(["And"], ["and"], [(0, 0)])
    assert kept == set()
    assert phrase_pairs_text(["And"], ["and"], [(0, 0)], casefold=False) == {("And", "and")}


def test_links_outside_the_grid_are_rejected():
    import pytest

    with pytest.raises(ValueError, match="outside"):
        extract_phrase_pairs([(3, 0)], 2, 2)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 7).flatmap(
        lambda n1: st.integers(1, 7).flatmap(
            lambda n2: st.tuples(
                st.just(n1),
                st.just(n2),
                st.sets(st.tuples(st.integers(0, n1 - 1), st.integers(0, n2 - 1)), max_size=10),
                st.integers(1, 5),
                st.integers(1, 5),
            )
        )
    )
)
def test_extraction_equals_the_literal_definition(case):
    n1, n2, links, m1, m2 = case
    assert extract_phrase_pairs(links, n1, n2, max_len=m1, max_len2=m2) == brute_force(links, n1, n2, m1, m2)
