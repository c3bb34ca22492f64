"""Translation edit rate (Snover et al. 2006) through sacrebleu: the registered ``ter``."""

from __future__ import annotations

from sacrebleu.metrics.ter import TER as _SacreTER

from metrics.core.base.params import Param
from metrics.core.cards import MetricCard
from metrics.core.registry import register

from .backend import SacreBackend
from .metric import AGAINST, SacreMetric


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
