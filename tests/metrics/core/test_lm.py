"""Interpolated modified Kneser–Ney estimation, ARPA output, KenLM agreement, lm-fluency."""

import math
import random
from collections import Counter, defaultdict

import kenlm
import numpy as np
import pytest

from metrics.core.base.signature import parse_signature
from metrics.core.lm.estimate import FALLBACK_DISCOUNTS, estimate_kneser_ney, lm_tokens, modified_kn_discounts
from metrics.core.lm.fluency import load_kenlm
from metrics.core.registry import create_metric


def markov_corpus(n_sentences=400, seed=7):
    """Sentences from a random chain over 300 words with Zipf-distributed jumps, so that
    every order has n-grams with adjusted counts 1, 2, 3 and 4 (real discounts)."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(300)]
    nxt = {w: rng.sample(words[:60], 5) for w in words}
    out = []
    for _ in range(n_sentences):
        w = rng.choice(words[:10])
        sent = [w]
        while len(sent) < rng.randint(3, 12):
            if rng.random() < 0.7:
                w = rng.choice(nxt[w])
            else:
                w = words[min(int(rng.paretovariate(0.8)) - 1, 299)]
            sent.append(w)
        out.append(sent)
    return out


class ReferenceMKN:
    """Slow, literal Chen & Goodman (1998) interpolated modified KN, straight from the formulas.

    p(w|h) = max(a(hw) − D(a(hw)), 0) / Σ_v a(hv) + γ(h) p(w|h′), γ(h) = Σ_v D(a(hv)) / Σ_v a(hv);
    unseen context: p(w|h′); unigrams interpolate with 1/|V|. Adjusted counts: raw at the top
    order and for n-grams starting with <s>, else the number of distinct left neighbours.
    """

    def __init__(self, sentences, order):
        self.order = order
        raw = [Counter() for _ in range(order)]
        for s in sentences:
            s = ["<s>"] + list(s) + ["</s>"]
            for n in range(1, order + 1):
                for i in range(len(s) - n + 1):
                    raw[n - 1][tuple(s[i : i + n])] += 1
        del raw[0][("<s>",)]
        self.adj = []
        for n in range(1, order + 1):
            if n == order:
                self.adj.append(dict(raw[n - 1]))
                continue
            left = defaultdict(set)
            for g in raw[n]:
                left[g[1:]].add(g[0])
            self.adj.append({g: (c if g[0] == "<s>" else len(left[g])) for g, c in raw[n - 1].items()})
        self.vocab = {g[0] for g in self.adj[0]} | {"<unk>"}
        self.disc = []
        for a in self.adj:
            n1, n2, n3, n4 = (sum(1 for c in a.values() if c == k) for k in (1, 2, 3, 4))
            y = n1 / (n1 + 2 * n2)
            self.disc.append((1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3))
        self.ext = [defaultdict(dict) for _ in range(order)]
        for n, a in enumerate(self.adj, 1):
            for g, c in a.items():
                self.ext[n - 1][g[:-1]][g[-1]] = c

    def D(self, n, c):
        return 0.0 if c == 0 else self.disc[n - 1][min(c, 3) - 1]

    def p(self, w, h=()):
        h = tuple(h)[-(self.order - 1) :] if self.order > 1 else ()
        n = len(h) + 1
        ext = self.ext[n - 1].get(h)
        if not ext:
            return self.p(w, h[1:])
        total = sum(ext.values())
        gamma = sum(self.D(n, c) for c in ext.values()) / total
        c = ext.get(w, 0)
        lower = 1 / len(self.vocab) if n == 1 else self.p(w, h[1:])
        return max(c - self.D(n, c), 0) / total + gamma * lower


@pytest.fixture(scope="module")
def corpus():
    return markov_corpus()


@pytest.fixture(scope="module")
def model(corpus):
    return estimate_kneser_ney(corpus, order=4)


@pytest.fixture(scope="module")
def arpa(model, tmp_path_factory):
    return model.write_arpa(tmp_path_factory.mktemp("lm") / "m.arpa")


def test_discounts_follow_chen_and_goodman():
    n1, n2, n3, n4 = 100, 40, 20, 12
    y = n1 / (n1 + 2 * n2)
    assert modified_kn_discounts([n1, n2, n3, n4]) == pytest.approx(
        (1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3)
    )
    assert modified_kn_discounts([5, 0, 1, 1]) is None


def test_real_discounts_are_estimated_at_every_order(model):
    assert model.fallback_orders == []
    assert all(0 < d1 <= 1 and 0 < d2 <= 2 and 0 < d3 <= 3 for d1, d2, d3 in model.discounts)


def test_probabilities_equal_a_literal_reference_implementation(corpus, model):
    ref = ReferenceMKN(corpus, 4)
    rng = random.Random(1)
    contexts = [(), ("<s>",), ("<s>", "w1"), ("w3", "w7", "w1"), ("zz",), ("w5", "zz", "w2")]
    contexts += [tuple(rng.choice(corpus)[:3]) for _ in range(6)]
    vocab = sorted(ref.vocab) + ["never-seen"]
    for ctx in contexts:
        for w in vocab:
            expected = math.log10(
                ref.p("<unk>" if w == "never-seen" else w, ["<unk>" if c == "zz" else c for c in ctx])
            )
            assert model.logprob(w, ctx) == pytest.approx(expected, abs=1e-9), (ctx, w)


def test_probabilities_over_the_vocabulary_sum_to_one(model):
    vocab = [w for w in model.vocab if w != "<s>"]
    for ctx in [(), ("<s>",), ("w1", "w2"), ("<s>", "w1", "w5"), ("w9", "w9", "w9"), ("zzz",)]:
        assert sum(10 ** model.logprob(w, ctx) for w in vocab) == pytest.approx(1.0, abs=1e-9)


def test_kenlm_reads_the_arpa_and_agrees_to_1e_4(model, arpa, corpus):
    text = arpa.read_text(encoding="utf-8")
    assert text.startswith("\\data\\\n") and text.rstrip().endswith("\\end\\")
    assert "\t<s>\t" in text and "\t</s>" in text and "\t<unk>" in text
    lm = kenlm.Model(str(arpa))
    assert lm.order == 4
    rng = random.Random(3)
    tests = [rng.choice(corpus) for _ in range(20)] + [["w1", "unseen", "w2"], [], ["w39"] * 6]
    for sent in tests:
        assert lm.score(" ".join(sent), bos=True, eos=True) == pytest.approx(model.sentence_logprob(sent), abs=1e-4)
        ours = [model.logprob(w, ["<s>"] + sent[:i]) for i, w in enumerate(sent + ["</s>"])]
        theirs = [s[0] for s in lm.full_scores(" ".join(sent), bos=True, eos=True)]
        np.testing.assert_allclose(theirs, ours, atol=1e-4)


def test_tiny_corpus_falls_back_to_fixed_discounts():
    m = estimate_kneser_ney([["a", "b"], ["a", "c"]], order=3)
    assert m.fallback_orders == [1, 2, 3]
    assert m.discounts == [FALLBACK_DISCOUNTS] * 3
    assert sum(10 ** m.logprob(w, ("a",)) for w in m.vocab if w != "<s>") == pytest.approx(1.0)


def test_estimation_rejects_empty_corpora_and_reserved_tokens():
    with pytest.raises(ValueError, match="empty corpus"):
        estimate_kneser_ney([])
    with pytest.raises(ValueError, match="reserved token"):
        estimate_kneser_ney([["a", "</s>"]])


def test_lm_fluency_builds_the_model_from_text_once_and_scores_pn(tmp_path, monkeypatch, corpus, model):
    monkeypatch.setenv("PARAEVAL_CACHE_DIR", str(tmp_path / "cache"))
    text = tmp_path / "train.txt"
    text.write_text("\n".join(" ".join(s) for s in corpus) + "\n", encoding="utf-8")
    m = create_metric("lm-fluency", {}, {"model": text})
    cands = ["W1 w2 w3", "w5 zebra", ""]
    stats = m.segment_stats(["x"] * 3, cands)
    assert len(list((tmp_path / "cache").glob("lm_*_o4_*.arpa"))) == 1
    for row, cand in zip(stats, cands):
        toks = lm_tokens(cand)
        assert row[1] == len(toks) + 1  # length counts </s>
        assert row[0] == pytest.approx(model.sentence_logprob(toks), abs=1e-4)
    assert m.sentence_scores(stats)[0] == pytest.approx(stats[0, 0] / stats[0, 1])
    assert m.aggregate(stats) == pytest.approx(stats[:, 0].sum() / stats[:, 1].sum())
    assert parse_signature(m.signature())["order"] == "4"


def test_lm_fluency_accepts_an_arpa_file_and_prefers_fluent_text(arpa, corpus):
    m = create_metric("lm-fluency", {}, {"model": arpa})
    fluent = " ".join(corpus[0])
    scrambled = " ".join(reversed(corpus[0]))
    scores = m.score([fluent, fluent], [fluent, scrambled]).scores
    assert scores[0] > scores[1]
    assert load_kenlm(arpa) is load_kenlm(arpa)


def test_lm_fluency_reads_a_compressed_arpa_through_the_cache(arpa, tmp_path, monkeypatch):
    import gzip

    monkeypatch.setenv("PARAEVAL_CACHE_DIR", str(tmp_path / "cache"))
    packed = tmp_path / "m.arpa.gz"
    packed.write_bytes(gzip.compress(arpa.read_bytes()))
    sent = "w1 w2 w3"
    assert create_metric("lm-fluency", {}, {"model": packed}).score(["x"], [sent]).corpus == pytest.approx(
        create_metric("lm-fluency", {}, {"model": arpa}).score(["x"], [sent]).corpus
    )
    assert len(list((tmp_path / "cache").glob("lm_*_m.arpa"))) == 1
