"""What the sacrebleu-backed metrics share: :class:`SacreMetric` and the ``against`` option.

Each metric (:mod:`.bleu`, :mod:`.chrf`, :mod:`.ter`) holds two
:class:`~metrics.core.sacre.backend.SacreBackend` objects (corpus and sentence scoring)
and compares the candidate with the original or the reference (:func:`against_texts`,
the ``against`` parameter).
"""

from __future__ import annotations

import numpy as np
import sacrebleu

from metrics.core.base.metric import Metric
from metrics.core.base.params import MissingReference, Param

from .backend import SacreBackend

AGAINST = Param(
    "against",
    str,
    "original",
    "score the candidate against the original (R) or the reference column",
    choices=("original", "reference"),
)


def against_texts(metric: Metric, originals: list[str], references: list[str | None], against: str) -> list[str]:
    """The texts a candidate is compared with: the originals, or the references.

    Raises :class:`MissingReference` naming the first segment without one.
    """
    if against == "original":
        return originals
    for i, r in enumerate(references):
        if r is None or not r.strip():
            raise MissingReference(f"metric {metric.slug!r} with against=reference: segment {i} has no reference")
    return list(references)  # type: ignore[arg-type]


class SacreMetric(Metric):
    """A metric backed by a sacrebleu metric object (see the module docstring).

    Subclasses build ``self._corpus`` and ``self._sentence`` (:class:`SacreBackend`
    objects) in ``_check_params``.
    """

    #: Whether sacrebleu's statistics are integer counts (BLEU, chrF) or not (TER).
    _integer_stats = True
    _corpus: SacreBackend
    _sentence: SacreBackend

    @property
    def needs_references(self) -> bool:  # type: ignore[override]
        return self.param_values["against"] == "reference"

    def _segment_stats(self, originals, candidates, references):
        refs = against_texts(self, originals, references, self.param_values["against"])
        return np.asarray(self._corpus.extract_corpus_statistics(candidates, refs), dtype=np.float64)

    def _exact(self, sums: np.ndarray) -> np.ndarray:
        # sacrebleu computes from Python ints; integer statistics summed in
        # float64 are exact, so int64 gives sacrebleu's exact inputs.
        sums = np.asarray(sums, dtype=np.float64)
        return sums.astype(np.int64) if self._integer_stats else sums

    def scores_from_sums(self, sums: np.ndarray) -> np.ndarray:
        """Corpus score of each row of summed statistics (sacrebleu's formula)."""
        return self._corpus.score_many(self._exact(sums))

    def sentence_scores(self, stats: np.ndarray) -> np.ndarray:
        """Sentence score of each row (sacrebleu's sentence-level formula)."""
        return self._sentence.score_many(self._exact(stats))

    def scores_from_resampled_sums(self, sums: np.ndarray) -> np.ndarray:
        """Scores from float32 sums, as sacrebleu's ``paired_bs`` computes them."""
        return self._corpus.score_many(np.asarray(sums, dtype=np.float64).astype(np.float32))

    def signature_extra(self) -> dict[str, str]:
        return {"sacrebleu": self._corpus.signature()}


# sacrebleu's version is part of its signature string; expose it for docs.
SACREBLEU_VERSION = sacrebleu.__version__
