"""The metric engine: params, resources, signatures, aggregation, bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.core.base.bootstrap import bootstrap_ci, paired_bootstrap
from metrics.core.base.metric import MeanMetric, Metric
from metrics.core.base.params import PARAEVAL_VERSION, MetricError, MissingReference, Param, ResourceUnavailable
from metrics.core.base.resampling import resample_indices
from metrics.core.base.resources import ResourceSpec, file_fingerprint
from metrics.core.base.signature import parse_signature
from metrics.core.text import TOKENIZER_VERSION


class CharRatio(Metric):
    """Toy ratio metric: Σ len(candidate) / Σ len(original)."""

    slug = "toy-char-ratio"
    description = "Characters of the candidate per character of the original."
    params = {
        "scale": Param("scale", float, 1.0, "multiplier", minimum=0.0),
        "mode": Param("mode", str, "plain", "how to count", choices=("plain", "nospace")),
        "strict": Param("strict", bool, False, "require references"),
        "order": Param("order", int, 4, "an integer", minimum=1, maximum=9),
    }
    stat_names = ("cand_chars", "orig_chars")

    @property
    def needs_references(self):
        return self.param_values["strict"]

    def _segment_stats(self, originals, candidates, references):
        def n(s):
            return len(s.replace(" ", "")) if self.param_values["mode"] == "nospace" else len(s)

        return np.array([[n(c), n(o)] for o, c in zip(originals, candidates)], dtype=float)

    def scores_from_sums(self, sums):
        return self.param_values["scale"] * sums[:, 0] / sums[:, 1]


class Lengths(MeanMetric):
    slug = "toy-length"
    description = "Candidate length in characters."

    def _sentence_values(self, originals, candidates, references):
        return np.array([len(c) for c in candidates], dtype=float)


def test_params_default_and_coerce_from_strings():
    m = CharRatio(scale="2.5", mode="nospace", strict="false", order="3")
    assert dict(m.param_values) == {"scale": 2.5, "mode": "nospace", "strict": False, "order": 3}
    assert dict(CharRatio().param_values) == {"scale": 1.0, "mode": "plain", "strict": False, "order": 4}


def test_unknown_param_names_it_and_the_allowed_ones():
    with pytest.raises(MetricError) as exc:
        CharRatio(colour="red")
    assert "'colour'" in str(exc.value)
    assert "scale, mode, strict, order" in str(exc.value)


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"scale": "abc"}, "'scale' must be float"),
        ({"scale": "-1"}, "'scale' must be ≥ 0.0"),
        ({"mode": "fancy"}, "'mode' must be one of plain, nospace"),
        ({"strict": "maybe"}, "'strict' must be bool"),
        ({"order": "2.5"}, "'order' must be int"),
        ({"order": 2.5}, "'order' must be int"),
        ({"order": 10}, "'order' must be ≤ 9"),
        ({"scale": "nan"}, "'scale' must be float"),
    ],
)
def test_ill_typed_params_raise_a_clear_value_error(kwargs, fragment):
    with pytest.raises(ValueError) as exc:
        CharRatio(**kwargs)
    assert fragment in str(exc.value)


def test_bool_params_accept_the_usual_spellings():
    spec = Param("x", bool, False, "")
    assert [spec.coerce(v) for v in ("true", "Yes", "1", "on", True, 1)] == [True] * 6
    assert [spec.coerce(v) for v in ("false", "No", "0", "off", False, 0)] == [False] * 6


def test_corpus_score_is_the_score_of_summed_stats_and_sentence_scores_are_rows():
    m = CharRatio()
    result = m.score(["abcd", "ab"], ["ab", "abcd"])
    assert result.scores == (0.5, 2.0)
    assert result.corpus == pytest.approx(6 / 6)
    assert result.n == 2
    assert result.metric == "toy-char-ratio"
    assert result.signature == m.signature()


def test_mean_metric_corpus_score_is_the_mean_of_sentence_scores():
    m = Lengths()
    stats = m.segment_stats(["x", "y", "z"], ["a", "bbb", "cc"])
    assert stats.tolist() == [[1, 1], [3, 1], [2, 1]]
    assert m.aggregate(stats) == pytest.approx(2.0)
    assert m.sentence_scores(stats).tolist() == [1.0, 3.0, 2.0]


def test_ragged_input_is_rejected():
    with pytest.raises(MetricError, match="2 originals but 1 candidates"):
        CharRatio().segment_stats(["a", "b"], ["c"])
    with pytest.raises(MetricError, match="1 references but 2 candidates"):
        CharRatio().segment_stats(["a", "b"], ["c", "d"], ["e"])
    with pytest.raises(MetricError, match="segment 1: candidate must be a string"):
        CharRatio().segment_stats(["a", "b"], ["c", None])


def test_missing_reference_names_the_segment():
    with pytest.raises(MissingReference, match="segment 1 has none"):
        CharRatio(strict=True).segment_stats(["a", "b"], ["c", "d"], ["e", None])


def test_empty_batch_has_zero_rows_and_cannot_be_aggregated():
    m = CharRatio()
    assert m.segment_stats([], []).shape == (0, 2)
    with pytest.raises(MetricError):
        m.aggregate(np.zeros((0, 2)))


def test_signature_lists_metric_params_tokenizer_and_version_and_parses_back():
    sig = CharRatio(scale=2, mode="nospace").signature()
    assert sig == (
        f"metric:toy-char-ratio|version:1|scale:2.0|mode:nospace|strict:false|order:4"
        f"|tok:{TOKENIZER_VERSION}|paraeval:{PARAEVAL_VERSION}"
    )
    parsed = parse_signature(sig)
    assert parsed == {
        "metric": "toy-char-ratio",
        "version": "1",
        "scale": "2.0",
        "mode": "nospace",
        "strict": "false",
        "order": "4",
        "tok": TOKENIZER_VERSION,
        "paraeval": PARAEVAL_VERSION,
        "res": {},
    }
    # Parsed values rebuild the same metric.
    params = {k: v for k, v in parsed.items() if k in CharRatio.params}
    assert CharRatio(**params).signature() == sig


def test_signature_escapes_separators_in_values():
    m = CharRatio()

    class Weird(CharRatio):
        def signature_extra(self):
            return {"lib": "a|b:c%d"}

    sig = Weird().signature()
    assert "lib:a%7Cb:c%25d" in sig
    assert parse_signature(sig)["lib"] == "a|b:c%d"
    assert m.signature() != sig


def test_parse_signature_rejects_garbage():
    with pytest.raises(ValueError):
        parse_signature("hello world")
    with pytest.raises(ValueError):
        parse_signature("tok:x|paraeval:1")


class WithTable(CharRatio):
    slug = "toy-table"
    resources = {
        "table": ResourceSpec("table", "a text table", default=None, loader=lambda p: p.read_text().split()),
    }


def test_resources_are_loaded_lazily_and_hashed_into_the_signature(tmp_path):
    f = tmp_path / "t.txt"
    f.write_text("alpha beta")
    m = WithTable(resources={"table": str(f)})
    assert m.resource("table") == ["alpha", "beta"]
    import hashlib

    digest = hashlib.sha256(b"alpha beta").hexdigest()[:12]
    assert file_fingerprint(f) == digest
    assert parse_signature(m.signature())["res"] == {"table": digest}


def test_missing_resources_raise_resource_unavailable_with_the_fix(tmp_path):
    m = WithTable()
    assert m.missing_resources() == ["table"]
    with pytest.raises(ResourceUnavailable, match="--resource table=PATH"):
        m.resource("table")
    with pytest.raises(ResourceUnavailable, match="cannot read"):
        WithTable(resources={"table": str(tmp_path / "absent.txt")})
    with pytest.raises(MetricError, match="unknown resource 'tabel'"):
        WithTable(resources={"tabel": str(tmp_path)})


def test_a_loaded_resource_object_records_its_fingerprint():
    class Obj:
        fingerprint = "abc123"

    m = WithTable(resources={"table": Obj()})
    assert m.missing_resources() == []
    assert "res:table=abc123" in m.signature()


def test_directory_fingerprint_depends_on_names_and_contents(tmp_path):
    (tmp_path / "a").write_text("1")
    (tmp_path / "b").write_text("2")
    fp1 = file_fingerprint(tmp_path)
    (tmp_path / "b").write_text("3")
    assert file_fingerprint(tmp_path) != fp1


def test_resample_indices_are_sacrebleus():
    n, m = 17, 5
    expected = np.random.default_rng(12345).choice(n, size=(m, n), replace=True)
    assert np.array_equal(resample_indices(n, m, seed=12345), expected)


def test_resample_scores_equal_scoring_each_resample_directly():
    rng = np.random.default_rng(0)
    stats = rng.integers(1, 20, size=(30, 2)).astype(float)
    m = CharRatio()
    idx = resample_indices(30, 50, seed=3)
    direct = np.array([m.aggregate(stats[row]) for row in idx])
    assert np.allclose(m.resample_scores(stats, idx), direct)


def test_bootstrap_ci_brackets_the_statistic_and_is_reproducible():
    rng = np.random.default_rng(1)
    m = Lengths()
    stats = np.column_stack([rng.normal(10, 2, 200), np.ones(200)])
    r1 = bootstrap_ci(m, stats, n_resamples=500, seed=7)
    r2 = bootstrap_ci(m, stats, n_resamples=500, seed=7)
    assert r1 == r2
    assert r1.ci_low < r1.statistic < r1.ci_high
    # The standard error of a mean of 200 N(10, 2) draws is about 2/√200.
    assert r1.standard_error == pytest.approx(2 / np.sqrt(200), rel=0.25)
    assert r1.confidence_interval() == (r1.ci_low, r1.ci_high)


def test_paired_bootstrap_follows_the_sacrebleu_definition():
    rng = np.random.default_rng(2)
    m = Lengths()
    a = np.column_stack([rng.normal(10, 2, 100), np.ones(100)])
    b = a.copy()
    b[:, 0] += rng.normal(0.1, 1, 100)
    res = paired_bootstrap(m, a, b, n_resamples=300, seed=11)
    # Recompute by the definition, one resample at a time.
    idx = np.random.default_rng(11).choice(100, size=(300, 100), replace=True)
    da = np.array([a[r, 0].mean() for r in idx])
    db = np.array([b[r, 0].mean() for r in idx])
    diffs = np.abs(db - da)
    observed = abs(b[:, 0].mean() - a[:, 0].mean())
    expected_p = (np.sum(diffs - diffs.mean() > observed) + 1) / 301
    assert res.pvalue == pytest.approx(expected_p)
    assert res.delta == pytest.approx(b[:, 0].mean() - a[:, 0].mean())
    assert (res.n, res.n_resamples) == (100, 300)


def test_noise_around_the_same_system_is_not_significant():
    rng = np.random.default_rng(5)
    m = Lengths()
    a = np.column_stack([rng.normal(10, 2, 300), np.ones(300)])
    b = a.copy()
    b[:, 0] += rng.normal(0, 0.5, 300) - 0.0  # no systematic difference
    res = paired_bootstrap(m, a, b, n_resamples=500)
    assert res.pvalue > 0.05


def test_a_large_systematic_difference_is_significant():
    m = Lengths()
    a = np.column_stack([np.arange(50.0), np.ones(50)])
    b = a + np.array([5.0, 0.0])
    res = paired_bootstrap(m, a, b, n_resamples=200)
    assert res.delta == pytest.approx(5.0)
    assert res.pvalue == pytest.approx(1 / 201)


def test_resample_blocks_stack_to_the_full_index_matrix():
    from metrics.core.base.resampling import iter_resample_indices

    full = resample_indices(31, 40, seed=9)
    blocks = list(iter_resample_indices(31, 40, seed=9, max_cells=31 * 7))
    assert [b.shape[0] for b in blocks] == [7, 7, 7, 7, 7, 5]
    assert np.array_equal(np.vstack(blocks), full)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 31, 10_000, 1_500_000_001, 2**31 + 5])
def test_fast_resample_draw_is_numpys_choice_stream(n):
    # 1.5e9: 2**32 mod n rejects ~30 % of words; 2**31 + 5 takes choice itself.
    from metrics.core.base.resampling import SacreChoice

    expected = np.random.default_rng(77).choice(n, size=(9, 1001), replace=True).ravel()
    draw = SacreChoice(n, 77)
    got = np.concatenate([draw.take(1), draw.take(2000), draw.take(9 * 1001 - 2001)])
    assert np.array_equal(got, expected)


def test_fused_resampled_sums_equal_the_count_matrix_product():
    from metrics.core.base.resampling import counts_from_indices, resampled_sum_matrix

    rng = np.random.default_rng(3)
    stats = rng.integers(0, 40, size=(30_001, 5)).astype(np.float64)  # 3 rows per fused block
    idx = resample_indices(30_001, 10, seed=12345)
    expected = counts_from_indices(idx, 30_001, np.float32) @ stats.astype(np.float32)
    assert np.array_equal(resampled_sum_matrix(30_001, 10, stats, 12345), expected.astype(np.float64))
    halves = stats / 2  # not whole counts: float64 throughout
    assert np.allclose(resampled_sum_matrix(30_001, 10, halves, 12345), counts_from_indices(idx, 30_001) @ halves)
