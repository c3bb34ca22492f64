"""Span offsets survive Unicode: combining marks, emoji (UTF-16 in browsers), right-to-left Arabic."""

import json
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from metrics.core.spans.offsets import (
    codepoint_to_utf16,
    grapheme_boundaries,
    snap_to_graphemes,
    span_problem,
    utf16_length,
    utf16_to_codepoint,
)
from metrics.core.spans.words import word_offsets, word_texts
from metrics.core.text import token_offsets, tokenize

COMBINING = "Cafe\u0301 in Ha\u0300 No\u0323\u0302i"  # decomposed accents (NFD), as some keyboards send
EMOJI = "The 👩‍👩‍👧 family went to 🇫🇷 by 🚄, happily 😀."
ARABIC = "كَتَبَ الولدُ الدرسَ في المدرسة."
MIXED = "قال Guinness إن السنة 2025 جيدة"


def _js_index(text: str, cp: int) -> int:
    """What JavaScript's string index of code point ``cp`` is: UTF-16 units before it."""
    return len(text[:cp].encode("utf-16-le")) // 2


@pytest.mark.parametrize("text", [COMBINING, EMOJI, ARABIC, MIXED])
def test_utf16_offsets_convert_both_ways_like_javascript(text):
    assert utf16_length(text) == len(text.encode("utf-16-le")) // 2
    for cp in range(len(text) + 1):
        u = codepoint_to_utf16(text, cp)
        assert u == _js_index(text, cp)
        assert utf16_to_codepoint(text, u) == cp


def test_an_offset_inside_a_surrogate_pair_is_rejected_not_rounded():
    text = "ok 😀 ok"
    inside = codepoint_to_utf16(text, 3) + 1  # between the two halves of U+1F600
    with pytest.raises(ValueError, match="surrogate pair"):
        utf16_to_codepoint(text, inside)
    with pytest.raises(ValueError, match="outside"):
        utf16_to_codepoint(text, utf16_length(text) + 1)


@pytest.mark.parametrize(
    "text, word",
    [
        (COMBINING, "Cafe\u0301"),
        (EMOJI, "👩‍👩‍👧"),
        (EMOJI, "🇫🇷"),
        (ARABIC, "الولدُ"),
        (ARABIC, "كَتَبَ"),
    ],
)
def test_a_span_round_trips_through_json_and_the_browser_unchanged(text, word):
    start = text.index(word)
    end = start + len(word)
    assert span_problem(text, start, end) is None
    # stored as code points, sent to the page in UTF-16, read back, through JSON both ways
    sent = json.loads(json.dumps({"start": codepoint_to_utf16(text, start), "end": codepoint_to_utf16(text, end)}))
    back = (utf16_to_codepoint(text, sent["start"]), utf16_to_codepoint(text, sent["end"]))
    assert text[back[0] : back[1]] == word
    # and the same characters through UTF-8 (a JSONL export) and back
    assert json.loads(json.dumps(text, ensure_ascii=False).encode("utf-8").decode("utf-8"))[start:end] == word


def test_a_span_that_splits_a_combining_mark_or_an_emoji_is_refused_and_can_be_snapped():
    e_acute_end = COMBINING.index("e\u0301") + 1  # between "e" and its accent
    problem = span_problem(COMBINING, 0, e_acute_end)
    assert problem and "splits" in problem
    assert snap_to_graphemes(COMBINING, 0, e_acute_end) == (0, e_acute_end + 1)
    family = EMOJI.index("👩")
    assert span_problem(EMOJI, family, family + 1)  # one woman of the ZWJ family
    assert snap_to_graphemes(EMOJI, family, family + 1) == (family, family + len("👩‍👩‍👧"))
    harakah = ARABIC.index("كَ") + 1  # between kaf and its fatha
    assert span_problem(ARABIC, 0, harakah)
    assert snap_to_graphemes(ARABIC, 0, harakah) == (0, 2)


def test_spans_are_in_logical_order_in_right_to_left_text():
    # the first code point of an Arabic sentence is its first (rightmost) letter on screen;
    # offsets follow reading order, whatever the bidirectional display does
    start = MIXED.index("Guinness")
    assert MIXED[start : start + 8] == "Guinness"
    assert unicodedata.bidirectional(MIXED[0]) == "AL" and MIXED[:3] == "قال"
    words = [MIXED[s:e] for s, e in word_offsets(MIXED)]
    assert words == ["قال", "Guinness", "إن", "السنة", "2025", "جيدة"]


def test_word_units_keep_combining_marks_in_their_word():
    assert [ARABIC[s:e] for s, e in word_offsets(ARABIC)] == ["كَتَبَ", "الولدُ", "الدرسَ", "في", "المدرسة", "."]
    assert [COMBINING[s:e] for s, e in word_offsets(COMBINING)] == ["Cafe\u0301", "in", "Ha\u0300", "No\u0323\u0302i"]
    for text in (ARABIC, COMBINING, EMOJI):
        bounds = set(grapheme_boundaries(text))
        assert all(s in bounds and e in bounds for s, e in word_offsets(text))


def test_without_marks_word_units_are_the_tokenizers_tokens():
    text = "In the beginning, God’s Spirit moved (well-known) 3.14 times."
    assert [text[s:e] for s, e in token_offsets(text)] == tokenize(text)
    assert word_offsets(text) == tuple(token_offsets(text))


@given(st.text(min_size=0, max_size=40))
def test_conversion_round_trips_on_any_text(text):
    for cp in range(len(text) + 1):
        assert utf16_to_codepoint(text, codepoint_to_utf16(text, cp)) == cp
    bounds = grapheme_boundaries(text)
    assert bounds[0] == 0 and bounds[-1] == len(text)


CLUSTERS = "Mi 👩\u200d👩\u200d👧 fue a 🇪🇸 con cafe\u0301 👍🏽 ❤️ كَتَبَ الوَلَدُ."


def test_word_units_keep_every_grapheme_cluster_whole():
    assert word_texts(CLUSTERS) == [
        "Mi",
        "👩\u200d👩\u200d👧",
        "fue",
        "a",
        "🇪🇸",
        "con",
        "cafe\u0301",
        "👍🏽",
        "❤️",
        "كَتَبَ",
        "الوَلَدُ",
        ".",
    ]


def test_a_joiner_after_a_space_is_a_word_without_the_space_on_cluster_boundaries():
    text = "👩 \u200d 👩 \u0301x"
    bounds = set(grapheme_boundaries(text))
    assert all(s in bounds and e in bounds for s, e in word_offsets(text))
    assert word_texts(text) == ["👩", "\u200d", "👩", "\u0301", "x"]
    assert all(w and not any(ch.isspace() for ch in w) for w in word_texts(text))
