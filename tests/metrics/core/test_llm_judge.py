"""llm-judge without a model: rubric, template, parsing, signature, cache, and the HTTP client's protocol.

The client is tested against a small real OpenAI-compatible HTTP server started
here on loopback (what it sends, how it treats errors and the key). That server
answers by rule, not by thinking: the tests that a real model judges the pairs are
in test_llm_judge_model.py (SmolLM2-135M through llama.cpp).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from metrics.core.base.params import MetricError
from metrics.core.base.signature import parse_signature
from metrics.core.llm_judge.backends import ChatEndpoint, Decoding, LLMError, redact_secrets, redact_url
from metrics.core.llm_judge.metric import ENV_API_KEY, ENV_BASE_URL, ENV_MODEL
from metrics.core.llm_judge.prompt import DEFAULT_TEMPLATE, parse_answer, render_messages, template_check
from metrics.core.llm_judge.rubric import PEM_RUBRIC, rubric_from_json
from metrics.core.registry import create_metric

SECRET = "sk-test-0123456789abcdef"


class _Server:
    """An OpenAI-compatible /v1/chat/completions server whose answer depends on the model name."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.fail_next = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                if outer.fail_next:
                    outer.fail_next -= 1
                    return self._send(503, {"error": {"message": "overloaded"}})
                if body["model"] == "needs-key" and self.headers.get("Authorization") != f"Bearer {SECRET}":
                    return self._send(401, {"error": {"message": "invalid api key"}})
                if body["model"] == "missing":
                    return self._send(404, {"error": {"message": "model 'missing' not found"}})
                if body["model"] == "echo-key":  # a server that quotes what it was sent in its error
                    auth = self.headers.get("Authorization", "")
                    key = auth.split(" ", 1)[-1]
                    return self._send(
                        401, {"error": {"message": f"Incorrect API key provided: {key} (header Authorization: {auth})"}}
                    )
                text = body["messages"][-1]["content"]
                if body["model"] == "prose":
                    answer = "I think this paraphrase is quite good overall."
                elif body["model"] == "copy-detector":
                    # Rates 1 when the two sentences are the same, else 4: enough to check the wiring.
                    orig = text.split("Original: ")[1].split("\n")[0]
                    cand = text.split("Paraphrase: ")[1].split("\n")[0]
                    answer = "1" if orig == cand else "Rating: 4"
                else:
                    answer = "5"
                self._send(200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": answer}}]})

            def _send(self, code, payload):
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = _Server()
    yield s
    s.close()


@pytest.fixture
def endpoint_env(server, monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_BASE_URL, server.url)
    monkeypatch.setenv(ENV_API_KEY, SECRET)
    monkeypatch.delenv(ENV_MODEL, raising=False)
    monkeypatch.setenv("PARAEVAL_CACHE_DIR", str(tmp_path))
    return server


ORIGINALS = ["The cat sat on the mat.", "He went home early.", "The committee approved the budget."]
CANDIDATES = ["A cat was sitting on the mat.", "He went home early.", "The budget was approved by the committee."]


# --------------------------------------------------------------------------- rubric and template


def test_the_default_rubric_is_pems_four_criteria_on_labelled_one_to_five_scales():
    assert [c.slug for c in PEM_RUBRIC.criteria] == ["adequacy", "fluency", "dissimilarity", "overall"]
    overall = PEM_RUBRIC.criterion("overall")
    assert overall.values() == [1, 2, 3, 4, 5] and overall.labels()[-1] == "Perfect"


def test_the_prompt_shows_the_studys_criterion_its_scale_labels_and_the_pair():
    rubric = rubric_from_json(
        json.dumps(
            {
                "instructions": "Rate like a careful editor.",
                "criteria": [
                    {
                        "slug": "meaning",
                        "name": "Meaning",
                        "help": "Is the meaning kept?",
                        "scale": {"type": "points", "min": 0, "max": 2, "labels": ["no", "partly", "yes"]},
                    }
                ],
            }
        )
    )
    messages = render_messages(DEFAULT_TEMPLATE, rubric, rubric.criterion("meaning"), "R text", "P text")
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    for part in (
        "Rate like a careful editor.",
        "Meaning. Is the meaning kept?",
        "0 = no\n1 = partly\n2 = yes",
        "Original: R text",
        "Paraphrase: P text",
        "a whole number from 0 to 2",
    ):
        assert part in user


def test_a_slider_criterion_is_shown_with_its_anchors_and_accepts_numbers_from_0_to_100():
    rubric = rubric_from_json(
        json.dumps(
            [
                {
                    "slug": "sim",
                    "name": "Similarity",
                    "help": "",
                    "scale": {
                        "type": "slider",
                        "min": 0,
                        "max": 100,
                        "anchors": {"low": "unrelated", "high": "identical"},
                    },
                }
            ]
        )
    )
    c = rubric.criterion("sim")
    assert c.scale_text() == "A number from 0 to 100: 0 = unrelated; 100 = identical"
    assert parse_answer("72.5", c) == 72.5 and parse_answer("120", c) is None


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("4", 4.0),
        ("Rating: 4", 4.0),
        (" 5.", 5.0),
        ("3 - Fair", 3.0),
        ("Good", 4.0),
        ("**Perfect**", 5.0),
        ("7", None),
        ("4.5", None),
        ("", None),
        ("I think it is quite good.", None),
        ("-1", None),
    ],
)
def test_answers_are_read_on_the_criterions_scale_or_not_at_all(answer, expected):
    assert parse_answer(answer, PEM_RUBRIC.criterion("overall")) == expected


