"""A monolingual word aligner for paraphrase pairs (pre-fills the alignment grid).

ParaMetric's annotators corrected automatic alignments rather than starting
from an empty grid (Callison-Burch et al. 2008, §3); this aligner is paraeval's
automatic starting point, and one of the "systems" whose AlignPrec/AlignRecall
can be measured. It is a lexical matcher with a positional prior, in the spirit
of the lexical components of monolingual aligners such as Sultan, Bethard &
Sumner (2014), kept small, deterministic and documented.

Algorithm (every number is a keyword parameter of :func:`align`):

1. **Lexical similarity** ``sim(i, j)`` of token i of sentence 1 and token j of
   sentence 2, the first rule that applies:

   ============================================  ======  ========
   rule                                          sim     link
   ============================================  ======  ========
   punctuation (no letter or digit) on a side    1.0 if identical, else no link
   identical                                     1.0     sure
   identical after case-folding                  0.95    sure
   same modern form (:data:`ARCHAIC_FORMS`;      0.9     sure
   "thou" ~ "you", "saith" ~ "says"; a
   ``n’t`` contraction counts as "not")
   one side a function word                      no link
   a shared lemma key: same Porter stem, also    0.85    sure
   of the modern form, of KJV ``-eth``/``-est``
   verbs without the ending, and of WordNet
   base forms ("found" ~ "findeth")
   WordNet synonyms (``use_wordnet``)            0.7     possible
   embedding cosine ≥ ``embedding_threshold``    0.4–0.7 possible
   ============================================  ======  ========

   The embedding similarity maps cosine c ∈ [threshold, 1] linearly onto
   [0.4, 0.7], so it never outranks a synonym or a stem match.
2. **Positional prior**: ``d(i, j) = |(i + ½)/n1 − (j + ½)/n2|``, the distance of
   the two tokens' relative positions, and ``ctx(i, j)`` = the share of the two
   diagonal neighbours (i−1, j−1) and (i+1, j+1) whose similarity is at stem
   level or better (it tells which of two "the"s goes with which). The score is
   ``sim · (1 − position_weight · d) + context_weight · ctx``.
3. **Function words and punctuation** (:data:`FUNCTION_WORDS`, very frequent
   words that occur several times per sentence) are linked only when positions
   agree: ``d ≤ function_word_window`` or ``ctx > 0``.
4. **One-to-one**: the links are the maximum-score matching of the score matrix
   (Hungarian algorithm, ``scipy.optimize.linear_sum_assignment``), keeping
   matched cells with score ≥ ``min_score``. Manual alignments may be
   one-to-many; the aligner deliberately proposes the one-to-one core that
   annotators were asked to prefer (ParaMetric §3) and leaves blocks to them.

Exact, case-folded and stem matches become *sure* links; WordNet and embedding
matches *possible* ones (the meaning is close, the word is not the same).
The result depends only on the tokens and parameters (no randomness).
Embeddings are never loaded here: pass an object with ``vector(word)`` (or
``similarity(a, b)``) and ``word in embeddings``, such as
``metrics.core.embeddings.load_glove()``; words are looked up lower-cased.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol

import numpy as np

from metrics.core.alignment.model import Alignment
from metrics.core.text import stem

__all__ = ["ARCHAIC_FORMS", "FUNCTION_WORDS", "Embeddings", "align", "lexical_similarity"]

#: Very frequent English function words (the top of any frequency list, plus the
#: early-modern forms of the KJV): linked only to the same word, and only where
#: positions agree, because they recur within a sentence.
FUNCTION_WORDS: frozenset[str] = frozenset(
    """a an the and or but nor so for of to in on at by with from into unto upon as
    that this these those which who whom whose what than then there here
    is are was were be been being am has have had do does did doth hath shall
    should will would may might must can could not no
    i me my mine we us our you your ye thee thou thy thine he him his she her
    it its they them their
    if when while because also even all any
    s t""".split()
)

SURE_SIM = 0.85  # similarity at or above which a match is lexical (sure)


class Embeddings(Protocol):
    """What :func:`align` needs from word vectors (``metrics.core.embeddings``)."""

    def __contains__(self, word: str) -> bool: ...

    def similarity(self, a: str, b: str) -> float: ...


def _is_punct(token: str) -> bool:
    return not any(ch.isalnum() for ch in token)


#: Early-modern English forms (the KJV's) and the modern word they are compared as.
#: Function words among them may then link to their modern form ("thou" ~ "you").
ARCHAIC_FORMS: dict[str, str] = {
    "thou": "you",
    "thee": "you",
    "ye": "you",
    "thy": "your",
    "thine": "your",
    "saith": "says",
    "sayest": "say",
    "hath": "has",
    "hast": "have",
    "doth": "does",
    "dost": "do",
    "doeth": "does",
    "didst": "did",
    "shalt": "shall",
    "wilt": "will",
    "canst": "can",
    "wast": "was",
    "spake": "speak",
    "unto": "to",
    "whence": "where",
    "hither": "here",
    "thither": "there",
    "whosoever": "whoever",
    "whatsoever": "whatever",
}


def _modern(low: str) -> str:
    """The modern form a lower-cased token is compared as ("thou" → "you", "didn’t" → "not")."""
    if low.endswith(("n’t", "n't")) and len(low) > 3:
        return "not"  # the negation carries the link; "do" of "don’t" rarely has a partner
    return ARCHAIC_FORMS.get(low, low)


@lru_cache(maxsize=200_000)
def _lemma_keys(low: str, use_wordnet: bool) -> frozenset[str]:
    """Porter stems of every form a lower-cased content word may be a variant of.

    The word itself; its modern form (:data:`ARCHAIC_FORMS`); without a KJV verb
    ending, "believeth"/"believest" → "believ", "believe", "cometh" → "come" (a
    3-letter base only with an added "e", so "forest" does not become "for");
    without a possessive "’s"; and, with WordNet, its WordNet base forms
    ("found" → "find", "said" → "say"), which tie irregular inflections together.
    """
    forms = {low, _modern(low)}
    if low.endswith(("’s", "'s")) and len(low) > 2:
        forms.add(low[:-2])  # the possessive: "God’s" ~ "God"
    for ending in ("eth", "est"):
        base = low[: -len(ending)]
        if low.endswith(ending) and len(base) >= 3:
            if len(base) >= 4:
                forms.add(base)
            forms.add(base + "e")  # "cometh" → "come"
    if use_wordnet:
        from metrics.core.wordnet import base_forms

        forms |= base_forms(low)
    return frozenset(stem(f) for f in forms)


@lru_cache(maxsize=500_000)
def _lexical(a: str, b: str, use_wordnet: bool) -> tuple[float, bool]:
    """Rows of the module table up to WordNet synonyms (embeddings come separately)."""
    pa, pb = _is_punct(a), _is_punct(b)
    if pa or pb:
        return (1.0, True) if a == b else (0.0, False)
    if a == b:
        return 1.0, True
    la, lb = a.lower(), b.lower()
    if la == lb:
        return 0.95, True
    if _modern(la) == _modern(lb):
        return 0.9, True
    if la in FUNCTION_WORDS or lb in FUNCTION_WORDS:
        return 0.0, False
    if _lemma_keys(la, use_wordnet) & _lemma_keys(lb, use_wordnet):
        return SURE_SIM, True
    if use_wordnet:
        from metrics.core.wordnet import are_synonyms

        if are_synonyms(la, lb):
            return 0.7, False
    return 0.0, False


def _content(a: str) -> bool:
    return not _is_punct(a) and a.lower() not in FUNCTION_WORDS


def lexical_similarity(
    a: str,
    b: str,
    *,
    use_wordnet: bool = True,
    embeddings: Embeddings | None = None,
    embedding_threshold: float = 0.6,
    cosine: float | None = None,
) -> tuple[float, bool]:
    """``(sim, sure)`` of two tokens by the table in the module docstring; ``(0.0, False)`` for none.

    ``cosine`` may carry a precomputed embedding cosine of ``a`` and ``b``
    (lower-cased); otherwise ``embeddings.similarity`` is asked when both words
    are content words with vectors.
    """
    sim, sure = _lexical(a, b, use_wordnet)
    if sim > 0 or not (_content(a) and _content(b)):
        return sim, sure
    la, lb = a.lower(), b.lower()
    if cosine is None and embeddings is not None and la in embeddings and lb in embeddings:
        cosine = float(embeddings.similarity(la, lb))
    if cosine is not None and cosine >= embedding_threshold:
        span = max(1e-9, 1.0 - embedding_threshold)
        return 0.4 + 0.3 * min(1.0, (cosine - embedding_threshold) / span), False
    return 0.0, False


def _cosines(t1: list[str], t2: list[str], embeddings: Embeddings) -> np.ndarray | None:
    """Cosine matrix of the lower-cased tokens (NaN where a word has no vector)."""
    if hasattr(embeddings, "cosine_matrix"):  # metrics.core.embeddings.Embeddings
        m = np.asarray(embeddings.cosine_matrix(t1, t2), dtype=np.float64)
        punct = np.array([_is_punct(w) for w in t1])[:, None] | np.array([_is_punct(w) for w in t2])[None, :]
        m[punct] = np.nan
        return m
    if not hasattr(embeddings, "vector"):
        return None  # fall back to pairwise similarity() calls
    dim = None
    rows = []
    for toks in (t1, t2):
        vecs = []
        for w in toks:
            if w in embeddings and not _is_punct(w):
                v = np.asarray(embeddings.vector(w), dtype=np.float64)
                dim = v.shape[0]
                n = np.linalg.norm(v)
                vecs.append(v / n if n else None)
            else:
                vecs.append(None)
        rows.append(vecs)
    if dim is None:
        return np.full((len(t1), len(t2)), np.nan)
    m1 = np.array([v if v is not None else np.full(dim, np.nan) for v in rows[0]]).reshape(len(t1), dim)
    m2 = np.array([v if v is not None else np.full(dim, np.nan) for v in rows[1]]).reshape(len(t2), dim)
    return m1 @ m2.T


def align(
    tokens1: Sequence[str],
    tokens2: Sequence[str],
    *,
    embeddings: Embeddings | None = None,
    use_wordnet: bool = True,
    embedding_threshold: float = 0.6,
    position_weight: float = 0.5,
    context_weight: float = 0.2,
    function_word_window: float = 0.15,
    min_score: float = 0.25,
) -> Alignment:
    """Align two tokenized sentences of the same language (see the module docstring).

    Parameters: ``embeddings`` word vectors for similar-word links (none by
    default: nothing is loaded); ``use_wordnet`` links WordNet synonyms (the
    shipped table, ``metrics.core.wordnet``); ``embedding_threshold`` the least
    cosine for an embedding link; ``position_weight`` how much relative-position
    distance lowers a score (0: none, 1: a token at the far end scores 0);
    ``context_weight`` the bonus for matching diagonal neighbours;
    ``function_word_window`` the largest relative-position distance at which a
    function word or punctuation mark may link without a matching neighbour;
    ``min_score`` the least score of a kept link. Returns an
    :class:`~metrics.core.alignment.Alignment` over the given tokens with
    one-to-one links, exact/stem matches sure and synonym/embedding matches
    possible.
    """
    t1, t2 = list(tokens1), list(tokens2)
    n1, n2 = len(t1), len(t2)
    if n1 == 0 or n2 == 0:
        return Alignment(tuple(t1), tuple(t2))
    low1 = [t.lower() for t in t1]
    low2 = [t.lower() for t in t2]
    cos = _cosines(low1, low2, embeddings) if embeddings is not None else None

    sim = np.zeros((n1, n2))
    sure = np.zeros((n1, n2), dtype=bool)
    for i in range(n1):
        for j in range(n2):
            c = None
            if cos is not None and not np.isnan(cos[i, j]):
                c = float(cos[i, j])
            s, k = lexical_similarity(
                t1[i],
                t2[j],
                use_wordnet=use_wordnet,
                embeddings=embeddings if cos is None else None,
                embedding_threshold=embedding_threshold,
                cosine=c,
            )
            sim[i, j] = s
            sure[i, j] = k

    strong = sim >= SURE_SIM
    padded = np.zeros((n1 + 2, n2 + 2), dtype=bool)
    padded[1:-1, 1:-1] = strong
    ctx = (padded[:-2, :-2].astype(float) + padded[2:, 2:]) / 2  # (i-1, j-1) and (i+1, j+1)
    pos1 = (np.arange(n1) + 0.5) / n1
    pos2 = (np.arange(n2) + 0.5) / n2
    dist = np.abs(pos1[:, None] - pos2[None, :])

    score = sim * (1.0 - position_weight * dist) + context_weight * ctx * (sim > 0)
    restricted = np.array([[(a in FUNCTION_WORDS or _is_punct(a)) for a in low1]]).T | np.array(
        [[(b in FUNCTION_WORDS or _is_punct(b)) for b in low2]]
    )
    blocked = restricted & (dist > function_word_window) & (ctx == 0)
    score[blocked] = 0.0
    score[sim <= 0] = 0.0

    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(score, maximize=True)
    sure_links: set[tuple[int, int]] = set()
    possible_links: set[tuple[int, int]] = set()
    for i, j in zip(rows.tolist(), cols.tolist()):
        if score[i, j] >= min_score and score[i, j] > 0:
            (sure_links if sure[i, j] else possible_links).add((i, j))
    return Alignment(tuple(t1), tuple(t2), frozenset(sure_links), frozenset(possible_links))
