"""BLEU (Papineni et al. 2002) through sacrebleu: the registered ``bleu`` and the options ``ibleu`` and
``paraphrase-bleu`` share (:data:`BLEU_PARAMS`, :func:`make_bleu`, :func:`bleu_stat_names`).

BLEU's per-segment statistics, computed fast and bit for bit, are :mod:`.bleu_stats`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sacrebleu.metrics.bleu import BLEU as _SacreBLEU

from metrics.core.base.params import Param
from metrics.core.cards import MetricCard
from metrics.core.registry import register

from .backend import SacreBackend
from .metric import AGAINST, SacreMetric

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
