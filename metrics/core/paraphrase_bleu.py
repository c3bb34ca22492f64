# Over 400 lines: this session's feature work (protocols, screening, field studies, speed) landed here; splitting it along its seams is issue 17's remaining step, done once so code moves only once.
"""Paraphrase-augmented BLEU (Kauchak & Barzilay 2006, *Paraphrasing for Automatic Evaluation*, §3).

Given a system output W (the candidate P) and a reference R (the original, or
the reference column with ``against=reference``), build a *synthetic
reference* that keeps R's meaning but uses W's words where WordNet and a
context classifier allow, then score W with BLEU against it:

1. **Candidate selection** (§3). Words are lower-cased paraeval tokens with a
   letter. Only unmatched words are considered: pairs (r, w) with r ∈ R − W and
   w ∈ W − R that are WordNet synonyms (:func:`metrics.core.wordnet.are_synonyms`:
   they share a synset in some part of speech, any inflection). Two additions
   to the paper, both to keep WordNet's auxiliary-verb synsets out: words of
   :data:`FUNCTION_WORDS` are never replaced or inserted, and two inflections
   of one lemma (``has``/``have``) are not a synonym pair.
2. **Contextual substitution** (§3). For each candidate w a binary classifier
   decides whether w fits at position i of R, given the context
   r_1 … r_{i−1} □ r_{i+1} … r_m. Features (the word itself excluded), as in
   the paper: *n-grams* (n = 1, 2) of the context on either side of the gap,
   and *local collocations*: every n-gram (n = 1 … 4) inside the window
   i−2 … i+2, the gap written ``□`` and sentence edges ``<s>``/``</s>``,
   each prefixed with its length and start offset. Training data (§3): up to
   ``max_examples`` sentences of the training corpus containing w (positive,
   the context of one occurrence of w) and as many random sentences without
   w, at a random position (negative). The classifier is L2 logistic
   regression (scikit-learn ``liblinear``; the paper used BoosTexter); w is
   accepted when P(fits) ≥ ``threshold``. Words seen in fewer than
   ``min_count`` corpus sentences are never substituted (the paper skipped
   words with fewer than 10,000 Gigaword occurrences; our corpus is smaller).
   Where several synonyms of one reference word pass, the most probable wins.
   Substitutions are tested independently (§3) and written in W's spelling.
3. **Score.** sacrebleu BLEU of W against the synthetic reference (sentence
   BLEU with ``effective_order=True``; corpus BLEU from summed statistics).
   When nothing is substituted the reference is used verbatim, so the score is
   exactly plain ``bleu``.

Resources: ``synonyms`` (the shipped WordNet 3.0 table) and ``corpus`` (the
classifiers' English training text: ``fixtures/resources/bible_en.tsv.xz``,
KJV + WEB verses, by default; or any UTF-8 text file, one sentence a line,
optionally .gz/.xz). Classifiers are trained lazily, once per word, kept in
memory and cached on disk as JSON weights under ``$PARAEVAL_CACHE_DIR``
(default ``var/cache``) keyed by the corpus hash and the training parameters.
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
from functools import lru_cache
from pathlib import Path

import numpy as np

from metrics.core.base import REPO_ROOT, Param, ResourceSpec, file_fingerprint
from metrics.core.cards import MetricCard
from metrics.core.registry import register
from metrics.core.sacre import BLEU_PARAMS, SacreMetric, _AGAINST, against_texts, bleu_stat_names, make_bleu
from metrics.core.text import normalize, tokenize
from metrics.core.wordnet import DEFAULT_TABLE, SynonymTable, load_synonym_table

__all__ = [
    "DEFAULT_CORPUS",
    "FEATURE_VERSION",
    "FUNCTION_WORDS",
    "TrainingCorpus",
    "load_training_corpus",
    "context_features",
    "ContextClassifier",
    "ClassifierBank",
    "Substitution",
    "SyntheticReference",
    "synthetic_reference",
    "ParaphraseBleu",
]

DEFAULT_CORPUS = REPO_ROOT / "fixtures" / "resources" / "bible_en.tsv.xz"
#: Bump when features or training change: part of the on-disk cache key.
FEATURE_VERSION = "pb-ctx-1"
GAP = "□"


#: Closed-class words: never replaced and never inserted. WordNet lists a few of
#: them as verbs (be, have, do) whose huge synsets ("be, live", "have, give
#: birth") would otherwise rewrite auxiliaries; the paper's examples are all
#: content words.
FUNCTION_WORDS = frozenset(
    """a an the this that these those some any each every no all both either neither such
    i me my mine myself we us our ours ourselves you your yours yourself yourselves thou thee thy thine ye
    he him his himself she her hers herself it its itself they them their theirs themselves
    who whom whose which what whatever whoever whomever
    be am is are was were been being art wast wert
    have has had having hast hath hadst
    do does did done doing doth dost didst
    will would shall should may might must can could ought shalt wilt canst couldest
    and or but nor so yet if then than because as while although though unless until since lest
    of in on at by for with about against between into through during before after above below
    to from up down out off over under again further once upon unto within without toward towards
    not here there when where why how very too also just only own same other
    """.split()
)


def _is_word(token: str) -> bool:
    return any(ch.isalpha() for ch in token)


def _is_content(token: str) -> bool:
    return _is_word(token) and token not in FUNCTION_WORDS


# --------------------------------------------------------------------------- corpus


class TrainingCorpus:
    """Lower-cased tokenized sentences and an index word → sentences containing it."""

    def __init__(self, sentences: list[list[str]], *, fingerprint: str) -> None:
        self.sentences = sentences
        self.fingerprint = fingerprint
        index: dict[str, list[int]] = {}
        for sid, toks in enumerate(sentences):
            for t in set(toks):
                index.setdefault(t, []).append(sid)
        self._index = index

    def __len__(self) -> int:
        return len(self.sentences)

    def sentences_with(self, word: str) -> list[int]:
        """Ids of the sentences that contain ``word`` (lower-case), ascending."""
        return self._index.get(word.lower(), [])

    def count(self, word: str) -> int:
        """Number of sentences containing ``word``."""
        return len(self._index.get(word.lower(), ()))


def _open_text(path: Path):
    from metrics.core.compressed import open_resource  # decompresses through the size cap

    return open_resource(path, "rt")


def load_training_corpus(path: str | os.PathLike = DEFAULT_CORPUS) -> TrainingCorpus:
    """Read a training corpus (cached per path and file state).

    A file whose first line is ``ref<TAB>...`` is the TSV of
    ``fixtures/build_bible_english.py``: every column but ``ref`` is a sentence.
    Anything else is plain text, one sentence a line. ``.xz``/``.gz`` are
    decompressed.
    """
    p = Path(path).resolve()
    return _load_corpus(str(p), file_fingerprint(p))


@lru_cache(maxsize=2)
def _load_corpus(path: str, fingerprint: str) -> TrainingCorpus:
    sentences: list[list[str]] = []
    with _open_text(Path(path)) as fh:
        first = fh.readline()
        tsv = first.startswith("ref\t")
        lines = fh if tsv else [first, *fh]
        for line in lines:
            fields = line.rstrip("\n").split("\t")[1:] if tsv else [line.rstrip("\n")]
            for text in fields:
                toks = tokenize(text, lowercase=True)
                if toks:
                    sentences.append(toks)
    if not sentences:
        raise ValueError(f"{path}: no sentences")
    return TrainingCorpus(sentences, fingerprint=fingerprint)


# --------------------------------------------------------------------------- features


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


# --------------------------------------------------------------------------- classifiers


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
        return cls(data["word"], dict(data["weights"]), float(data["bias"]), int(data["n_positive"]), int(data["n_negative"]))


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


# --------------------------------------------------------------------------- rewriting


@dataclass(frozen=True)
class Substitution:
    """One accepted replacement in the reference: token ``position`` ``old`` → ``new`` (P(fits) = ``probability``)."""

    position: int
    old: str
    new: str
    probability: float


@dataclass(frozen=True)
class SyntheticReference:
    """The rewritten reference and the substitutions made (empty: ``text`` is the reference verbatim)."""

    text: str
    substitutions: tuple[Substitution, ...]


def _token_spans(text: str) -> tuple[str, list[str], list[tuple[int, int]]]:
    norm = normalize(text)
    toks = tokenize(norm)
    spans, pos = [], 0
    for t in toks:
        start = norm.index(t, pos)
        spans.append((start, start + len(t)))
        pos = start + len(t)
    return norm, toks, spans


def synthetic_reference(
    reference: str,
    output: str,
    *,
    synonyms: SynonymTable,
    bank: ClassifierBank,
    threshold: float = 0.5,
) -> SyntheticReference:
    """Rewrite ``reference`` towards ``output`` (Kauchak & Barzilay 2006, §3; module docstring).

    For each reference word r ∉ W, every output word w ∉ R that is a WordNet
    synonym of r is tested by w's context classifier at r's position; the most
    probable w with P(fits) ≥ ``threshold`` replaces r, in the output's spelling.
    """
    norm, ref_toks, spans = _token_spans(reference)
    ref_low = [t.lower() for t in ref_toks]
    out_toks = tokenize(output)
    surface: dict[str, str] = {}
    for t in out_toks:
        if _is_word(t):
            surface.setdefault(t.lower(), t)
    ref_words = {t for t in ref_low if _is_word(t)}
    out_only = [w for w in surface if w not in ref_words and _is_content(w)]
    subs: list[Substitution] = []
    if out_only:
        for i, r in enumerate(ref_low):
            if not _is_content(r) or r in surface:
                continue
            best: Substitution | None = None
            feats: list[str] | None = None
            r_bases = synonyms.base_forms(r)
            for w in out_only:
                # Inflections of one lemma (has/have, born/borne) are not synonyms.
                if not synonyms.are_synonyms(r, w) or r_bases & synonyms.base_forms(w):
                    continue
                clf = bank.classifier(w)
                if clf is None:
                    continue
                if feats is None:
                    feats = context_features(ref_low, i)
                p = clf.probability(feats)
                if p >= threshold and (best is None or p > best.probability):
                    best = Substitution(i, ref_toks[i], surface[w], p)
            if best is not None:
                subs.append(best)
    if not subs:
        return SyntheticReference(reference, ())
    pieces, last = [], 0
    for s in subs:
        a, b = spans[s.position]
        pieces += [norm[last:a], s.new]
        last = b
    pieces.append(norm[last:])
    return SyntheticReference("".join(pieces), tuple(subs))


# --------------------------------------------------------------------------- metric


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
        "against": _AGAINST,
        "threshold": Param("threshold", float, 0.5, "accept a synonym when P(fits context) ≥ this",
                           minimum=0.0, maximum=1.0),
        "min_count": Param("min_count", int, 10, "never substitute words in fewer corpus sentences", minimum=1),
        "max_examples": Param("max_examples", int, 500, "positive (and as many negative) training sentences per word",
                              minimum=2),
        "seed": Param("seed", int, 0, "seed of the training-sentence sampling"),
        **BLEU_PARAMS,
    }
    resources = {
        "synonyms": ResourceSpec(
            "synonyms", "WordNet synonym table (fixtures/build_wordnet_synonyms.py)", default=DEFAULT_TABLE,
            loader=load_synonym_table,
        ),
        "corpus": ResourceSpec(
            "corpus", "English training text for the context classifiers (TSV of build_bible_english.py or "
            "one sentence a line)", default=DEFAULT_CORPUS, loader=_load_corpus_resource,
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
