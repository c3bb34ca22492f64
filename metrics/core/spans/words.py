"""Word units of a text for span work: paraeval's tokens, with combining marks kept in their word.

Token-level span agreement and the aligner's pre-filled spans count *words*. They start
from :func:`metrics.core.text.token_offsets` (paraeval's tokenizer, the one alignment links
refer to), whose word pattern is letters and digits: a combining mark (Unicode category
M: Arabic harakat such as fatha U+064E, Devanagari vowel signs, a decomposed accent) is not
one of them, so ``كَتَبَ`` comes out as six tokens. Here a token made only of marks is
joined to the token it touches on the left, and a word token that touches such a joined
token continues it, so ``كَتَبَ`` is one word unit; every unit then starts and ends on a
grapheme-cluster boundary (:func:`metrics.core.spans.offsets.snap_to_graphemes`).
Texts without combining marks get exactly the tokenizer's tokens.

A grapheme cluster may begin with a space: a zero-width joiner or a mark written after a
space (``"👩 \u200d👧"``) joins the space by UAX #29, so its unit starts with that space
(its offsets stay on cluster boundaries, as a span's must). :func:`word_texts` gives each
unit's text without whitespace, which is what the aligner and the unigram controls read as
a token (an :class:`~metrics.core.alignment.model.Alignment` token has no space).

Why not :func:`metrics.core.text.tokenize` itself: it is part of the data format (alignment
links refer to its token indices; ``TOKENIZER_VERSION`` is in every metric signature), so
metric values and stored alignments keep its rules; only span work, the aligner's proposals
and the unigram controls (:mod:`metrics.core.controls`) use these whole-cluster units.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from metrics.core.text import token_offsets

from .offsets import snap_to_graphemes

__all__ = ["word_offsets", "word_texts"]


def _marks_only(s: str) -> bool:
    return bool(s) and all(unicodedata.category(ch).startswith("M") for ch in s)


def _wordy(s: str) -> bool:
    return any(ch.isalnum() for ch in s)


@lru_cache(maxsize=4096)
def word_offsets(text: str) -> tuple[tuple[int, int], ...]:
    """``(start, end)`` code-point offsets of the word units of ``text`` (the module docstring)."""
    units: list[list[int]] = []
    joined_mark = False  # the last unit ends with a mark that was joined to it
    for start, end in token_offsets(text):
        piece = text[start:end]
        if units and units[-1][1] == start and (_marks_only(piece) or (joined_mark and _wordy(piece))):
            units[-1][1] = end
            joined_mark = _marks_only(piece) or joined_mark
            continue
        units.append([start, end])
        joined_mark = False
    out: list[tuple[int, int]] = []
    for start, end in units:
        lo, hi = snap_to_graphemes(text, start, end)
        if out and lo < out[-1][1]:
            out[-1] = (out[-1][0], max(hi, out[-1][1]))
        else:
            out.append((lo, hi))
    return tuple(out)


def word_texts(text: str) -> list[str]:
    """The text of each word unit of ``text`` (:func:`word_offsets`), whitespace removed.

    A ZWJ sequence (👩‍👩‍👧), a flag (🇪🇸), an emoji with a skin tone or a variation
    selector, a letter with combining marks (``e`` + U+0301, Arabic with harakat) is one
    word, never split; no word is empty or holds a space.
    """
    return ["".join(text[s:e].split()) for s, e in word_offsets(text)]
