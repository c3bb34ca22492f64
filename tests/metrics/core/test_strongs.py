import json
import lzma

import pytest

from metrics.core.strongs import DEFAULT_IGNORED_IDS, load_verses, strongs_links, tag_tokens
from metrics.core.text import tokenize

# Genesis 1:1 exactly as in the bible corpus (verses.jsonl.xz).
KJV = "In the beginning God created the heaven and the earth."
KJV_TAGGED = [
    ["In the ", []],
    ["beginning", ["H7225"]],
    ["God", ["H0430"]],
    ["created", ["H1254"]],
    [" the ", []],
    ["heaven", ["H8064"]],
    ["and", ["H0853"]],
    [" the ", []],
    ["earth", ["H0776"]],
    [".", []],
]
WEB = "In the beginning, God created the heavens and the earth."
WEB_TAGGED = [
    ["In", ["H0430"]],
    ["the", ["H0853"]],
    ["beginning", ["H7225"]],
    [", ", []],
    ["God", ["H0430"]],
    ["created", ["H1254"]],
    ["the", ["H0853"]],
    ["heavens", ["H8064"]],
    ["and", ["H0430"]],
    ["the", ["H0853"]],
    ["earth", ["H0776"]],
    [".", []],
]
RV = "EN el principio crió Dios los cielos y la tierra."
RV_TAGGED = [
    ["EN el principio", ["H7225"]],
    ["crió", ["H1254"]],
    ["Dios", ["H0430"]],
    ["los cielos", ["H8064"]],
    ["y la tierra", ["H0776"]],
    [".", []],
]


def test_tag_tokens_gives_each_token_its_spans_ids():
    tokens, ids = tag_tokens(RV_TAGGED)
    assert tokens == tokenize(RV)
    assert ids[tokens.index("cielos")] == frozenset({"H8064"})
    assert ids[tokens.index("los")] == frozenset({"H8064"})
    assert ids[-1] == frozenset()


def test_tag_tokens_without_text_splits_adjacent_tagged_spans_that_have_no_space():
    tokens, _ = tag_tokens(KJV_TAGGED)
    assert tokens == tokenize(KJV)  # "beginning" + "God" stay two tokens


def test_tag_tokens_with_text_follows_the_plain_texts_tokens_when_a_tag_splits_a_word():
    # Mark 4:24 (KJV) tags "give" and "n" separately; the plain text has "given".
    tagged = [["unto you that hear shall more be ", []], ["give", ["G4369"]], ["n", ["G4369"]], [".", []]]
    text = "unto you that hear shall more be given."
    assert "n" in tag_tokens(tagged)[0]
    tokens, ids = tag_tokens(tagged, text=text)
    assert tokens == tokenize(text)
    assert ids[tokens.index("given")] == frozenset({"G4369"})


def test_tag_tokens_with_text_unions_ids_of_a_token_built_from_several_spans():
    tokens, ids = tag_tokens([["ab", ["X1"]], ["cd", ["X2"]]], text="abcd")
    assert tokens == ["abcd"] and ids == [frozenset({"X1", "X2"})]


def test_tag_tokens_rejects_text_with_other_characters():
    with pytest.raises(ValueError, match="disagree"):
        tag_tokens(RV_TAGGED, text="EN el principio creó Dios los cielos y la tierra.")


def test_links_connect_tokens_sharing_an_id_and_skip_the_object_marker():
    t1, g1 = tag_tokens(KJV_TAGGED, text=KJV)
    t2, g2 = tag_tokens(RV_TAGGED, text=RV)
    links = strongs_links(g1, g2)
    named = {(t1[i], t2[j]) for i, j in links}
    assert ("God", "Dios") in named
    assert ("heaven", "los") in named and ("heaven", "cielos") in named
    assert ("earth", "tierra") in named and ("earth", "y") in named
    assert "H0853" in DEFAULT_IGNORED_IDS
    assert not any(t1[i] == "and" for i, _ in links)  # KJV "and" carries only H0853


def test_links_pair_a_repeated_noisy_id_with_the_nearest_occurrence():
    # WEB tags "In", "God" and "and" with H0430; the KJV has it once, on "God".
    t1, g1 = tag_tokens(KJV_TAGGED, text=KJV)
    t2, g2 = tag_tokens(WEB_TAGGED, text=WEB)
    god = {(t1[i], t2[j]) for i, j in strongs_links(g1, g2) if "H0430" in g1[i]}
    assert god == {("God", "God")}


def test_links_pair_equal_numbers_of_occurrences_in_order():
    g1 = [frozenset({"A"}), frozenset(), frozenset({"A"})]
    g2 = [frozenset({"A"}), frozenset({"A"}), frozenset(), frozenset({"A"})]
    # runs on side 2: [0,2) and [3,4): two runs each side → r-th with r-th
    assert strongs_links(g1, g2) == {(0, 0), (0, 1), (2, 3)}


def test_ignored_ids_can_be_overridden():
    g1 = [frozenset({"H0853"})]
    g2 = [frozenset({"H0853"})]
    assert strongs_links(g1, g2) == set()
    assert strongs_links(g1, g2, ignored_ids=()) == {(0, 0)}


def test_load_verses_reads_xz_jsonl(tmp_path):
    path = tmp_path / "v.jsonl.xz"
    with lzma.open(path, "wt", encoding="utf-8") as fh:
        fh.write(json.dumps({"ref": "Genesis 1:1", "kjv": KJV, "kjv_tagged": KJV_TAGGED}) + "\n\n")
        fh.write(json.dumps({"ref": "Genesis 1:2", "kjv": "x", "kjv_tagged": []}) + "\n")
    refs = [v["ref"] for v in load_verses(path)]
    assert refs == ["Genesis 1:1", "Genesis 1:2"]


def test_load_verses_names_the_bad_line(tmp_path):
    path = tmp_path / "v.jsonl"
    path.write_text('{"ref": "a"}\nnot json\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"v.jsonl:2"):
        list(load_verses(path))
