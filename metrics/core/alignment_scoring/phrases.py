"""Phrase pairs consistent with an alignment, and phrase-level precision/recall/F1 against gold."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from metrics.core.alignment.model import Alignment
from metrics.core.phrases import PhrasePair, extract_phrase_pairs

from ._shared import alignments_paired, f1_of, need_tokens, plain, ratio, score_signature

# =========================================================================== phrases


def phrase_pairs(
    alignment: Alignment,
    *,
    max_len: int = 5,
    use_possible: bool = True,
    drop_identical: bool = True,
) -> frozenset[PhrasePair]:
    """PP(e1, e2, A) of ParaMetric §3 as half-open span pairs.

    Every span pair of at most ``max_len`` words a side with at least one link
    inside and no link leaving (Och & Ney 2004; extraction by
    :func:`metrics.core.phrases.extract_phrase_pairs`), without the pairs whose
    two phrases are the same case-folded text (ParaMetric's f ≠ e). Links are
    sure ∪ possible, or only sure with ``use_possible=False``.
    """
    t1, t2 = alignment.tokens1, alignment.tokens2
    if t1 is None or t2 is None:  # both or neither: Alignment checks
        raise ValueError("phrase pairs need the alignment's tokens")
    links = alignment.links if use_possible else alignment.sure
    out = []
    low1 = [t.lower() for t in t1]
    low2 = [t.lower() for t in t2]
    for pp in extract_phrase_pairs(links, len(t1), len(t2), max_len=max_len):
        if drop_identical and low1[pp.start1 : pp.end1] == low2[pp.start2 : pp.end2]:
            continue
        out.append(pp)
    return frozenset(out)


@dataclass(frozen=True)
class AlignCounts:
    """Per-pair or corpus counts: |PP(S)|, |PP(M)| and |PP(S) ∩ PP(M)|."""

    n_system: int = 0
    n_manual: int = 0
    n_common: int = 0

    def __add__(self, other: AlignCounts) -> AlignCounts:
        return AlignCounts(
            self.n_system + other.n_system, self.n_manual + other.n_manual, self.n_common + other.n_common
        )

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class AlignScores:
    """ParaMetric AlignPrec and AlignRecall (and their F1) over a corpus."""

    align_prec: float
    align_recall: float
    f1: float
    counts: AlignCounts
    n_pairs: int
    signature: str

    def to_dict(self) -> dict:
        return plain(self)


def align_counts(manual: Alignment, system: Alignment, *, max_len: int = 5, use_possible: bool = True) -> AlignCounts:
    """|PP(e1, e2, S)|, |PP(e1, e2, M)| and their intersection for one sentence pair."""
    pm = phrase_pairs(manual, max_len=max_len, use_possible=use_possible)
    ps = phrase_pairs(system, max_len=max_len, use_possible=use_possible)
    return AlignCounts(len(ps), len(pm), len(ps & pm))


def align_scores(
    manual: Alignment | Sequence[Alignment],
    system: Alignment | Sequence[Alignment],
    *,
    max_len: int = 5,
    use_possible: bool = True,
) -> AlignScores:
    """ParaMetric alignment accuracy (Callison-Burch et al. 2008, §4)::

        AlignPrec   = Σ_C |PP(e1,e2,S) ∩ PP(e1,e2,M)| / Σ_C |PP(e1,e2,S)|
        AlignRecall = Σ_C |PP(e1,e2,S) ∩ PP(e1,e2,M)| / Σ_C |PP(e1,e2,M)|

    over the sentence pairs C, S the system's alignment and M the manual one; PP
    as in :func:`phrase_pairs` (span pairs, identical phrases dropped, at most
    ``max_len`` words). Both alignments need their tokens. NaN when a sum is 0.
    """
    pairs = alignments_paired(manual, system, "manual", "system")
    total = AlignCounts()
    for k, (m, s) in enumerate(pairs):
        need_tokens(m, k, "manual")
        need_tokens(s, k, "system")
        total = total + align_counts(m, s, max_len=max_len, use_possible=use_possible)
    p = ratio(total.n_common, total.n_system)
    r = ratio(total.n_common, total.n_manual)
    return AlignScores(p, r, f1_of(p, r), total, len(pairs), score_signature("alignprec", max_len, use_possible))
