"""WordNet synonyms from the shipped table, checked against nltk where WordNet is installed."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from metrics.core.wordnet import DEFAULT_TABLE, are_synonyms, base_forms, default_table, load_synonym_table, synonyms

WORDNET_DIR = Path("/usr/share/wordnet")


def test_table_is_shipped_and_compact():
    assert DEFAULT_TABLE.exists()
    assert DEFAULT_TABLE.stat().st_size < 5_000_000


def test_synonyms_share_a_synset_and_exclude_the_word():
    assert {"hard", "unmanageable"} == synonyms("difficult")
    assert "difficult" in synonyms("hard")
    assert "hard" not in synonyms("hard")
    assert "reply" in synonyms("Answer")  # lower-case lookup


def test_pos_restricts_the_synsets():
    assert "chase" in synonyms("dog", pos="v")
    assert "chase" not in synonyms("dog", pos="n")
    assert "hound" in synonyms("dog", pos="n")
    with pytest.raises(ValueError, match="part of speech"):
        synonyms("dog", pos="x")


def test_inflected_words_find_the_synonyms_of_their_base_forms():
    assert base_forms("geese") == {"goose"}  # exception list
    assert base_forms("walked") == {"walk"}  # detachment rule
    assert base_forms("churches") == {"church"}
    assert "reply" in synonyms("answers")
    assert are_synonyms("answered", "replied")


def test_are_synonyms_matches_the_papers_example():
    # Kauchak & Barzilay (2006), Table 2: (difficult, hard) and (home, place).
    assert are_synonyms("difficult", "hard")
    assert are_synonyms("home", "place")
    assert not are_synonyms("difficult", "difficult")
    assert not are_synonyms("dog", "carburetor")


def test_unknown_words_have_no_synonyms():
    assert synonyms("qwzxv") == frozenset()
    assert "qwzxv" not in default_table()


def test_malformed_table_is_rejected(tmp_path):
    bad = tmp_path / "bad.tsv.gz"
    with gzip.open(bad, "wt") as fh:
        fh.write("S\tdog\n")
    with pytest.raises(ValueError, match=":1: not a synonym-table row"):
        load_synonym_table(bad)


@pytest.mark.skipif(not (WORDNET_DIR / "data.noun").exists(), reason="wordnet-base not installed")
def test_table_agrees_with_nltk_over_wordnet(tmp_path):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "fixtures"))
    try:
        from build_wordnet_synonyms import open_wordnet
    finally:
        sys.path.pop(0)
    wn = open_wordnet(WORDNET_DIR, tmp_path)
    rng = random.Random(7)
    lemmas = [w for w in wn._lemma_pos_offset_map if "_" not in w]
    words = rng.sample(lemmas, 300) + ["walked", "geese", "running", "better", "churches", "wolves", "was"]
    for w in words:
        for pos in ("n", "v", "a", "r", None):
            expected = {name.lower() for s in wn.synsets(w, pos) for name in s.lemma_names() if "_" not in name} - {w}
            assert synonyms(w, pos=pos) == expected, (w, pos)
