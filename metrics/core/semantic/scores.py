"""The BERTScore pieces (idf weights, P/R/F1) and the ParaScore pieces (edit diversity, DS).

bert-score and nltk are imported inside the functions that use them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

__all__ = ["OMEGA", "GAMMA", "idf_weights", "bertscore_prf", "edit_diversity", "sectional_diversity"]


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

    As parascore 1.0.5 ``utils.edit`` (``nltk.edit_distance`` on the raw strings).
    Two empty strings are identical: d = 0 (the package divides by zero there).
    """
    import nltk

    longest = max(len(source), len(candidate))
    if longest == 0:
        return 0.0
    return nltk.edit_distance(source, candidate) / longest


def sectional_diversity(d: float, *, gamma: float = GAMMA) -> float:
    """ParaScore's sectional function DS of a normalised edit distance d (Shen et al. 2022, eq. 5).

    DS = γ when d ≥ γ, else −1 + ((γ + 1) / γ) · d: −1 for a copy (d = 0), rising
    linearly to γ at d = γ and capped there.
    """
    if d >= gamma:
        return gamma
    return -1 + ((gamma + 1) / gamma) * d
