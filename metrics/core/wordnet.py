"""WordNet 3.0 synonyms from a shipped table (no WordNet installation needed).

Kauchak & Barzilay (2006, §3) take a reference word r and a system word w as a
substitution candidate "if its members are synonyms in WordNet". This module
answers that question from ``fixtures/resources/wordnet_synonyms.tsv.gz``
(format in ``fixtures/build_wordnet_synonyms.py``, which builds it from Debian's
``wordnet-base`` through nltk). Runtime code never reads /usr/share/wordnet.

Definitions (identical to nltk's WordNet reader over the same data, which the
tests check when WordNet is installed):

* ``base_forms(w, pos)`` is nltk's ``_morphy``: if ``w`` is in WordNet's
  exception list for ``pos`` the candidates are its listed bases, else the
  forms obtained by one application of WordNet's detachment rules
  (``dogs → dog``, ``walked → walk``, ``churches → church``); ``w`` itself and
  the candidates are kept when they are WordNet lemmas of that part of speech.
* ``synonyms(w, pos)`` is the set of lower-case single-word lemmas of every
  synset of every base form of ``w`` (the synsets nltk's ``wn.synsets(w, pos)``
  returns), minus ``w`` itself. Base forms are included (``walked`` → ``walk``,
  ...), as nltk's ``lemma_names`` would give them.

Parts of speech are ``"n"``, ``"v"``, ``"a"`` (adjective satellites included)
and ``"r"``; ``pos=None`` means all four.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

__all__ = [
    "DEFAULT_TABLE",
    "POS_TAGS",
    "SynonymTable",
    "load_synonym_table",
    "default_table",
    "synonyms",
    "base_forms",
    "are_synonyms",
]

DEFAULT_TABLE = Path(__file__).resolve().parents[2] / "fixtures" / "resources" / "wordnet_synonyms.tsv.gz"
POS_TAGS: tuple[str, ...] = ("n", "v", "a", "r")

# WordNet's detachment rules (morph.c; nltk's MORPHOLOGICAL_SUBSTITUTIONS).
_SUBSTITUTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "n": (
        ("s", ""),
        ("ses", "s"),
        ("ves", "f"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
    ),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}


@dataclass(frozen=True)
class SynonymTable:
    """The parsed table: ``lemmas[pos][lemma] = synonyms`` and ``exceptions[pos][form] = bases``."""

    lemmas: dict[str, dict[str, frozenset[str]]]
    exceptions: dict[str, dict[str, tuple[str, ...]]]
    #: Hash of the table file (recorded in metric signatures).
    fingerprint: str = ""
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def _poses(self, pos: str | None) -> tuple[str, ...]:
        if pos is None:
            return POS_TAGS
        if pos == "s":
            return ("a",)
        if pos not in POS_TAGS:
            raise ValueError(f"unknown WordNet part of speech {pos!r}; use one of n, v, a, r")
        return (pos,)

    def _morphy(self, form: str, pos: str) -> list[str]:
        known = self.lemmas[pos]
        exc = self.exceptions[pos]
        if form in exc:
            forms = list(exc[form])
        else:
            forms = [form[: -len(old)] + new for old, new in _SUBSTITUTIONS[pos] if form.endswith(old)]
        out: list[str] = []
        for f in [form, *forms]:
            if f in known and f not in out:
                out.append(f)
        return out

    def base_forms(self, word: str, *, pos: str | None = None) -> frozenset[str]:
        """WordNet lemmas that ``word`` may inflect (nltk ``_morphy``; module docstring)."""
        w = word.lower()
        out: set[str] = set()
        for p in self._poses(pos):
            out.update(self._morphy(w, p))
        return frozenset(out)

    def synonyms(self, word: str, *, pos: str | None = None) -> frozenset[str]:
        """Single-word lemmas sharing a synset with a base form of ``word`` (module docstring)."""
        w = word.lower()
        key = (w, pos)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        out: set[str] = set()
        for p in self._poses(pos):
            for base in self._morphy(w, p):
                out.add(base)
                out.update(self.lemmas[p][base])
        out.discard(w)
        result = frozenset(out)
        if len(self._cache) < 500_000:
            self._cache[key] = result
        return result

    def are_synonyms(self, a: str, b: str, *, pos: str | None = None) -> bool:
        """Whether ``a`` and ``b`` (any inflection) share a synset in some part of speech.

        True when a base form of ``b`` is among the synonyms of ``a`` in one
        part of speech; ``a`` and ``b`` spelled alike are not synonyms.
        """
        a, b = a.lower(), b.lower()
        if a == b:
            return False
        for p in self._poses(pos):
            bases_b = self._morphy(b, p)
            if not bases_b:
                continue
            syn_a = self.synonyms(a, pos=p)
            if any(x in syn_a for x in bases_b):
                return True
        return False

    def __contains__(self, word: str) -> bool:
        return bool(self.base_forms(word))


def load_synonym_table(path: str | Path = DEFAULT_TABLE) -> SynonymTable:
    """Read a table written by ``fixtures/build_wordnet_synonyms.py`` (cached per path)."""
    return _load(str(Path(path).resolve()))


@lru_cache(maxsize=4)
def _load(path: str) -> SynonymTable:
    from metrics.core.base.resources import file_fingerprint

    lemmas: dict[str, dict[str, frozenset[str]]] = {p: {} for p in POS_TAGS}
    exceptions: dict[str, dict[str, tuple[str, ...]]] = {p: {} for p in POS_TAGS}
    empty: frozenset[str] = frozenset()
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 4 or parts[2] not in POS_TAGS:
                raise ValueError(f"{path}:{lineno}: not a synonym-table row")
            kind, word, pos, rest = parts
            if kind == "S":
                lemmas[pos][word] = frozenset(rest.split()) if rest else empty
            elif kind == "E":
                exceptions[pos][word] = tuple(rest.split())
            else:
                raise ValueError(f"{path}:{lineno}: unknown row kind {kind!r}")
    return SynonymTable(lemmas, exceptions, fingerprint=file_fingerprint(path))


def default_table() -> SynonymTable:
    """The shipped WordNet 3.0 table (loaded once per process)."""
    return load_synonym_table(DEFAULT_TABLE)


def synonyms(word: str, *, pos: str | None = None) -> frozenset[str]:
    """Lower-case single-word WordNet 3.0 synonyms of ``word`` (module docstring).

    >>> sorted(synonyms("difficult"))
    ['hard', 'unmanageable']
    """
    return default_table().synonyms(word, pos=pos)


def base_forms(word: str, *, pos: str | None = None) -> frozenset[str]:
    """WordNet base forms of ``word`` (nltk ``morphy`` rules and exception lists)."""
    return default_table().base_forms(word, pos=pos)


def are_synonyms(a: str, b: str, *, pos: str | None = None) -> bool:
    """Whether ``a`` and ``b`` are WordNet synonyms in some inflection (see :class:`SynonymTable`)."""
    return default_table().are_synonyms(a, b, pos=pos)
