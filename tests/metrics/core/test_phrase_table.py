import gzip

import pytest

from metrics.core.phrase_table import (
    PhraseTable,
    build_phrase_table,
    read_moses_phrase_table,
    write_phrase_table,
)
from metrics.core.phrases import extract_phrase_pairs
from metrics.core.text import stem

COUNTS = {("hello ,", "bonjour ,"): 9, ("hello ,", "salut ,"): 1, (".", "."): 10, ("sir", "monsieur"): 5}


def test_probabilities_follow_the_joint_counts():
    t = PhraseTable.from_counts(COUNTS)
    assert t.count_e("hello ,") == 10
    assert t.prob_e("hello ,") == pytest.approx(10 / 25)
    assert t.translations("hello ,") == [("bonjour ,", pytest.approx(0.9)), ("salut ,", pytest.approx(0.1))]
    assert sum(p for _, p in t.translations("hello ,")) == pytest.approx(1.0)
    assert t.translations("querrien") == [] and t.count_e("querrien") == 0 and t.prob_e("querrien") == 0
    assert len(t) == 4 and t.n_english == 3 and "sir" in t and t.max_english_len() == 2


@pytest.mark.parametrize("suffix", [".tsv", ".tsv.gz", ".tsv.xz"])
def test_write_then_load_round_trips(tmp_path, suffix):
    path = write_phrase_table(COUNTS, tmp_path / f"t{suffix}")
    t = PhraseTable.load(path)
    assert {(e, f): round(p * t.count_e(e)) for e in t.english for f, p in t.translations(e)} == COUNTS
    assert len(t.sha256) == 12


def test_load_accepts_unsorted_files_and_words_pandas_would_read_as_missing(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text('english\tpivot\tcount\nnull\tnulo\t2\nnan\t"\t1.5\na\tNA\t3\n', encoding="utf-8")
    t = PhraseTable.load(path)
    assert t.translations("nan") == [('"', 1.0)]
    assert t.count_e("null") == 2 and t.translations("a") == [("NA", 1.0)]


@pytest.mark.parametrize(
    "body, message",
    [
        ("english\tpivot\n", "header"),
        ("english\tpivot\tcount\na\tb\t0\n", "positive"),
        ("english\tpivot\tcount\na\tb\t1\na\tb\t2\n", "twice"),
        ("english\tpivot\tcount\na\tb\tmany\n", "not a phrase table"),
        ("english\tpivot\tcount\n", "no entries"),
    ],
)
def test_load_rejects_bad_files_with_the_file_name(tmp_path, body, message):
    path = tmp_path / "bad.tsv"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as err:
        PhraseTable.load(path)
    assert "bad.tsv" in str(err.value)


def test_builder_counts_each_consistent_pair_from_the_shared_extractor():
    english = ["The", "houses", "fell"]
    pivot = ["Las", "casas", "cayeron"]
    links = {(0, 0), (1, 1), (2, 2)}
    counts = build_phrase_table([(english, pivot, links), (english, pivot, links)], max_len_english=2)
    expected = {}
    for p in extract_phrase_pairs(links, 3, 3, max_len=2, max_len2=4):
        e = " ".join(stem(w) for w in english[p.start1 : p.end1])
        f = " ".join(w.lower() for w in pivot[p.start2 : p.end2])
        expected[(e, f)] = 2
    assert counts == expected
    assert counts[("hous", "casas")] == 2  # English stemmed, pivot lower-cased
    assert ("the hous fell", "las casas cayeron") not in counts  # longer than max_len_english


def test_builder_can_keep_english_unstemmed_but_lower_cased():
    counts = build_phrase_table([(["Houses"], ["Casas"], [(0, 0)])], stem_english=False, lowercase_pivot=False)
    assert counts == {("houses", "Casas"): 1}


def test_moses_import_uses_the_joint_count_of_the_counts_field(tmp_path):
    path = tmp_path / "phrase-table.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("the houses ||| las casas ||| 0.5 0.2 0.6 0.3 ||| 0-0 1-1 ||| 10 8 4\n")
        fh.write("the house ||| las casas ||| 0.5 0.2 0.6 0.3 ||| 0-0 1-1 ||| 10 3 2\n")
        fh.write("houses ||| casas ||| 0.5 0.2 0.6 0.3 ||| 0-0 ||| 12 9 7 \n")
    counts = read_moses_phrase_table(path)
    # "houses" and "house" stem alike: their joint counts add up.
    assert counts == {("the hous", "las casas"): 6, ("hous", "casas"): 7}
    rev = read_moses_phrase_table(path, english_side="target", stem_english=False)
    assert rev[("casas", "houses")] == 7


def test_moses_import_refuses_a_table_without_counts(tmp_path):
    path = tmp_path / "pt"
    path.write_text("a ||| b ||| 0.5 0.5 0.5 0.5 ||| 0-0\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"pt:1: no counts field"):
        read_moses_phrase_table(path)


def test_the_shipped_bible_table_is_a_phrase_table_resource():
    import lzma
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "fixtures/resources/phrase_table_bible_en_es.tsv.xz"
    with lzma.open(path, "rt", encoding="utf-8") as fh:
        head = [next(fh).rstrip("\n").split("\t") for _ in range(1000)]
    assert head[0] == ["english", "pivot", "count"]
    rows = head[1:]
    assert all(len(r) == 3 and float(r[2]) > 0 for r in rows)
    assert rows == sorted(rows, key=lambda r: (r[0], r[1]))  # sorted: loads without a sort
