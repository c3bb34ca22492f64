"""chrF and chrF++ (Popović 2015, 2017) through sacrebleu: the registered ``chrf``."""

from __future__ import annotations

from sacrebleu.metrics.chrf import CHRF as _SacreCHRF

from metrics.core.base.params import Param
from metrics.core.cards import MetricCard
from metrics.core.registry import register

from .backend import SacreBackend
from .metric import AGAINST, SacreMetric


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
