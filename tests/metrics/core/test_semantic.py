"""Semantic metrics (embed-cosine, bertscore, parascore) against their reference packages.

Tests that need the optional extra skip, naming ``make install-semantic``, when it is absent.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from metrics.core.base.params import MetricError, MissingReference
from metrics.core.base.resources import file_fingerprint
from metrics.core.base.signature import parse_signature
from metrics.core.registry import create_metric, get_metric
from metrics.core.semantic import metrics as semantic_metrics
from metrics.core.semantic.models import default_model_dir, load_bert, load_sentence_transformer, missing_requirements
from metrics.core.semantic.scores import edit_diversity, idf_weights, sectional_diversity

HAVE_SEMANTIC = not missing_requirements()
pytestmark = pytest.mark.extras  # the second CI pass runs it (--backend-pass)
needs_semantic = pytest.mark.skipif(
    not HAVE_SEMANTIC,
    reason="needs the optional semantic extra (torch, sentence-transformers, bert-score): make install-semantic",
)
needs_parascore = pytest.mark.skipif(
    importlib.util.find_spec("parascore") is None,
    reason="needs the parascore reference package: make install-semantic",
)

ORIGINALS = [
    "The cat sat on the mat.",
    "In the beginning God created the heaven and the earth.",
    "He went home early because he was tired.",
    "The committee approved the budget for next year.",
    "The cat sat on the mat.",  # the same original again: embedded once
]
CANDIDATES = [
    "A cat was sitting on the mat.",
    "At first God made the sky and the land.",
    "Being tired, he left for home early.",
    "The committee approved the budget for next year.",  # a copy
    "Stock prices fell sharply on Monday.",  # unrelated
]
REFERENCES = [
    "The cat was sitting on the mat.",
    "In the beginning God made the heavens and the earth.",
    "He left early for home, as he was tired.",
    "Next year's budget was approved by the committee.",
    "A cat sat on a mat.",
]


@pytest.fixture(scope="module")
def model_dir():
    if not HAVE_SEMANTIC:
        pytest.skip("needs the optional semantic extra: make install-semantic")
    return str(default_model_dir())


# --------------------------------------------------------------------------- no torch needed


def test_the_three_metrics_are_registered_even_without_their_dependencies():
    for slug in ("embed-cosine", "bertscore", "parascore"):
        cls = get_metric(slug)
        assert cls.card.direction == "higher" and cls.card.reference


def test_a_missing_dependency_makes_the_metric_unavailable_with_the_install_command(monkeypatch):
    # Patched where the metrics look it up (the package only re-exports it).
    monkeypatch.setattr(semantic_metrics, "missing_requirements", lambda: ["torch", "bert_score"])
    reason = get_metric("bertscore").unavailable_reason()
    assert "torch" in reason and "make install-semantic" in reason
    with pytest.raises(MetricError, match="make install-semantic"):
        create_metric("embed-cosine")


def test_the_sectional_diversity_is_minus_one_for_a_copy_rises_linearly_and_is_capped_at_gamma():
    assert sectional_diversity(0.0) == -1.0
    assert sectional_diversity(0.35) == pytest.approx(0.35)
    assert sectional_diversity(0.9) == pytest.approx(0.35)
    assert sectional_diversity(0.175) == pytest.approx(-1 + (1.35 / 0.35) * 0.175)
    assert sectional_diversity(0.2, gamma=0.5) == pytest.approx(-1 + 3 * 0.2)


def test_edit_diversity_is_character_levenshtein_over_the_longer_string():
    assert edit_diversity("kitten", "sitting") == pytest.approx(3 / 7)
    assert edit_diversity("same", "same") == 0.0
    assert edit_diversity("", "") == 0.0


# --------------------------------------------------------------------------- embed-cosine


@needs_semantic
def test_embed_cosine_equals_mean_pooled_minilm_embeddings_computed_by_hand(model_dir):
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = AutoModel.from_pretrained(model_dir, local_files_only=True).eval()

    def embed(texts):
        enc = tok(texts, padding=True, truncation=True, return_tensors="pt")
        with torch.no_grad():
            out = model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).float()
        mean = (out * mask).sum(1) / mask.sum(1)
        return torch.nn.functional.normalize(mean, dim=1).numpy()

    expected = (embed(ORIGINALS) * embed(CANDIDATES)).sum(1)
    result = create_metric("embed-cosine", {"device": "cpu"}).score(ORIGINALS, CANDIDATES)
    np.testing.assert_allclose(result.scores, expected, atol=1e-5)
    assert result.scores[3] == pytest.approx(1.0, abs=1e-5)  # a copy
    assert result.scores[4] < 0.3 < result.scores[0]  # unrelated scores low
    assert result.corpus == pytest.approx(float(np.mean(expected)), abs=1e-5)


@needs_semantic
def test_embed_cosine_encodes_each_distinct_text_once_per_run(model_dir, monkeypatch):
    metric = create_metric("embed-cosine", {"device": "cpu"})
    model = load_sentence_transformer(metric.resource_path("model"), "cpu")
    encoded: list[str] = []
    real = model.encode

    def counting(texts, **kw):
        encoded.extend(texts)
        return real(texts, **kw)

    monkeypatch.setattr(model, "encode", counting)
    metric.score(ORIGINALS, CANDIDATES)
    assert sorted(encoded) == sorted(set(ORIGINALS) | set(CANDIDATES))
    encoded.clear()
    metric.score(ORIGINALS[:2], ["A brand new sentence.", CANDIDATES[1]])  # next chunk of the same run
    assert encoded == ["A brand new sentence."]


@needs_semantic
def test_the_model_is_loaded_once_per_process_for_every_metric_instance(model_dir):
    a = load_sentence_transformer(model_dir, "cpu")
    b = load_sentence_transformer(model_dir, "cpu")
    assert a is b
    assert load_bert(model_dir, 6, "cpu") is load_bert(model_dir, 6, "cpu")


@needs_semantic
def test_the_signature_names_the_model_and_the_hash_of_its_files(model_dir):
    sig = parse_signature(create_metric("embed-cosine").signature())
    assert sig["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert sig["res"]["model"] == file_fingerprint(model_dir)
    assert sig["device"] == "auto" and sig["batch_size"] == "0" and sig["precision"] == "fp32"
    assert parse_signature(create_metric("embed-cosine", {"precision": "bf16"}).signature())["precision"] == "bf16"


@needs_semantic
def test_embed_cosine_in_bf16_stays_within_0_005_of_fp32_and_ranks_alike(model_dir):
    import scipy.stats as sps

    originals = ORIGINALS * 4
    candidates = [c if i % 2 else c.lower() for i, c in enumerate(CANDIDATES * 4)]
    fp32 = np.asarray(create_metric("embed-cosine", {"device": "cpu"}).score(originals, candidates).scores)
    bf16 = np.asarray(
        create_metric("embed-cosine", {"device": "cpu", "precision": "bf16"}).score(originals, candidates).scores
    )
    assert not np.array_equal(fp32, bf16)  # it did run in bfloat16
    assert np.abs(fp32 - bf16).max() < 0.005
    assert sps.spearmanr(fp32, bf16)[0] > 0.95


@needs_semantic
def test_embed_cosine_against_the_reference_needs_one(model_dir):
    metric = create_metric("embed-cosine", {"against": "reference"})
    scores = metric.score(ORIGINALS, CANDIDATES, REFERENCES).scores
    assert len(scores) == 5
    with pytest.raises(MissingReference):
        metric.score(ORIGINALS[:1], CANDIDATES[:1], [None])


@needs_semantic
def test_asking_for_cuda_on_a_machine_without_it_is_a_clear_error(model_dir):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    with pytest.raises(MetricError, match="no CUDA device"):
        create_metric("bertscore", {"device": "cuda"})


# --------------------------------------------------------------------------- bertscore


@needs_semantic
@pytest.mark.parametrize("idf", [False, True])
def test_bertscore_equals_the_bert_score_package_on_the_same_model_and_layer(model_dir, idf):
    from bert_score import BERTScorer

    scorer = BERTScorer(model_type=model_dir, num_layers=6, idf=idf, idf_sents=ORIGINALS if idf else None)
    p, r, f = (t.numpy() for t in scorer.score(CANDIDATES, ORIGINALS))
    for output, expected in (("precision", p), ("recall", r), ("f1", f)):
        result = create_metric("bertscore", {"idf": idf, "output": output, "device": "cpu"}).score(
            ORIGINALS, CANDIDATES
        )
        np.testing.assert_allclose(result.scores, expected, atol=1e-5)
    assert f[3] == pytest.approx(1.0, abs=1e-5)


@needs_semantic
def test_bertscore_idf_weights_equal_bert_score_get_idf_dict(model_dir):
    from bert_score.utils import get_idf_dict

    _, tokenizer = load_bert(model_dir, 6, "cpu")
    ours = idf_weights(ORIGINALS, tokenizer)
    theirs = get_idf_dict(ORIGINALS, tokenizer, nthreads=1)
    assert dict(ours) == pytest.approx(dict(theirs))
    assert ours[123456] == pytest.approx(theirs[123456])  # unseen piece


@needs_semantic
def test_bertscore_keeps_precision_recall_and_f1_in_its_statistics(model_dir):
    metric = create_metric("bertscore", {"device": "cpu"})
    stats = metric.segment_stats(ORIGINALS, CANDIDATES)
    p, r, f = stats[:, 2], stats[:, 3], stats[:, 4]
    np.testing.assert_allclose(f, 2 * p * r / (p + r), atol=1e-6)
    np.testing.assert_allclose(stats[:, 0], f)
    assert metric.needs_whole_corpus is False
    assert create_metric("bertscore", {"idf": True}).needs_whole_corpus is True


@needs_semantic
def test_bertscore_refuses_more_layers_than_the_model_has(model_dir):
    with pytest.raises(MetricError, match="num_layers must lie between 1 and 6"):
        create_metric("bertscore", {"num_layers": 7, "device": "cpu"}).score(ORIGINALS[:1], CANDIDATES[:1])


# --------------------------------------------------------------------------- parascore


@needs_semantic
@needs_parascore
def test_parascore_equals_the_parascore_package_reference_based(model_dir):
    from parascore import ParaScorer

    expected = ParaScorer(model_type=model_dir, num_layers=6).base_score(CANDIDATES, ORIGINALS, REFERENCES)
    result = create_metric("parascore", {"device": "cpu"}).score(ORIGINALS, CANDIDATES, REFERENCES)
    np.testing.assert_allclose(result.scores, expected, atol=1e-5)


@needs_semantic
@needs_parascore
def test_parascore_free_equals_the_package_similarity_plus_its_diversity(model_dir):
    # The package's own free_score zips the (P, R, F) triple with the diversity list
    # (parascore 1.0.5 scorer.py), so it returns three tensors instead of one score per
    # candidate; the paper's ParaScore.Free is F + ω·DS, built here from the package's
    # own pieces (score()[2] and utils.diverse).
    from parascore import ParaScorer
    from parascore.utils import diverse

    scorer = ParaScorer(model_type=model_dir, num_layers=6)
    f = scorer.score(CANDIDATES, ORIGINALS)[2].numpy()
    expected = f + 0.05 * np.array(diverse(CANDIDATES, ORIGINALS))
    result = create_metric("parascore", {"reference_free": True, "device": "cpu"}).score(ORIGINALS, CANDIDATES)
    np.testing.assert_allclose(result.scores, expected, atol=1e-5)
    assert result.scores[3] == pytest.approx(1.0 - 0.05, abs=1e-5)  # a copy: similarity 1, diversity −1


@needs_parascore
def test_our_diversity_equals_the_parascore_package(model_dir):
    from parascore.utils import diverse

    ours = [sectional_diversity(edit_diversity(o, c)) for o, c in zip(ORIGINALS, CANDIDATES)]
    assert ours == pytest.approx(diverse(CANDIDATES, ORIGINALS))


@needs_semantic
def test_reference_based_parascore_needs_a_reference(model_dir):
    with pytest.raises(MissingReference):
        create_metric("parascore").score(ORIGINALS[:1], CANDIDATES[:1], [""])


# --------------------------------------------------------------------------- offline


OFFLINE_SCRIPT = textwrap.dedent(
    """
    import json, socket
    def refuse(*a, **k):
        raise OSError("network disabled in this test")
    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse
    from metrics.core.registry import create_metric
    o = ["The cat sat on the mat.", "He went home early."]
    c = ["A cat was sitting on the mat.", "He left for home early."]
    r = ["The cat was on the mat.", "He went home before the others."]
    out = {}
    for slug, params in [("embed-cosine", {}), ("bertscore", {"idf": True}), ("parascore", {})]:
        out[slug] = create_metric(slug, params).score(o, c, r).scores
    print(json.dumps(out))
    """
)


@needs_semantic
def test_the_three_metrics_run_with_the_network_disabled(model_dir, tmp_path):
    env = dict(os.environ)
    env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HTTP_PROXY="http://127.0.0.1:9",
        HTTPS_PROXY="http://127.0.0.1:9",
        http_proxy="http://127.0.0.1:9",
        https_proxy="http://127.0.0.1:9",
        NO_PROXY="",
        HF_HOME=str(tmp_path / "hf"),  # an empty cache: nothing can come from a previous download
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    proc = subprocess.run(
        [sys.executable, "-c", OFFLINE_SCRIPT], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(out) == {"embed-cosine", "bertscore", "parascore"}
    assert all(0.5 < s <= 1.05 for scores in out.values() for s in scores)
