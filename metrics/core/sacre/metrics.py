"""The sacrebleu-backed metrics: :class:`SacreMetric`, the shared options, ``bleu``, ``chrf`` and ``ter``.

Each metric holds two :class:`~metrics.core.sacre.backend.SacreBackend` objects
(corpus and sentence scoring) and compares the candidate with the original or
the reference (:func:`against_texts`, the ``against`` parameter).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import sacrebleu
from sacrebleu.metrics.bleu import BLEU as _SacreBLEU
from sacrebleu.metrics.chrf import CHRF as _SacreCHRF
from sacrebleu.metrics.ter import TER as _SacreTER

from metrics.core.base.metric import Metric
from metrics.core.base.params import MissingReference, Param
from metrics.core.cards import MetricCard
from metrics.core.registry import register

from .backend import SacreBackend

__all__ = ["SacreMetric", "BleuMetric", "ChrfMetric", "TerMetric", "against_texts", "BLEU_PARAMS", "make_bleu",
           "bleu_stat_names", "SACREBLEU_VERSION"]


AGAINST = Param(
    "against",
    str,
    "original",
    "score the candidate against the original (R) or the reference column",
    choices=("original", "reference"),
)


def against_texts(
    metric: Metric, originals: list[str], references: list[str | None], against: str
) -> list[str]:
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


#: sacrebleu BLEU options shared by ``bleu`` and ``ibleu``.
BLEU_PARAMS: dict[str, Param] = {
    "tokenize": Param("tokenize", str, "13a", "sacrebleu tokenizer", choices=("13a", "none", "intl", "char", "zh")),
    "lowercase": Param("lowercase", bool, False, "lower-case before matching"),
    "smooth_method": Param(
        "smooth_method", str, "exp", "sacrebleu smoothing", choices=("exp", "floor", "add-k", "none")
    ),
    "smooth_value": Param(
        "smooth_value", float, None, "value for floor/add-k smoothing (none: sacrebleu's default)", nullable=True
    ),
    "max_ngram_order": Param("max_ngram_order", int, 4, "largest n-gram order N", minimum=1, maximum=9),
}


def make_bleu(values: Mapping[str, Any], *, effective_order: bool) -> SacreBackend:
    """A sacrebleu ``BLEU`` for the :data:`BLEU_PARAMS` in ``values``.

    ``effective_order=True`` is sentence BLEU (``sacrebleu.sentence_bleu``),
    ``False`` corpus BLEU (``sacrebleu.corpus_bleu``).
    """
    return SacreBackend(
        _SacreBLEU(
            lowercase=values["lowercase"],
            force=True,  # only silences a warning about tokenized input
            tokenize=values["tokenize"],
            smooth_method=values["smooth_method"],
            smooth_value=values["smooth_value"],
            max_ngram_order=values["max_ngram_order"],
            effective_order=effective_order,
        )
    )


def bleu_stat_names(max_order: int, prefix: str = "") -> tuple[str, ...]:
    """Column names of sacrebleu's BLEU statistics."""
    return (
        f"{prefix}sys_len",
        f"{prefix}ref_len",
        *(f"{prefix}correct_{i}" for i in range(1, max_order + 1)),
        *(f"{prefix}total_{i}" for i in range(1, max_order + 1)),
    )


@register
class BleuMetric(SacreMetric):
    """BLEU (Papineni et al. 2002) via sacrebleu.

    BLEU = BP · exp(Σ_{n=1..N} log p_n / N), p_n the clipped n-gram precision,
    BP = min(1, e^{1 − r/c}). Statistics per segment: ``[c, r, correct_1..N,
    total_1..N]``. Sentence scores use sacrebleu's ``effective_order=True`` (as
    ``sentence_bleu``), the corpus score ``effective_order=False`` (as
    ``corpus_bleu``).
    """

    slug = "bleu"
    description = "BLEU (sacrebleu) of the candidate against the original or the reference."
    params = {"against": AGAINST, **BLEU_PARAMS}
    version = "1"
    card = MetricCard(
        measures="n-gram overlap (n = 1–4) of the candidate with the original or a reference, with a brevity penalty.",
        direction="higher",
        range="0–100",
        needs="original (R) or reference, and candidate (P)",
        reference="Papineni et al. 2002, BLEU (ACL); computed by sacrebleu (Post 2018, WMT)",
        caveats="Against the original (the default) a high BLEU means little rewording: the identical control "
                "scores 100. Choose “against reference” to measure closeness to a reference paraphrase.",
    )
    higher_is_better = True

    def _check_params(self) -> None:
        self._corpus = make_bleu(self.param_values, effective_order=False)
        self._sentence = make_bleu(self.param_values, effective_order=True)
        self.stat_names = bleu_stat_names(self.param_values["max_ngram_order"])

    def signature_extra(self) -> dict[str, str]:
        return {"effective_order": "sentence", "sacrebleu": self._corpus.signature()}


