"""iBLEU (Sun & Zhou 2012, *Joint Learning of a Dual SMT System for Paraphrase Generation*).

    iBLEU = α · BLEU(P, refs) − (1 − α) · BLEU(P, R)

rewards similarity to the human reference paraphrase and penalises copying the
original R (DESIGN.md §4). α = 0.9 by default, the value Sun & Zhou use; α is
recorded in the signature. Both BLEU terms are sacrebleu BLEU on the 0–100
scale with the same options (the :data:`~metrics.core.sacre.BLEU_PARAMS`):
sentence iBLEU combines two sentence BLEUs (``effective_order=True``, as
``sacrebleu.sentence_bleu``), corpus iBLEU two corpus BLEUs (as
``sacrebleu.corpus_bleu``). Every segment needs a reference.

Statistics per segment: sacrebleu's BLEU statistics of P against the reference,
then of P against R (``2·(2 + 2N)`` columns), so the corpus score and bootstrap
resamples come from summed counts.
"""

from __future__ import annotations

import numpy as np

from metrics.core.base.metric import Metric
from metrics.core.base.params import Param
from metrics.core.cards import MetricCard
from metrics.core.registry import register
from metrics.core.sacre.bleu import BLEU_PARAMS, bleu_stat_names, make_bleu

__all__ = ["IBleuMetric"]


@register
class IBleuMetric(Metric):
    """Registered ``ibleu`` (see the module docstring)."""

    slug = "ibleu"
    description = "iBLEU (Sun & Zhou 2012): α·BLEU(P, reference) − (1−α)·BLEU(P, original)."
    params = {
        "alpha": Param("alpha", float, 0.9, "weight α of BLEU against the reference", minimum=0.0, maximum=1.0),
        **BLEU_PARAMS,
    }
    version = "1"
    needs_references = True
    card = MetricCard(
        measures="How close the candidate is to a reference paraphrase, minus a penalty for staying close to the original.",
        direction="higher",
        range="−100 to 100 (BLEU points; with α = 0.9 in practice about −10 to 90)",
        needs="original (R), candidate (P) and a reference paraphrase (the study's reference column)",
        reference="Sun & Zhou 2012, Joint Learning of a Dual SMT System for Paraphrase Generation (ACL)",
        caveats="Without a reference it cannot run. Both BLEU terms are corpus-level BLEU re-summed from "
        "sentence statistics; a sentence score uses effective-order BLEU and is noisy.",
    )

    def _check_params(self) -> None:
        self._corpus = make_bleu(self.param_values, effective_order=False)
        self._sentence = make_bleu(self.param_values, effective_order=True)
        order = self.param_values["max_ngram_order"]
        self._k = 2 + 2 * order
        self.stat_names = bleu_stat_names(order, "ref_") + bleu_stat_names(order, "orig_")

    def _segment_stats(self, originals, candidates, references):
        to_ref = self._corpus.extract_corpus_statistics(candidates, references)
        to_orig = self._corpus.extract_corpus_statistics(candidates, originals)
        return np.hstack([np.asarray(to_ref, dtype=np.float64), np.asarray(to_orig, dtype=np.float64)])

    def _combine(self, backend, rows: np.ndarray) -> np.ndarray:
        alpha = self.param_values["alpha"]
        ints = np.asarray(rows, dtype=np.float64).astype(np.int64)
        k = self._k
        return alpha * backend.score_many(ints[:, :k]) - (1 - alpha) * backend.score_many(ints[:, k:])

    def scores_from_sums(self, sums: np.ndarray) -> np.ndarray:
        """α · corpus BLEU(P, refs) − (1 − α) · corpus BLEU(P, R) of each summed row."""
        return self._combine(self._corpus, sums)

    def sentence_scores(self, stats: np.ndarray) -> np.ndarray:
        """α · sentence BLEU(P, ref) − (1 − α) · sentence BLEU(P, R) of each row."""
        return self._combine(self._sentence, stats)

    def signature_extra(self) -> dict[str, str]:
        return {"effective_order": "sentence", "sacrebleu": self._corpus.signature()}
