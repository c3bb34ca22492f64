"""The registered ``paraphrase-bleu``: sacrebleu BLEU of the candidate against its synthetic reference."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from metrics.core.base.params import REPO_ROOT, Param
from metrics.core.base.resources import ResourceSpec
from metrics.core.cards import MetricCard
from metrics.core.registry import register
from metrics.core.sacre.bleu import BLEU_PARAMS, bleu_stat_names, make_bleu
from metrics.core.sacre.metric import AGAINST, SacreMetric, against_texts
from metrics.core.wordnet import DEFAULT_TABLE, load_synonym_table

from .classifiers import FEATURE_VERSION, ClassifierBank
from .corpus import DEFAULT_CORPUS, TrainingCorpus, load_training_corpus
from .rewriting import SyntheticReference, synthetic_reference

__all__ = ["ParaphraseBleu"]


def _default_cache_dir() -> Path:
    return Path(os.environ.get("PARAEVAL_CACHE_DIR", str(REPO_ROOT / "var" / "cache")))


def _load_corpus_resource(path: Path) -> TrainingCorpus:
    return load_training_corpus(path)


@register
class ParaphraseBleu(SacreMetric):
    """Registered ``paraphrase-bleu`` (see the module docstring)."""

    slug = "paraphrase-bleu"
    description = (
        "Paraphrase-augmented BLEU (Kauchak & Barzilay 2006): reference rewritten with WordNet synonyms "
        "from the candidate that a context classifier accepts."
    )
    params = {
        "against": AGAINST,
        "threshold": Param(
            "threshold", float, 0.5, "accept a synonym when P(fits context) ≥ this", minimum=0.0, maximum=1.0
        ),
        "min_count": Param("min_count", int, 10, "never substitute words in fewer corpus sentences", minimum=1),
        "max_examples": Param(
            "max_examples", int, 500, "positive (and as many negative) training sentences per word", minimum=2
        ),
        "seed": Param("seed", int, 0, "seed of the training-sentence sampling"),
        **BLEU_PARAMS,
    }
    resources = {
        "synonyms": ResourceSpec(
            "synonyms",
            "WordNet synonym table (fixtures/build_wordnet_synonyms.py)",
            default=DEFAULT_TABLE,
            loader=load_synonym_table,
        ),
        "corpus": ResourceSpec(
            "corpus",
            "English training text for the context classifiers (TSV of build_bible_english.py or one sentence a line)",
            default=DEFAULT_CORPUS,
            loader=_load_corpus_resource,
        ),
    }
    version = "1"
    card = MetricCard(
        measures="BLEU of the candidate against the original (or reference) after the latter is rewritten with "
        "WordNet synonyms taken from the candidate, where a per-word context classifier accepts them.",
        direction="higher",
        range="0–100 (BLEU points)",
        needs="original (R) or reference, candidate (P); a WordNet synonym table and English training text (both built in)",
        reference="Kauchak & Barzilay 2006, Paraphrasing for Automatic Evaluation (HLT-NAACL)",
        caveats="Made for machine-translation evaluation: against the original it forgives synonym changes, so it "
        "measures how much meaning-preserving rewording was done less than PINC does. The first run trains "
        "the classifiers (cached afterwards).",
    )

    def _check_params(self) -> None:
        self._corpus = make_bleu(self.param_values, effective_order=False)
        self._sentence = make_bleu(self.param_values, effective_order=True)
        self.stat_names = bleu_stat_names(self.param_values["max_ngram_order"])
        self._bank: ClassifierBank | None = None

    def bank(self) -> ClassifierBank:
        """The classifier bank (built on first use from the ``corpus`` resource)."""
        if self._bank is None:
            v = self.param_values
            self._bank = ClassifierBank(
                self.resource("corpus"),
                min_count=v["min_count"],
                max_examples=v["max_examples"],
                seed=v["seed"],
                cache_dir=_default_cache_dir(),
            )
        return self._bank

    def synthetic_references(
        self, originals: Sequence[str], candidates: Sequence[str], references: Sequence[str | None] | None = None
    ) -> list[SyntheticReference]:
        """The rewritten reference of every segment (for inspection and reports)."""
        refs: list[str | None] = list(references) if references is not None else [None] * len(candidates)
        texts = against_texts(self, list(originals), refs, self.param_values["against"])
        table, bank, thr = self.resource("synonyms"), self.bank(), self.param_values["threshold"]
        return [synthetic_reference(r, c, synonyms=table, bank=bank, threshold=thr) for r, c in zip(texts, candidates)]

    def _segment_stats(self, originals, candidates, references):
        synth = [s.text for s in self.synthetic_references(originals, candidates, references)]
        return np.asarray(self._corpus.extract_corpus_statistics(list(candidates), synth), dtype=np.float64)

    def signature_extra(self) -> dict[str, str]:
        return {"features": FEATURE_VERSION, "effective_order": "sentence", "sacrebleu": self._corpus.signature()}