@register
class ChrfMetric(SacreMetric):
    """chrF / chrF++ (Popović 2015, 2017) via sacrebleu.

    chrF_β = (1 + β²)·CHRP·CHRR / (β²·CHRP + CHRR), averaged precision and
    recall over character n-grams (n ≤ ``char_order``) and word n-grams
    (n ≤ ``word_order``; 2 gives chrF++). Statistics per segment:
    ``[hyp, ref, match]`` counts per order.
    """

    slug = "chrf"
    description = "chrF/chrF++ (sacrebleu) of the candidate against the original or the reference."
    params = {
        "against": AGAINST,
        "char_order": Param("char_order", int, 6, "character n-gram order", minimum=1, maximum=12),
        "word_order": Param("word_order", int, 0, "word n-gram order (2 = chrF++)", minimum=0, maximum=6),
        "beta": Param("beta", int, 2, "recall weight β", minimum=1, maximum=10),
        "lowercase": Param("lowercase", bool, False, "case-insensitive"),
        "whitespace": Param("whitespace", bool, False, "keep whitespace in character n-grams"),
        "eps_smoothing": Param("eps_smoothing", bool, False, "chrF++.py-style epsilon smoothing"),
    }
    version = "1"
    card = MetricCard(
        measures="Character n-gram F-score (chrF; with word n-grams, chrF++) of the candidate against the original "
                 "or a reference.",
        direction="higher",
        range="0–100",
        needs="original (R) or reference, and candidate (P)",
        reference="Popović 2015, chrF: character n-gram F-score for automatic MT evaluation (WMT); computed by sacrebleu",
        caveats="Against the original it measures copying, not quality; it forgives inflection changes that BLEU punishes.",
    )

    def _check_params(self) -> None:
        p = self.param_values
        self._corpus = SacreBackend(
            _SacreCHRF(
                char_order=p["char_order"],
                word_order=p["word_order"],
                beta=p["beta"],
                lowercase=p["lowercase"],
                whitespace=p["whitespace"],
                eps_smoothing=p["eps_smoothing"],
            )
        )
        self._sentence = self._corpus
        orders = p["char_order"] + p["word_order"]
        self.stat_names = tuple(f"{k}_{i}" for i in range(1, orders + 1) for k in ("hyp", "ref", "match"))


@register
class TerMetric(SacreMetric):
    """Translation edit rate (Snover et al. 2006) via sacrebleu.

    TER = 100 · edits / reference length (shifts count as one edit). Lower is
    better. Statistics per segment: ``[edits, ref_length]``.
    """

    slug = "ter"
    description = "TER (sacrebleu) of the candidate against the original or the reference; lower is better."
    params = {
        "against": AGAINST,
        "normalized": Param("normalized", bool, False, "Tercom normalisation"),
        "no_punct": Param("no_punct", bool, False, "remove punctuation"),
        "asian_support": Param("asian_support", bool, False, "CJK handling"),
        "case_sensitive": Param("case_sensitive", bool, False, "do not lower-case"),
    }
    version = "1"
    card = MetricCard(
        measures="Translation edit rate: word edits (insertions, deletions, substitutions, shifts) needed to turn the "
                 "candidate into the original or reference, per reference word.",
        direction="lower",
        range="0 upwards (can exceed 100 when the candidate is much longer)",
        needs="original (R) or reference, and candidate (P)",
        reference="Snover et al. 2006, A Study of Translation Edit Rate with Targeted Human Annotation (AMTA); computed by sacrebleu",
        caveats="Against the original a high TER means much rewording, which for a paraphrase is not an error.",
    )
    higher_is_better = False
    stat_names = ("edits", "ref_length")
    _integer_stats = False

    def _check_params(self) -> None:
        p = self.param_values
        self._corpus = SacreBackend(
            _SacreTER(
                normalized=p["normalized"],
                no_punct=p["no_punct"],
                asian_support=p["asian_support"],
                case_sensitive=p["case_sensitive"],
            )
        )
        self._sentence = self._corpus


# sacrebleu's version is part of its signature string; expose it for docs.
SACREBLEU_VERSION = sacrebleu.__version__
