"""The semantic metrics on a GPU: default device and batch size, bf16 refused there, and
GPU scores equal to CPU scores.

The last tests run only where torch sees a CUDA device (skipped elsewhere, saying so);
the others run everywhere the semantic extra is installed.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from metrics.core.base.params import MetricError
from metrics.core.registry import create_metric
from metrics.core.semantic.metrics import AUTO_BATCH_SIZES, auto_batch_size
from metrics.core.semantic.models import missing_requirements

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "benchmarks"))
from parabank_data import PARABANK, load_parabank  # noqa: E402

pytestmark = pytest.mark.extras  # the second CI pass runs it (--backend-pass)
needs_semantic = pytest.mark.skipif(
    bool(missing_requirements()), reason="needs the optional semantic extra: make install-semantic"
)


def _cuda() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


needs_cuda = pytest.mark.skipif(not _cuda(), reason="needs a CUDA device that torch can see (none here)")

SLUGS = ("embed-cosine", "bertscore", "parascore")


def test_the_batch_size_is_chosen_per_device_large_on_a_gpu():
    for slug in SLUGS:
        assert auto_batch_size(slug, "cuda") >= 4 * auto_batch_size(slug, "cpu")
        assert auto_batch_size(slug, "cuda:1") == AUTO_BATCH_SIZES["cuda"][slug]
    assert auto_batch_size("embed-cosine", "cpu") == 32 and auto_batch_size("bertscore", "cpu") == 64


@needs_semantic
def test_on_a_cpu_the_default_batch_size_is_the_cpus_and_a_given_one_wins():
    assert create_metric("embed-cosine", {"device": "cpu"}).batch_size == 32
    assert create_metric("parascore", {"device": "cpu", "reference_free": True}).batch_size == 64
    assert create_metric("bertscore", {"device": "cpu", "batch_size": 8}).batch_size == 8


@needs_semantic
def test_bf16_is_refused_where_the_metric_would_run_on_cuda_with_the_reason(monkeypatch):
    import torch

    # Only the device query is changed: the refusal happens before any model is loaded.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    with pytest.raises(MetricError, match="refused on CUDA: measured on an H100"):
        create_metric("embed-cosine", {"precision": "bf16"})
    metric = create_metric("embed-cosine", {"precision": "fp32"})
    assert metric._device == "cuda" and metric.batch_size == 256  # a worker with a GPU uses it unasked


@pytest.fixture(scope="module")
def pairs():
    if (PARABANK / "candidates.tsv.xz").exists():
        items = random.Random(27).sample(load_parabank(), 300)
        return [i.original for i in items], [i.candidate for i in items]
    from tests.metrics.core.test_semantic import CANDIDATES, ORIGINALS

    return ORIGINALS, CANDIDATES


@needs_semantic
@needs_cuda
@pytest.mark.parametrize("slug", SLUGS)
def test_gpu_scores_equal_cpu_scores(slug, pairs):
    originals, candidates = pairs
    params = {"reference_free": True} if slug == "parascore" else {}
    gpu_metric = create_metric(slug, params)  # device auto: the GPU, without being asked
    assert gpu_metric._device == "cuda" and gpu_metric.batch_size == AUTO_BATCH_SIZES["cuda"][slug]
    gpu = np.asarray(gpu_metric.score(originals, candidates).scores)
    cpu = np.asarray(create_metric(slug, {**params, "device": "cpu"}).score(originals, candidates).scores)
    # Measured on an H100: at most 4.8e-7 apart over 1,500 ParaBank pairs (issue 27).
    np.testing.assert_allclose(gpu, cpu, atol=1e-5)


@needs_semantic
@needs_cuda
def test_on_cuda_bf16_is_refused_and_fp32_runs():
    with pytest.raises(MetricError, match="refused on CUDA"):
        create_metric("embed-cosine", {"device": "cuda", "precision": "bf16"})
    assert len(create_metric("embed-cosine", {"device": "cuda"}).score(["a b"], ["a c"]).scores) == 1