def test_a_template_must_show_the_pair_and_use_only_known_placeholders():
    with pytest.raises(ValueError, match=r"add \$candidate"):
        template_check("[user]\nRate $original.")
    with pytest.raises(ValueError, match="unknown placeholder"):
        template_check("[user]\n$original $candidate $colour")
    template_check("[user]\nOriginal: $original\nParaphrase: $candidate\nCosts $$5")


def test_a_bad_rubric_criterion_or_template_is_refused_when_the_metric_is_created(endpoint_env):
    with pytest.raises(MetricError, match="no criterion 'style'"):
        create_metric("llm-judge", {"criterion": "style", "model": "m"})
    with pytest.raises(MetricError, match="not valid JSON"):
        create_metric("llm-judge", {"rubric": "{", "model": "m"})
    with pytest.raises(MetricError, match="unknown placeholder"):
        create_metric("llm-judge", {"template": "$original $candidate $x", "model": "m"})


def test_without_an_endpoint_the_metric_says_which_setting_to_give(monkeypatch):
    monkeypatch.delenv(ENV_BASE_URL, raising=False)
    with pytest.raises(MetricError, match=ENV_BASE_URL):
        create_metric("llm-judge", {"model": "m"})


# --------------------------------------------------------------------------- signature and secrets


def test_the_signature_records_model_template_hash_rubric_hash_and_decoding_but_never_url_or_key(endpoint_env):
    metric = create_metric("llm-judge", {"model": "copy-detector", "max_tokens": 6, "seed": 3})
    sig = metric.signature()
    fields = parse_signature(sig)
    assert fields["model"] == "copy-detector"
    assert fields["template"].startswith("v1:") and len(fields["template"]) == len("v1:") + 12
    assert fields["rubric"] == PEM_RUBRIC.fingerprint()
    assert fields["decoding"] == "greedy(t=0.0,top_p=1.0,seed=3,max_tokens=6)"
    assert SECRET not in sig and "127.0.0.1" not in sig
    custom = create_metric(
        "llm-judge", {"model": "copy-detector", "template": "[user]\nR: $original\nP: $candidate\nScore 1-5."}
    )
    assert parse_signature(custom.signature())["template"].startswith("custom:")
    assert SECRET not in repr(metric._endpoint)


def test_errors_name_the_endpoint_without_its_key_or_credentials(server):
    url = server.url.replace("http://", "http://alice:hunter2@") + "?api_key=" + SECRET
    client = ChatEndpoint(url, api_key="wrong-key", retries=0)
    with pytest.raises(LLMError) as err:
        client.complete("needs-key", [{"role": "user", "content": "x"}], Decoding())
    message = str(err.value)
    assert "HTTP 401" in message and "invalid api key" in message
    assert "hunter2" not in message and SECRET not in message and "wrong-key" not in message
    # The query stays on the request (hosted APIs put versions there); the key went as a bearer token.
    assert server.requests[-1]["path"] == f"/v1/chat/completions?api_key={SECRET}"
    assert server.requests[-1]["auth"] == "Bearer wrong-key"
    assert redact_url("https://u:p@api.example.org:8443/v1?key=s#f") == "https://api.example.org:8443/v1"


def test_an_endpoint_that_echoes_the_key_in_its_error_does_not_show_it(server):
    client = ChatEndpoint(server.url, api_key=SECRET, retries=0)
    with pytest.raises(LLMError) as err:
        client.complete("echo-key", [{"role": "user", "content": "x"}], Decoding())
    message = str(err.value)
    assert server.requests[-1]["auth"] == f"Bearer {SECRET}"  # it was sent, and echoed
    assert "HTTP 401" in message and "Incorrect API key provided: [redacted]" in message
    assert SECRET not in message and "Bearer" not in message
    basic = ChatEndpoint(server.url.replace("http://", "http://alice:hunter2hunter2@"), retries=0)
    with pytest.raises(LLMError) as err:
        basic.complete("echo-key", [{"role": "user", "content": "x"}], Decoding())
    assert "hunter2" not in str(err.value) and "YWxpY2U6" not in str(err.value)  # nor basic-auth credentials


