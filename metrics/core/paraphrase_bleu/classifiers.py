"""Context features and the per-word context classifiers (Kauchak & Barzilay 2006, §3).

:func:`context_features` describes the gap at one position of a sentence;
:class:`ClassifierBank` trains (L2 logistic regression), caches on disk and
applies one :class:`ContextClassifier` per target word.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import random
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .corpus import TrainingCorpus

__all__ = ["FEATURE_VERSION", "GAP", "context_features", "ContextClassifier", "ClassifierBank"]


#: Bump when features or training change: part of the on-disk cache key.
FEATURE_VERSION = "pb-ctx-1"
GAP = "□"


def context_features(tokens: Sequence[str], i: int) -> list[str]:
    """Features of the context of position ``i`` in ``tokens`` (the token at ``i`` excluded).

    * ``u:<w>`` / ``b:<w1> <w2>``: unigrams and bigrams of the context, not
      crossing the gap (Kauchak & Barzilay: "n-grams ... appearing in
      r1 … ri−1 □ ri+1 … rm");
    * ``c<n>@<start>:<w…>``: local collocations — every n-gram (n = 1…4) inside
      the window i−2 … i+2 with the gap as ``□`` and sentence edges as
      ``<s>``/``</s>``, prefixed with its length n and start offset relative to
      i (the gap-only 1-gram is left out).
    """
    feats: list[str] = []
    for part in (tokens[:i], tokens[i + 1 :]):
        for k, w in enumerate(part):
            feats.append("u:" + w)
            if k + 1 < len(part):
                feats.append(f"b:{w} {part[k + 1]}")
    window = []
    for off in range(-2, 3):
        j = i + off
        window.append(GAP if off == 0 else tokens[j] if 0 <= j < len(tokens) else ("<s>" if j < 0 else "</s>"))
    for start in range(5):
        for n in range(1, 5):
            if start + n > 5:
                break
            gram = window[start : start + n]
            if gram == [GAP]:
                continue
            feats.append(f"c{n}@{start - 2}:{' '.join(gram)}")
    return feats


@dataclass(frozen=True)
class ContextClassifier:
    """Logistic-regression weights for one target word: P(fits) = σ(bias + Σ weights[f])."""

    word: str
    weights: dict[str, float]
    bias: float
    n_positive: int
    n_negative: int

    def probability(self, features: Sequence[str]) -> float:
        """σ(bias + Σ_f weights[f]) over the distinct features present (binary features)."""
        z = self.bias + sum(self.weights.get(f, 0.0) for f in set(features))
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def to_json(self) -> dict:
        return {
            "word": self.word,
            "bias": self.bias,
            "n_positive": self.n_positive,
            "n_negative": self.n_negative,
            "weights": self.weights,
        }

    @classmethod
    def from_json(cls, data: dict) -> ContextClassifier:
        return cls(
            data["word"], dict(data["weights"]), float(data["bias"]), int(data["n_positive"]), int(data["n_negative"])
        )


class ClassifierBank:
    """Trains, caches and applies one :class:`ContextClassifier` per target word."""

    def __init__(
        self,
        corpus: TrainingCorpus,
        *,
        min_count: int = 10,
        max_examples: int = 500,
        seed: int = 0,
        regularization: float = 1.0,
        cache_dir: str | os.PathLike | None = None,
    ) -> None:
        """``cache_dir=None`` keeps classifiers in memory only."""
        self.corpus = corpus
        self.min_count = min_count
        self.max_examples = max_examples
        self.seed = seed
        self.regularization = regularization
        self._memory: dict[str, ContextClassifier | None] = {}
        self._dir: Path | None = None
        if cache_dir is not None:
            key = json.dumps(
                [FEATURE_VERSION, corpus.fingerprint, min_count, max_examples, seed, regularization]
            ).encode()
            self._dir = Path(cache_dir) / "paraphrase_bleu" / hashlib.sha256(key).hexdigest()[:16]

    def classifier(self, word: str) -> ContextClassifier | None:
        """The classifier of ``word`` (lower-case), or ``None`` when the corpus has it in < ``min_count`` sentences."""
        w = word.lower()
        if w in self._memory:
            return self._memory[w]
        clf = self._read(w)
        if clf is None:
            clf = self._train(w)
            self._write(w, clf)
        self._memory[w] = clf
        return clf

    def _path(self, word: str) -> Path | None:
        if self._dir is None:
            return None
        return self._dir / (hashlib.sha1(word.encode("utf-8")).hexdigest() + ".json.gz")

    def _read(self, word: str) -> ContextClassifier | None:
        p = self._path(word)
        if p is None or not p.exists():
            return None
        try:
            with gzip.open(p, "rt", encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            return None  # a damaged cache entry is retrained
        return ContextClassifier.from_json(data) if data.get("word") == word else None

    def _write(self, word: str, clf: ContextClassifier | None) -> None:
        p = self._path(word)
        if p is None or clf is None:
            return
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            tmp = p.with_suffix(f".{os.getpid()}.tmp")
            # One write of the whole text: json.dump into a gzip stream writes
            # every token separately (two thirds of a cold run's time).
            with gzip.open(tmp, "wt", encoding="utf-8") as fh:
                fh.write(json.dumps(clf.to_json()))
            os.replace(tmp, p)
        except OSError:
            pass  # the cache is an optimisation; an unwritable directory is not an error

    def training_examples(self, word: str) -> tuple[list[list[str]], list[int]]:
        """Feature lists and labels for ``word`` (§3: occurrences vs random sentences without it)."""
        rng = random.Random(zlib.crc32(word.encode("utf-8")) ^ self.seed)
        sents = self.corpus.sentences
        with_word = self.corpus.sentences_with(word)
        pos_ids = with_word if len(with_word) <= self.max_examples else rng.sample(with_word, self.max_examples)
        X: list[list[str]] = []
        y: list[int] = []
        for sid in pos_ids:
            toks = sents[sid]
            occ = [k for k, t in enumerate(toks) if t == word]
            X.append(context_features(toks, rng.choice(occ)))
            y.append(1)
        contains = set(with_word)
        need = len(pos_ids)
        tries = 0
        while need and tries < 50 * len(pos_ids) + 100:
            tries += 1
            sid = rng.randrange(len(sents))
            if sid in contains:
                continue
            toks = sents[sid]
            X.append(context_features(toks, rng.randrange(len(toks))))
            y.append(0)
            need -= 1
        return X, y

    def _train(self, word: str) -> ContextClassifier | None:
        if self.corpus.count(word) < self.min_count:
            return None
        X, y = self.training_examples(word)
        if len(set(y)) < 2:
            return None
        from scipy.sparse import csr_matrix
        from sklearn.linear_model import LogisticRegression

        # Binary bag of features; built by hand with 32-bit indices (liblinear's
        # requirement, which DictVectorizer output does not always meet).
        vocab: dict[str, int] = {}
        indices: list[int] = []
        indptr = [0]
        for feats in X:
            for f in set(feats):
                indices.append(vocab.setdefault(f, len(vocab)))
            indptr.append(len(indices))
        matrix = csr_matrix(
            (np.ones(len(indices)), np.asarray(indices, dtype=np.int32), np.asarray(indptr, dtype=np.int32)),
            shape=(len(X), len(vocab)),
        )
        # Dual liblinear: far faster than the primal when features outnumber
        # examples, as they always do here (hundreds of sentences, ~10⁴ features).
        model = LogisticRegression(C=self.regularization, solver="liblinear", dual=True, max_iter=1000)
        model.fit(matrix, np.asarray(y))
        coef = model.coef_[0]
        weights = {f: float(coef[k]) for f, k in vocab.items() if coef[k] != 0.0}
        return ContextClassifier(word, weights, float(model.intercept_[0]), sum(y), len(y) - sum(y))
