"""Tokenization and stemming shared by every metric, the aligner and the grid.

The tokenizer is deliberately simple and documented so that a researcher can
reproduce a token index from the text alone (alignment links refer to token
indices, so the tokenizer is part of the data format):

* a *word* is a run of letters/digits, possibly joined by internal apostrophes
  (``’`` or ``'``), hyphens or periods between digits: ``God’s``, ``well-known``,
  ``3.14``;
* every other non-space character is a token by itself (punctuation, symbols);
* whitespace only separates.

Text is NFC-normalised first so that the same visible sentence always gives the
same tokens.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = [
    "TOKENIZER_VERSION",
    "tokenize",
    "token_offsets",
    "stem",
    "stem_tokens",
    "normalize",
    "has_nul",
    "has_lone_surrogate",
]

#: Recorded in metric signatures and alignment exports; bump when the rules change.
TOKENIZER_VERSION = "paraeval-tok-1"

_TOKEN_RE = re.compile(
    r"""
    [^\W_]+(?:['’\-][^\W_]+)*(?:\.[0-9]+)*   # words, with internal ' ’ - ; decimals
    | [^\w\s]                               # any single non-space symbol
    | _                                     # underscore is \w but not a letter
    """,
    re.VERBOSE,
)


def normalize(text: str) -> str:
    """Return ``text`` in Unicode NFC with runs of whitespace collapsed to one space."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def tokenize(text: str, *, lowercase: bool = False) -> list[str]:
    """Split ``text`` into tokens by the rules in the module docstring.

    >>> tokenize("In the beginning, God’s Spirit moved.")
    ['In', 'the', 'beginning', ',', 'God’s', 'Spirit', 'moved', '.']
    """
    tokens = _TOKEN_RE.findall(normalize(text))
    if lowercase:
        tokens = [t.lower() for t in tokens]
    return tokens


def token_offsets(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` code-point offsets of each token of ``text`` exactly as given.

    The same rules as :func:`tokenize` but without normalising first, so that the
    offsets index ``text`` itself (error spans are stored against the stored text); for
    a text already in :func:`normalize`'s form, ``[text[s:e] for s, e in
    token_offsets(text)] == tokenize(text)``.
    """
    return [m.span() for m in _TOKEN_RE.finditer(text)]


@lru_cache(maxsize=1)
def _stemmer():
    # Imported lazily: nltk is heavy and most callers never stem.
    from nltk.stem.porter import PorterStemmer

    # ORIGINAL_ALGORITHM is Porter (1980) as published, which is what PEM (Liu et
    # al. 2010, §4) means by "Porter-stemmed"; NLTK's default adds extensions.
    return PorterStemmer(mode=PorterStemmer.ORIGINAL_ALGORITHM)


@lru_cache(maxsize=200_000)
def stem(token: str) -> str:
    """Porter (1980) stem of a lower-cased token; punctuation is returned as is."""
    low = token.lower()
    if not any(ch.isalpha() for ch in low):
        return low
    return _stemmer().stem(low)


def stem_tokens(tokens: list[str]) -> list[str]:
    """Stem each token (see :func:`stem`)."""
    return [stem(t) for t in tokens]


def has_nul(value) -> bool:
    """Whether any string in ``value`` (a str, or parsed JSON: dicts and lists of them)
    holds a NUL character — which no text needs and PostgreSQL cannot store."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(has_nul(k) or has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_nul(v) for v in value)
    return False


_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(value) -> bool:
    """Whether any string in ``value`` (a str, or parsed JSON) holds a lone surrogate: JSON's
    ``\\ud800`` escape without its other half decodes to one, which is no character and which
    neither UTF-8 nor a database can store (a strict UTF-8 decoding never yields one)."""
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(has_lone_surrogate(k) or has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_lone_surrogate(v) for v in value)
    return False
