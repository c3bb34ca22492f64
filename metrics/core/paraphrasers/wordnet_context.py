"""``wordnet-context``: WordNet synonyms kept only where a context model accepts them (Kauchak & Barzilay 2006, §3)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Protocol

from metrics.core.base.params import REPO_ROOT, Param

from .wordnet import WordNetParaphraser


class ContextModel(Protocol):
    """Answers Kauchak & Barzilay's question: may ``word`` stand at ``position`` of ``tokens``?

    ``tokens`` is the whole sentence; the token at ``position`` is the one to be
    replaced and must be ignored. Returns the probability that ``word`` fits, or
    ``None`` when the model knows nothing about ``word`` (no classifier: the
    substitution is refused, as K&B do for rare words).
    """

    fingerprint: str

    def fit_probability(self, tokens: Sequence[str], position: int, word: str) -> float | None: ...


#: paraphrase-BLEU's default training corpus (``paraphrase_bleu.DEFAULT_CORPUS``), named here so
#: that listing the paraphrasers does not import that module and sacrebleu with it.
DEFAULT_CONTEXT_CORPUS = REPO_ROOT / "fixtures" / "resources" / "bible_en.tsv.xz"


class ClassifierContextModel:
    """paraphrase-BLEU's per-word context classifiers as a :class:`ContextModel`.

    ``fit_probability(tokens, i, w)`` is P(fits) of the logistic-regression
    classifier of ``w`` (:class:`metrics.core.paraphrase_bleu.ClassifierBank`)
    on the features of position ``i`` of the lower-cased sentence
    (:func:`metrics.core.paraphrase_bleu.context_features`: context n-grams and
    local collocations, the word itself excluded) — Kauchak & Barzilay (2006, §3).
    ``None`` when ``w`` occurs in fewer than ``min_count`` corpus sentences.
    """

    def __init__(self, bank: Any) -> None:
        from metrics.core.paraphrase_bleu.classifiers import FEATURE_VERSION

        self.bank = bank
        self.fingerprint = (
            f"{bank.corpus.fingerprint}:{FEATURE_VERSION}:min{bank.min_count}:max{bank.max_examples}:seed{bank.seed}"
        )
        self._features: tuple[tuple[str, ...], int, list[str]] | None = None

    def fit_probability(self, tokens: Sequence[str], position: int, word: str) -> float | None:
        from metrics.core.paraphrase_bleu.classifiers import context_features

        clf = self.bank.classifier(word)
        if clf is None:
            return None
        key = tuple(t.lower() for t in tokens)
        # Several synonyms are tried at one position: compute its features once.
        if self._features is None or self._features[0] != key or self._features[1] != position:
            self._features = (key, position, context_features(list(key), position))
        return clf.probability(self._features[2])


def default_context_model(
    *, corpus: Any = None, min_count: int = 10, max_examples: int = 500, seed: int = 0
) -> ClassifierContextModel:
    """Classifiers trained on ``corpus`` (default: the shipped KJV + WEB English verses).

    ``corpus`` is a :class:`metrics.core.paraphrase_bleu.TrainingCorpus` or a path;
    trained classifiers are cached on disk under ``$PARAEVAL_CACHE_DIR`` (default
    ``var/cache``), shared with the ``paraphrase-bleu`` metric.
    """
    import os

    from metrics.core.paraphrase_bleu.classifiers import ClassifierBank
    from metrics.core.paraphrase_bleu.corpus import DEFAULT_CORPUS, TrainingCorpus, load_training_corpus

    if not isinstance(corpus, TrainingCorpus):
        corpus = load_training_corpus(corpus if corpus is not None else DEFAULT_CORPUS)
    cache_dir = os.environ.get("PARAEVAL_CACHE_DIR", str(REPO_ROOT / "var" / "cache"))
    return ClassifierContextModel(
        ClassifierBank(corpus, min_count=min_count, max_examples=max_examples, seed=seed, cache_dir=cache_dir)
    )


class WordNetContextParaphraser(WordNetParaphraser):
    """WordNet substitution kept only where a context model accepts the synonym (module docstring).

    Candidates are :meth:`WordNetParaphraser.synonym_candidates`; each is scored
    by the context model at the word's position, those with P(fits) ≥
    ``threshold`` are accepted and the most probable one replaces the word (ties:
    the alphabetically first). ``context_model`` (a :class:`ContextModel`) may be
    given; by default paraphrase-BLEU's classifiers trained on the shipped KJV +
    WEB corpus are used (:func:`default_context_model`; ``corpus`` may name
    another :class:`~metrics.core.paraphrase_bleu.TrainingCorpus`).
    """

    slug = "wordnet-context"
    description = "WordNet synonyms filtered by per-word context classifiers (Kauchak & Barzilay's ContextWN)"
    params = MappingProxyType(
        {
            **WordNetParaphraser.params,
            "threshold": Param(
                "threshold",
                float,
                0.5,
                "a synonym is accepted when the classifier's P(fits) ≥ this",
                minimum=0.0,
                maximum=1.0,
            ),
            "min_count": Param(
                "min_count",
                int,
                10,
                "synonyms in fewer training sentences have no classifier and are refused",
                minimum=1,
            ),
        }
    )

    def __init__(
        self,
        params: Mapping[str, Any] | None = None,
        *,
        seed: int = 0,
        table: Any = None,
        lexicon: Any = None,
        context_model: Any = None,
        corpus: Any = None,
    ) -> None:
        super().__init__(params, seed=seed, table=table, lexicon=lexicon)
        self._context_model = context_model
        self._corpus = corpus

    def unavailable_reason(self) -> str:
        reason = super().unavailable_reason()
        if reason or self._context_model is not None or self._corpus is not None:
            return reason
        if not DEFAULT_CONTEXT_CORPUS.exists():
            return f"{self.slug} is unavailable: its training corpus {DEFAULT_CONTEXT_CORPUS} is missing"
        return ""

    @property
    def context_model(self) -> Any:
        """The context model in use (built on first use)."""
        if self._context_model is None:
            self._context_model = default_context_model(corpus=self._corpus, min_count=self.param_values["min_count"])
        return self._context_model

    def resource_fingerprints(self) -> dict[str, str]:
        return {**super().resource_fingerprints(), "context": self.context_model.fingerprint}

    def _choose(self, tokens: Sequence[str], i: int, rng: random.Random) -> str | None:
        cands = self.synonym_candidates(tokens[i])
        if not cands:
            return None
        threshold = self.param_values["threshold"]
        best: tuple[float, str] | None = None
        for c in cands:  # sorted, so ties go to the alphabetically first synonym
            p = self.context_model.fit_probability(tokens, i, c)
            if p is None or p < threshold:
                continue
            if best is None or p > best[0]:
                best = (p, c)
        return None if best is None else best[1]
