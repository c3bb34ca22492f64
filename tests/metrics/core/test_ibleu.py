"""iBLEU (Sun & Zhou 2012) equals its definition over sacrebleu BLEU."""

from __future__ import annotations

import pytest
import sacrebleu

from metrics.core.base.params import MissingReference
from metrics.core.base.signature import parse_signature
from metrics.core.registry import create_metric

R = ["the cat sat on the mat", "it is hard to believe", "God said let there be light"]
P = ["a cat sat on the mat", "it is difficult to believe", "and God said , let there be light"]
REF = ["a cat was sitting on the mat", "it is hard to believe this", "God said, let there be light"]


@pytest.mark.parametrize("alpha", [0.9, 0.7, 1.0, 0.0])
def test_sentence_and_corpus_ibleu_follow_the_definition(alpha):
    res = create_metric("ibleu", {"alpha": str(alpha)}).score(R, P, REF)
    for score, r, p, ref in zip(res.scores, R, P, REF):
        expected = alpha * sacrebleu.sentence_bleu(p, [ref]).score - (1 - alpha) * sacrebleu.sentence_bleu(p, [r]).score
        assert score == pytest.approx(expected, abs=1e-12)
    expected_corpus = alpha * sacrebleu.corpus_bleu(P, [REF]).score - (1 - alpha) * sacrebleu.corpus_bleu(P, [R]).score
    assert res.corpus == pytest.approx(expected_corpus, abs=1e-12)


def test_alpha_defaults_to_09_and_is_in_the_signature():
    m = create_metric("ibleu")
    assert m.param_values["alpha"] == 0.9
    assert parse_signature(m.signature())["alpha"] == "0.9"


def test_copying_the_original_is_penalised():
    m = create_metric("ibleu")
    copy = m.score(R, R, REF).corpus
    para = m.score(R, P, REF).corpus
    assert para > copy


def test_ibleu_needs_references():
    with pytest.raises(MissingReference, match="segment 0"):
        create_metric("ibleu").score(["a"], ["b"])


def test_alpha_outside_the_unit_interval_is_rejected():
    with pytest.raises(ValueError, match="'alpha'"):
        create_metric("ibleu", {"alpha": "1.5"})
