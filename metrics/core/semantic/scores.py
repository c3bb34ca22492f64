"""The BERTScore pieces (idf weights, P/R/F1) and the ParaScore pieces (edit diversity, DS).

bert-score and rapidfuzz are imported inside the functions that use them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

__all__ = [
    "OMEGA",
    "GAMMA",
    "idf_weights",
    "bertscore_prf",
    "edit_diversity",
    "edit_diversities",
    "sectional_diversity",
    "sectional_diversities",
]


#: ParaScore's weight of the diversity term (parascore 1.0.5, scorer.py: ``x + 0.05*y``).
OMEGA = 0.05
#: ParaScore's diversity threshold (parascore 1.0.5, utils.diverse: ``thresh = 0.35``).
GAMMA = 0.35


# --------------------------------------------------------------------------- BERTScore pieces


def idf_weights(sentences: Sequence[str], tokenizer) -> defaultdict:
    """BERTScore's idf table (Zhang et al. 2020, §3): idf(w) = log((M + 1) / (df(w) + 1)).

    M is the number of sentences, df(w) the number of them whose word pieces
    (with [CLS]/[SEP]) contain w; unseen pieces get log(M + 1). Exactly
    ``bert_score.utils.get_idf_dict`` (tested equal), written out because that
    function forks a ``multiprocessing.Pool``, which a daemonic Celery worker
    process may not do.
    """
    from bert_score.utils import sent_encode

    m = len(sentences)
    df: dict[int, int] = defaultdict(int)
    for s in sentences:
        for idx in set(sent_encode(tokenizer, s)):
            df[idx] += 1
    table: defaultdict = defaultdict(lambda: math.log((m + 1) / 1))
    table.update({idx: math.log((m + 1) / (c + 1)) for idx, c in df.items()})
    return table


def _uniform_idf(tokenizer) -> defaultdict:
    # bert_score.BERTScorer.score without idf: weight 1, and 0 for [SEP]/[CLS].
    table: defaultdict = defaultdict(lambda: 1.0)
    table[tokenizer.sep_token_id] = 0
    table[tokenizer.cls_token_id] = 0
    return table


def bertscore_prf(
    model, tokenizer, references: Sequence[str], candidates: Sequence[str], *, idf: bool, batch_size: int
) -> np.ndarray:
    """BERTScore ``(n, 3)`` array of P, R, F1 of each candidate against its reference.

    Through ``bert_score.utils.bert_cos_score_idf`` (which deduplicates the texts
    and embeds each distinct one once); idf weights come from ``references``
    (:func:`idf_weights`), as ``bert_score.score(..., idf=True)`` does.
    """
    from bert_score.utils import bert_cos_score_idf

    refs, cands = list(references), list(candidates)
    table = idf_weights(refs, tokenizer) if idf else _uniform_idf(tokenizer)
    device = next(model.parameters()).device
    preds = bert_cos_score_idf(model, refs, cands, tokenizer, table, batch_size=batch_size, device=device)
    return preds.cpu().numpy().astype(np.float64)


# --------------------------------------------------------------------------- ParaScore pieces


def edit_diversity(source: str, candidate: str) -> float:
    """d = Levenshtein(source, candidate) / max(|source|, |candidate|) over characters.

    As parascore 1.0.5 ``utils.edit`` (``nltk.edit_distance`` on the raw strings:
    unit costs, no transpositions). Two empty strings are identical: d = 0 (the
    package divides by zero there). One pair of :func:`edit_diversities`.
    """
    return float(edit_diversities([source], [candidate])[0])


def edit_diversities(sources: Sequence[str], candidates: Sequence[str], *, workers: int = 1) -> np.ndarray:
    """:func:`edit_diversity` of each (source, candidate) pair, in bulk: a float64 array.

    The distances come from rapidfuzz's compiled Levenshtein distance
    (``rapidfuzz.process.cpdist``, pair i against pair i), which equals
    ``nltk.edit_distance`` on strings exactly (character-level, unit costs, no
    transpositions; tested on ParaBank). nltk's pure-Python dynamic programme took
    about 3.5 ms a pair, longer than BERTScore itself; this takes microseconds.
    ``workers`` > 1 (or -1, every core) splits the pairs over threads.
    """
    from rapidfuzz.distance import Levenshtein
    from rapidfuzz.process import cpdist

    if len(sources) != len(candidates):
        raise ValueError(f"{len(sources)} sources but {len(candidates)} candidates")
    if not len(sources):
        return np.zeros(0, dtype=np.float64)
    dist = cpdist(list(sources), list(candidates), scorer=Levenshtein.distance, workers=workers, dtype=np.int64)
    longest = np.fromiter(
        (max(len(s), len(c)) for s, c in zip(sources, candidates)), dtype=np.float64, count=len(sources)
    )
    return np.divide(dist.astype(np.float64), longest, out=np.zeros(len(sources)), where=longest > 0)


def sectional_diversity(d: float, *, gamma: float = GAMMA) -> float:
    """ParaScore's sectional function DS of a normalised edit distance d (Shen et al. 2022, eq. 5).

    DS = γ when d ≥ γ, else −1 + ((γ + 1) / γ) · d: −1 for a copy (d = 0), rising
    linearly to γ at d = γ and capped there.
    """
    if d >= gamma:
        return gamma
    return -1 + ((gamma + 1) / gamma) * d


def sectional_diversities(d: np.ndarray, *, gamma: float = GAMMA) -> np.ndarray:
    """:func:`sectional_diversity` applied to every element of ``d`` (same formula, same floats)."""
    d = np.asarray(d, dtype=np.float64)
    return np.where(d >= gamma, gamma, -1 + ((gamma + 1) / gamma) * d)