@pytest.mark.parametrize(
    "text",
    [
        f"Incorrect API key provided: {SECRET}",
        "request headers: {'Authorization': 'Bearer abcdefghijklmnopqrstuvwxyz0123'}",
        "Authorization: Basic YWxpY2U6aHVudGVyMg==",
        "GET /v1/models?api_key=abcd1234efgh&x=1 failed",
        "refused access_token=eyJhbGciOiJIUzI1NiJ9.payload.sig",
        "key sk-proj-AbCdEf0123456789 is not valid",
    ],
)
def test_credentials_in_an_error_text_are_redacted(text):
    redacted = redact_secrets(text, [SECRET])
    assert "[redacted]" in redacted
    for secret in (
        SECRET,
        "abcdefghijklmnopqrstuvwxyz0123",
        "YWxpY2U6aHVudGVyMg",
        "abcd1234efgh",
        "eyJhbG",
        "AbCdEf01",
    ):
        assert secret not in redacted


def test_ordinary_error_texts_are_left_alone():
    for text in (
        "model 'missing' not found",
        "max_tokens: 512 is too large",
        "this model needs basic auth",
        "monkey=1",
        "unknown key: 'foo'",
        "KeyError: 'x'",
    ):
        assert redact_secrets(text, ["x"]) == text


def test_the_timeout_is_bounded_with_a_clear_error(endpoint_env):
    assert create_metric("llm-judge", {"model": "m", "timeout": 600}).param_values["timeout"] == 600.0
    for bad in (1e12, 601, 0.5, "inf", "nan"):
        with pytest.raises(MetricError, match="'timeout'"):
            create_metric("llm-judge", {"model": "m", "timeout": bad})


def test_an_unreachable_endpoint_is_a_clear_error_without_the_key():
    client = ChatEndpoint("http://127.0.0.1:9/v1", api_key=SECRET, timeout=2, retries=0)
    with pytest.raises(LLMError, match="cannot reach http://127.0.0.1:9/v1/chat/completions") as err:
        client.complete("m", [{"role": "user", "content": "x"}], Decoding())
    assert SECRET not in str(err.value)


# --------------------------------------------------------------------------- the protocol


def test_the_client_posts_greedy_chat_completions_with_the_key_as_a_bearer_token(server):
    client = ChatEndpoint(server.url, api_key=SECRET)
    answer = client.complete("needs-key", [{"role": "user", "content": "hello"}], Decoding(max_tokens=5, seed=7))
    assert answer == "5"
    (req,) = server.requests
    assert req["path"] == "/v1/chat/completions" and req["auth"] == f"Bearer {SECRET}"
    body = req["body"]
    assert body["temperature"] == 0.0 and body["top_p"] == 1.0 and body["seed"] == 7 and body["max_tokens"] == 5
    assert body["messages"] == [{"role": "user", "content": "hello"}] and body["stream"] is False


def test_an_overloaded_endpoint_is_retried_and_a_missing_model_is_not(server):
    server.fail_next = 1
    assert ChatEndpoint(server.url, retries=1).complete("m", [{"role": "user", "content": "x"}], Decoding()) == "5"
    assert len(server.requests) == 2
    with pytest.raises(LLMError, match="HTTP 404: model 'missing' not found"):
        ChatEndpoint(server.url, retries=3).complete("missing", [{"role": "user", "content": "x"}], Decoding())
    assert len(server.requests) == 3


def test_the_metric_scores_each_item_once_and_answers_come_from_the_cache_the_second_time(endpoint_env):
    server = endpoint_env
    metric = create_metric("llm-judge", {"model": "copy-detector"})
    result = metric.score(ORIGINALS, CANDIDATES)
    assert result.scores == (4.0, 1.0, 4.0)
    assert len(server.requests) == 3
    # Same model, prompt and items: nothing is asked again, even by a new instance.
    again = create_metric("llm-judge", {"model": "copy-detector"}).score(ORIGINALS, CANDIDATES)
    assert again.scores == result.scores and len(server.requests) == 3
    # Another criterion is another prompt: asked.
    create_metric("llm-judge", {"model": "copy-detector", "criterion": "adequacy"}).score(ORIGINALS[:1], CANDIDATES[:1])
    assert len(server.requests) == 4


def test_unparseable_answers_are_counted_in_the_statistics_and_left_out_of_the_mean(endpoint_env):
    metric = create_metric("llm-judge", {"model": "prose"})
    stats = metric.segment_stats(ORIGINALS, CANDIDATES)
    assert stats.tolist() == [[0.0, 0.0, 1.0]] * 3
    assert np.isnan(metric.sentence_scores(stats)).all()
    mixed = np.vstack([stats, [[4.0, 1.0, 0.0]]])
    assert metric.aggregate(mixed) == 4.0 and mixed[:, 2].sum() == 3


def test_a_failing_endpoint_fails_the_batch_with_a_metric_error(endpoint_env):
    with pytest.raises(MetricError, match="HTTP 404"):
        create_metric("llm-judge", {"model": "missing"}).score(ORIGINALS, CANDIDATES)
