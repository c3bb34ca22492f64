"""The registered ``pivot-f1`` metric (PEM's adequacy feature; see :mod:`metrics.core.pivot`)."""

from __future__ import annotations

import numpy as np

from metrics.core.base.metric import Metric
from metrics.core.base.params import Param, ResourceUnavailable
from metrics.core.base.resources import ResourceSpec
from metrics.core.cards import MetricCard
from metrics.core.phrase_table import PhraseTable
from metrics.core.pivot.bag import pivot_bag
from metrics.core.pivot.batch import VocabularyFull, batch_kernel
from metrics.core.pivot.f1 import bag_overlap_stats
from metrics.core.pivot.table import load_table, table_for_metric
from metrics.core.registry import register
from metrics.core.target_f1 import f1_from_sums


@register
class PivotF1(Metric):
    """Registered ``pivot-f1``: PEM's adequacy feature (see the module docstring).

    Statistics per segment: ``[Σmin, ΣW_P, ΣW_R]``; sentence score and corpus
    score are F1 = 2 Σmin / (ΣW_P + ΣW_R) of a row or of the summed rows.
    """

    slug = "pivot-f1"
    description = "PEM pivot-language F1: agreement of bags of pivot n-grams through a phrase table."
    version = "1"
    card = MetricCard(
        measures="Whether the candidate keeps the original's meaning: F1 between the bags of pivot-language "
        "(Spanish) n-grams both sentences translate into through a phrase table.",
        direction="higher",
        range="0–1",
        needs="original (R), candidate (P) and an English→pivot phrase table (built in: Bible English→Spanish)",
        reference="Liu, Dahlmeier & Ng 2010, PEM: A Paraphrase Evaluation Metric Exploiting Parallel Texts (EMNLP), §4.1–4.3",
        caveats="Only as broad as the phrase table: words it has never seen translate to themselves, so "
        "out-of-domain text falls back to word overlap.",
    )
    params = {
        "edge_threshold": Param(
            "edge_threshold", float, 0.1, "keep translations with Pr(f|e) above this", minimum=0.0, maximum=1.0
        ),
        "ngram_threshold": Param(
            "ngram_threshold", float, 0.01, "keep pivot n-grams with weight above this", minimum=0.0
        ),
        "max_n": Param("max_n", int, 4, "longest pivot n-gram", minimum=1, maximum=8),
        "stem": Param("stem", bool, True, "Porter-stem English (must match the phrase table)"),
    }
    resources = {
        "phrase_table": ResourceSpec(
            "phrase_table",
            "English→pivot phrase table (TSV english/pivot/count; build_phrase_table)",
            default="fixtures/resources/phrase_table_bible_en_es.tsv.xz",
            loader=load_table,
        ),
    }
    stat_names = ("overlap", "weight_candidate", "weight_original")

    def _bag(self, sentence: str, table: PhraseTable, cache: dict) -> dict:
        if sentence not in cache:
            v = self.param_values
            cache[sentence] = pivot_bag(
                sentence,
                table,
                stem=v["stem"],
                edge_threshold=v["edge_threshold"],
                ngram_threshold=v["ngram_threshold"],
                max_n=v["max_n"],
            )
        return cache[sentence]

    def _segment_stats(self, originals, candidates, references):
        try:
            table = table_for_metric(self.resource("phrase_table"), stem=self.param_values["stem"])
        except ValueError as exc:
            raise ResourceUnavailable(f"resource 'phrase_table': {exc}") from exc
        v = self.param_values
        kernel = batch_kernel(table, v["edge_threshold"], v["max_n"])
        if kernel.usable:
            try:
                return kernel.stats(originals, candidates, stem=v["stem"], ngram_threshold=v["ngram_threshold"])
            except VocabularyFull:
                pass  # the words do not fit the n-gram codes (a large max_n): bag by bag below
        cache: dict = {}  # an original is usually shared by several candidates
        rows = [
            bag_overlap_stats(self._bag(r, table, cache), self._bag(p, table, cache))
            for r, p in zip(originals, candidates)
        ]
        return np.vstack(rows)

    def scores_from_sums(self, sums: np.ndarray) -> np.ndarray:
        """F1 = 2 Σmin / (ΣW_P + ΣW_R); 0 where the overlap is 0 (:func:`target_f1.f1_from_sums`)."""
        return f1_from_sums(sums)
