"""BLEU, chrF and TER through sacrebleu's own statistics (Post 2018).

Each segment's statistics are exactly sacrebleu's per-segment sufficient
statistics (``_extract_corpus_statistics``), and scores come from sacrebleu's
``_compute_score_from_stats``, so

* sentence ``bleu`` equals ``sacrebleu.sentence_bleu(P, [X]).score`` (computed
  with ``effective_order=True``, as ``sentence_bleu`` does), and corpus ``bleu``
  equals ``sacrebleu.corpus_bleu(Ps, [Xs]).score`` (``effective_order=False``, as
  ``corpus_bleu`` does) — to the last digit;
* ``chrf`` and ``ter`` equal ``sentence_chrf``/``corpus_chrf`` and
  ``sentence_ter``/``corpus_ter``.

X is the original R (``against=original``, the default: a similarity to the
source, as paraphrase papers report BLEU(P, R)) or the human reference
(``against=reference``). Bootstrap resamples are scored from float32 sums,
exactly as sacrebleu's ``paired_bs`` does, so a paired test gives sacrebleu's
p-value bit for bit for the same seed.

Layout
------
:mod:`.bleu_stats` holds sacrebleu's ``13a`` tokenizer done fast and BLEU's
per-segment statistics (:func:`bleu_ngram_stats`); :mod:`.backend` wraps a
sacrebleu metric object (:class:`SacreBackend`) and scores many rows of summed
statistics at once, bit for bit; :mod:`.metrics` holds :class:`SacreMetric`, the
shared options (:data:`BLEU_PARAMS`, ``against``) and the registered ``bleu``,
``chrf`` and ``ter``. Every name is re-exported here, so
``from metrics.core.sacre import X`` keeps working.
"""

from __future__ import annotations

from .backend import SacreBackend
from .bleu_stats import FAST_13A as FAST_13A
from .bleu_stats import bleu_ngram_stats
from .metrics import AGAINST as AGAINST
from .metrics import (
    BLEU_PARAMS,
    BleuMetric,
    ChrfMetric,
    SacreMetric,
    TerMetric,
    against_texts,
    bleu_stat_names,
    make_bleu,
)
from .metrics import SACREBLEU_VERSION as SACREBLEU_VERSION

__all__ = ["SacreBackend", "SacreMetric", "BleuMetric", "ChrfMetric", "TerMetric", "against_texts", "BLEU_PARAMS", "make_bleu",
           "bleu_stat_names", "bleu_ngram_stats"]
