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
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from metrics.core.text import token_offsets

from .offsets import snap_to_graphemes

__all__ = ["word_offsets"]


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
