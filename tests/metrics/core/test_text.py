from metrics.core.text import normalize, stem, tokenize


def test_tokenizer_keeps_internal_apostrophes_hyphens_and_decimals():
    assert tokenize("God’s well-known 3.14 isn't") == ["God’s", "well-known", "3.14", "isn't"]


def test_tokenizer_splits_every_punctuation_mark():
    assert tokenize('Yes, (he) said: "go!"') == ["Yes", ",", "(", "he", ")", "said", ":", '"', "go", "!", '"']


def test_tokenizer_normalises_unicode_and_whitespace():
    composed = "caf\u00e9"
    decomposed = "cafe\u0301"
    assert tokenize(decomposed) == [composed]
    assert normalize("  a \t b\n") == "a b"
    assert tokenize("") == []


def test_lowercase_option():
    assert tokenize("The LORD", lowercase=True) == ["the", "lord"]


def test_porter_stems_words_and_leaves_punctuation():
    assert stem("Running") == "run"
    assert stem("generalizations") == "gener"
    assert stem(",") == ","


def test_has_nul_looks_through_parsed_json():
    from metrics.core.text import has_nul

    assert has_nul("a\x00") and has_nul({"k": ["x", {"y": "\x00"}]}) and has_nul({"\x00": 1})
    assert not has_nul({"k": ["x", 1, None, {"y": "z"}]})
