"""The offset conversions agree with a real browser: Chromium's string indices, its grapheme
segmenter, and DOM ranges over right-to-left text."""

import pytest

from metrics.core.spans.offsets import codepoint_to_utf16, grapheme_boundaries, utf16_length, utf16_to_codepoint

pytestmark = [pytest.mark.browser]

TEXTS = [
    "Cafe\u0301 in Ha\u0300 No\u0323\u0302i",
    "The 👩‍👩‍👧 family went to 🇫🇷 by 🚄, happily 😀👍🏽.",
    "كَتَبَ الولدُ الدرسَ في المدرسة.",
    "قال Guinness إن السنة 2025 جيدة 😀",
]


@pytest.fixture(scope="module")
def js(chromium):
    page = chromium.browser.new_page()
    yield page
    page.close()


@pytest.mark.parametrize("text", TEXTS)
def test_javascript_string_indices_are_our_utf16_offsets(js, text):
    length, code_point_starts = js.evaluate(
        """t => { const out = [0]; let u = 0; for (const ch of t) { u += ch.length; out.push(u); } return [t.length, out]; }""",
        text,
    )
    assert length == utf16_length(text)
    assert code_point_starts == [codepoint_to_utf16(text, cp) for cp in range(len(text) + 1)]


@pytest.mark.parametrize("text", TEXTS)
def test_chromium_grapheme_segments_are_our_grapheme_boundaries(js, text):
    starts = js.evaluate(
        """t => [...new Intl.Segmenter("und", {granularity: "grapheme"}).segment(t)].map(s => s.index)""", text
    )
    ours = grapheme_boundaries(text)
    assert [utf16_to_codepoint(text, u) for u in starts] + [len(text)] == list(ours)


@pytest.mark.parametrize("word", ["الولدُ", "كَتَبَ", "المدرسة."])
def test_a_stored_span_selects_the_same_words_in_a_right_to_left_page(js, word):
    text = TEXTS[2]
    start = text.index(word)
    end = start + len(word)
    selected = js.evaluate(
        """([t, s, e]) => {
            document.body.innerHTML = '<p dir="rtl" lang="ar" id="c"></p>';
            const p = document.getElementById("c"); p.textContent = t;
            const r = document.createRange(); r.setStart(p.firstChild, s); r.setEnd(p.firstChild, e);
            return r.toString();
        }""",
        [text, codepoint_to_utf16(text, start), codepoint_to_utf16(text, end)],
    )
    assert selected == word
