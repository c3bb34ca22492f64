"""ParaScore's diversity term in bulk (rapidfuzz) equals the nltk code it replaced, and the authors' package.

On ParaBank's real (original, candidate) pairs, read from ../shared/data/parabank
(``PARAEVAL_PARABANK`` overrides the folder); skipped when the data is absent.
nltk's edit distance is pure Python (milliseconds a pair), so the comparisons use a
fixed sample of pairs rather than all 5,548.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from metrics.core.semantic.scores import (
    edit_diversities,
    edit_diversity,
    sectional_diversities,
    sectional_diversity,
)

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "benchmarks"))
from parabank_data import PARABANK, load_parabank  # noqa: E402

pytestmark = [
    pytest.mark.extras,  # the second CI pass runs it (--backend-pass)
    pytest.mark.skipif(not (PARABANK / "candidates.tsv.xz").exists(), reason=f"ParaBank data absent at {PARABANK}"),
    pytest.mark.skipif(importlib.util.find_spec("rapidfuzz") is None, reason="needs rapidfuzz: make install-semantic"),
]
needs_parascore = pytest.mark.skipif(
    importlib.util.find_spec("parascore") is None, reason="needs the parascore reference package: make install-semantic"
)


@pytest.fixture(scope="module")
def parabank_sample():
    items = load_parabank()
    rng = random.Random(27)
    sample = rng.sample(items, 600)
    return [i.original for i in sample], [i.candidate for i in sample]


def _diversity_as_before(source: str, candidate: str, gamma: float = 0.35) -> float:
    # The implementation this replaced (paraeval before issue 27), verbatim in substance.
    import nltk

    longest = max(len(source), len(candidate))
    d = 0.0 if longest == 0 else nltk.edit_distance(source, candidate) / longest
    return gamma if d >= gamma else -1 + ((gamma + 1) / gamma) * d


def test_bulk_diversity_equals_the_nltk_implementation_bit_for_bit_on_parabank(parabank_sample):
    originals, candidates = parabank_sample
    bulk = sectional_diversities(edit_diversities(originals, candidates))
    before = np.array([_diversity_as_before(o, c) for o, c in zip(originals, candidates)])
    assert bulk.shape == (600,)
    assert np.array_equal(bulk, before)
    # The sample spans the whole function: copies (−1), the linear piece and the cap.
    assert (bulk == -1.0).any() and (bulk == 0.35).any() and ((bulk > -1) & (bulk < 0.35)).any()


@needs_parascore
def test_bulk_diversity_equals_the_parascore_package_on_parabank(parabank_sample):
    from parascore.utils import diverse

    originals, candidates = parabank_sample
    bulk = sectional_diversities(edit_diversities(originals, candidates))
    assert bulk.tolist() == diverse(candidates, originals)


def test_bulk_and_single_pair_diversity_agree_on_unicode_and_empty_strings():
    import nltk

    pairs = [("café naïve 日本語", "cafe naive 日本"), ("", "abc"), ("", ""), ("Straße", "Strasse"), ("ab", "ba")]
    bulk = edit_diversities([a for a, _ in pairs], [b for _, b in pairs])
    for (a, b), d in zip(pairs, bulk):
        longest = max(len(a), len(b))
        assert d == (nltk.edit_distance(a, b) / longest if longest else 0.0)
        assert edit_diversity(a, b) == d
    assert sectional_diversities(bulk).tolist() == [sectional_diversity(d) for d in bulk]


def test_bulk_diversity_with_several_threads_gives_the_same_values(parabank_sample):
    originals, candidates = parabank_sample
    assert np.array_equal(edit_diversities(originals, candidates, workers=2), edit_diversities(originals, candidates))


def test_bulk_diversity_refuses_lists_of_different_lengths():
    with pytest.raises(ValueError, match="2 sources but 1 candidates"):
        edit_diversities(["a", "b"], ["a"])


@needs_parascore
def test_parascore_free_equals_the_package_pieces_on_parabank_pairs(parabank_sample):
    from metrics.core.registry import create_metric
    from metrics.core.semantic.models import default_model_dir, missing_requirements

    if missing_requirements():
        pytest.skip("needs the optional semantic extra: make install-semantic")
    from parascore import ParaScorer
    from parascore.utils import diverse

    originals, candidates = (x[:120] for x in parabank_sample)
    scorer = ParaScorer(model_type=str(default_model_dir()), num_layers=6)
    expected = scorer.score(candidates, originals)[2].numpy() + 0.05 * np.array(diverse(candidates, originals))
    result = create_metric("parascore", {"reference_free": True, "device": "cpu"}).score(originals, candidates)
    np.testing.assert_allclose(result.scores, expected, atol=1e-5)
