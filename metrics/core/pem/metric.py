"""PEM's three features of a pair (pivot F1, LM fluency, target F1) and the registered ``pem``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from metrics.core.base.metric import MeanMetric
from metrics.core.base.params import MetricError
from metrics.core.base.resources import ResourceSpec
from metrics.core.cards import MetricCard
from metrics.core.registry import register

from .model import PemModel

__all__ = ["pem_features", "Pem"]


def _feature_metrics(phrase_table: Any, lm: Any) -> tuple:
    # Imported here, not at the top: the registry imports this module while it
    # may still be importing lm/pivot (whichever was imported first).
    from metrics.core.lm.fluency import LmFluency
    from metrics.core.pivot.metric import PivotF1
    from metrics.core.target_f1 import TargetF1

    return (
        PivotF1(resources={"phrase_table": phrase_table} if phrase_table is not None else None),
        LmFluency(resources={"model": lm} if lm is not None else None),
        TargetF1(),
    )


def pem_features(
    originals: Sequence[str],
    candidates: Sequence[str],
    *,
    phrase_table: Any = None,
    lm: Any = None,
) -> tuple[np.ndarray, tuple[str, ...]]:
    """The ``(n, 3)`` PEM features of pairs, and the three feature metrics' signatures.

    Columns: pivot-language F1 of (R, P), Pn of P, target-language F1 of (R, P),
    each the registered metric's sentence score with default parameters.
    ``phrase_table`` and ``lm`` are paths (or a loaded :class:`PhraseTable`);
    ``None`` uses the metrics' default resources.
    """
    cols, sigs = [], []
    for metric in _feature_metrics(phrase_table, lm):
        cols.append(metric.sentence_scores(metric.segment_stats(originals, candidates)))
        sigs.append(metric.signature())
    return np.column_stack(cols) if len(originals) else np.zeros((0, 3)), tuple(sigs)


def _load_model(path: Path) -> PemModel:
    return PemModel.load(path)


@register
class Pem(MeanMetric):
    """Registered ``pem``: a trained :class:`PemModel` applied to the three features.

    Sentence score: the predicted overall score (1–5 scale of the training
    targets); corpus score: their mean. Refuses to score when the phrase table or
    LM differs from the ones the model was trained with (compared through the
    feature metrics' signatures stored in the model).
    """

    slug = "pem"
    description = "PEM (Liu et al. 2010): RBF-SVR from pivot F1, LM fluency and target F1 to the overall score."
    version = "1"
    card = MetricCard(
        measures="A prediction of the human overall score (1–5) from three features: pivot-language F1 (adequacy), "
        "LM fluency and target-language F1 (lexical dissimilarity).",
        direction="higher",
        range="about 1–5 (the human overall scale; the SVR's output is not clipped)",
        needs="original (R), candidate (P), a trained PEM model, the phrase table and the language model it was trained with",
        reference="Liu, Dahlmeier & Ng 2010, PEM: A Paraphrase Evaluation Metric Exploiting Parallel Texts (EMNLP)",
        caveats="Only as good as the judgments it was trained on; score studies of the same domain, with the same "
        "phrase table and LM (the signature records their hashes).",
        prepare="Train a model first: on the study's Metrics tab, under “PEM models”, fill in the Train PEM "
        "form (it needs a judged study); then press “Score this study” next to the model, or choose "
        "it as the model resource.",
    )
    resources = {
        "model": ResourceSpec(
            "model",
            "a PEM model (.npz) trained by metrics.core.pem.pem_train and saved; pickles are refused",
            loader=_load_model,
        ),
        "phrase_table": ResourceSpec(
            "phrase_table", "the phrase table of pivot-f1", default="fixtures/resources/phrase_table_bible_en_es.tsv.xz"
        ),
        "lm": ResourceSpec(
            "lm",
            "the language model (or its training text) of lm-fluency",
            default="fixtures/resources/lm_bible_en_train.txt.xz",
        ),
    }

    def _sentence_values(self, originals, candidates, references):
        model: PemModel = self.resource("model")
        feats, sigs = pem_features(
            originals,
            candidates,
            phrase_table=self.resource_path("phrase_table"),
            lm=self.resource_path("lm"),
        )
        if model.feature_signatures and tuple(model.feature_signatures) != sigs:
            diff = next((a, b) for a, b in zip(model.feature_signatures, sigs) if a != b)
            raise MetricError(
                f"the PEM model was trained with feature {diff[0]!r} but this run computes {diff[1]!r}; "
                "use the same phrase table and language model, or retrain"
            )
        return model.predict(feats)
