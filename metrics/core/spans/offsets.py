"""Span offsets that survive Unicode: code points in storage, UTF-16 in the browser.

**Storage.** A span is ``[start, end)`` in *code points* of the stored text — Python
``str`` indices: ``text[start:end]`` is the span. Code points do not depend on an
encoding (UTF-8 bytes would, and so would UTF-16 units), so a span stored once means the
same characters in a database, a JSONL export and a Python notebook.

**Browsers.** JavaScript strings index UTF-16 code units: a code point above U+FFFF (most
emoji, some CJK, mathematical letters) is two units, a surrogate pair. Appraise's ESA page
(``split("")``) and every ``Range``/``selectionStart`` in a browser count these units. Convert
at the page's edge with :func:`utf16_to_codepoint` (what a browser sends) and
:func:`codepoint_to_utf16` (what a browser is sent); an offset inside a surrogate pair is
rejected, never rounded silently.

**Grapheme clusters.** What a reader sees as one character may be several code points: a
letter with combining marks (``e`` + U+0301, Arabic letters with harakat), an emoji with a
skin tone or a ZWJ family (👩‍👩‍👧 is 5 code points), a flag (two regional indicators). A span
boundary inside a cluster marks half a character; :func:`snap_to_graphemes` widens a span to
whole clusters (extended grapheme clusters of Unicode UAX #29, from the ``regex`` module's
``\\X``) and :func:`span_problem` reports such a split. Text is not re-normalised: NFC and
NFD spellings of the same word have different lengths, so offsets always refer to the text
exactly as stored (paraeval serves that same string to the page).

**Right-to-left.** Offsets are in *logical* (storage, reading) order, never visual order:
in Arabic or Hebrew the first code point is the rightmost on screen, and a span
``[start, end)`` is the same characters whatever the bidirectional algorithm does when
displaying them; a mixed Arabic–English sentence keeps one logical sequence. Pages must
therefore compute offsets from the DOM text (logical), never from pixel positions.
"""

from __future__ import annotations

from functools import lru_cache

import regex

__all__ = [
    "codepoint_to_utf16",
    "grapheme_boundaries",
    "snap_to_graphemes",
    "span_problem",
    "utf16_length",
    "utf16_to_codepoint",
]

_GRAPHEME = regex.compile(r"\X")


def _units(ch: str) -> int:
    return 2 if ord(ch) > 0xFFFF else 1


def utf16_length(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (JavaScript's ``text.length``)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def codepoint_to_utf16(text: str, offset: int) -> int:
    """The UTF-16 code-unit offset of code-point ``offset`` (0 ≤ offset ≤ len(text)).

    offset_16 = offset + #{code points above U+FFFF before it}. Raises ``ValueError`` for an
    offset out of range.
    """
    if not 0 <= offset <= len(text):
        raise ValueError(f"offset {offset} is outside the text (0–{len(text)} code points)")
    return offset + sum(1 for ch in text[:offset] if ord(ch) > 0xFFFF)


def utf16_to_codepoint(text: str, offset: int) -> int:
    """The code-point offset of UTF-16 offset ``offset`` (the inverse of :func:`codepoint_to_utf16`).

    Raises ``ValueError`` for an offset out of range or between the two halves of a
    surrogate pair (a browser selection never ends there; a file that says so is wrong).
    """
    if not 0 <= offset <= utf16_length(text):
        raise ValueError(f"UTF-16 offset {offset} is outside the text (0–{utf16_length(text)} code units)")
    units = 0
    for i, ch in enumerate(text):
        if units == offset:
            return i
        units += _units(ch)
        if units > offset:
            raise ValueError(f"UTF-16 offset {offset} falls inside the surrogate pair of {ch!r} (code point {i})")
    return len(text)


@lru_cache(maxsize=4096)
def grapheme_boundaries(text: str) -> tuple[int, ...]:
    """Every code-point offset where an extended grapheme cluster starts or ends (0 and len included)."""
    return (0, *(m.end() for m in _GRAPHEME.finditer(text)))


def snap_to_graphemes(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen ``[start, end)`` to whole grapheme clusters: start down, end up to a boundary."""
    bounds = grapheme_boundaries(text)
    lo = max(b for b in bounds if b <= start)
    hi = min(b for b in bounds if b >= end)
    return lo, hi


def span_problem(text: str, start: object, end: object) -> str | None:
    """What is wrong with span ``[start, end)`` of ``text``, or None when it is valid.

    Valid: integers with 0 ≤ start < end ≤ len(text), both on grapheme-cluster boundaries.
    """
    if isinstance(start, bool) or isinstance(end, bool) or not isinstance(start, int) or not isinstance(end, int):
        return "start and end must be whole numbers"
    if not 0 <= start < end <= len(text):
        return f"the span [{start}, {end}) is not inside the text (0–{len(text)} characters) or is empty"
    bounds = set(grapheme_boundaries(text))
    for name, at in (("start", start), ("end", end)):
        if at not in bounds:
            lo, hi = snap_to_graphemes(text, at, at)
            return (
                f"{name} {at} splits the character {text[lo:hi]!r} (code points {lo}–{hi}); "
                "a span starts and ends between whole characters"
            )
    return None
