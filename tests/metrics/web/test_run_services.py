"""Metric runs through the services, in-process: chunking, idempotency, cancel, failure, numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sacrebleu
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile

from annotation.enums import SystemKind
from annotation.models import Candidate
from metrics import selectors
from metrics.core.base.bootstrap import bootstrap_ci
from metrics.core.registry import create_metric
from metrics.models import MetricRun, MetricRunChunk, MetricScore
from metrics.services.instances import metric_cache
from metrics.services.resources import metric_resource_create
from metrics.services.runs import metric_run_cancel, metric_run_create, metric_run_retry
from metrics.services.worker import metric_run_chunk_execute, metric_run_execute, metric_run_fail, metric_run_start

from .conftest import make_study

pytestmark = pytest.mark.django_db


def _run(study, slug="bleu", **kwargs):
    run = metric_run_create(study=study, metric=slug, enqueue=False, **kwargs)
    return metric_run_execute(run_id=run.pk)


def _candidates(study):
    return list(Candidate.objects.filter(original__study=study).select_related("original", "system").order_by("pk"))


def test_a_run_is_split_into_chunks_of_the_requested_size(metric_study):
    run = metric_run_create(study=metric_study, metric="bleu", chunk_size=4, enqueue=False)
    chunks = list(MetricRunChunk.objects.filter(run=run).order_by("index"))
    assert run.n == 21 and run.progress_total == 6 == len(chunks)
    assert [len(c.candidate_ids) for c in chunks] == [4, 4, 4, 4, 4, 1]
    ids = [pk for c in chunks for pk in c.candidate_ids]
    assert ids == sorted(c.pk for c in _candidates(metric_study))


def test_sentence_scores_equal_sacrebleu_and_corpus_score_leaves_out_controls(metric_study):
    run = _run(metric_study, chunk_size=5)
    assert run.status == "succeeded", run.error
    assert run.progress_done == run.progress_total == 5 and run.percent == 100
    cands = _candidates(metric_study)
    stored = dict(MetricScore.objects.filter(run=run).values_list("candidate_id", "score"))
    for c in cands:
        assert stored[c.pk] == pytest.approx(sacrebleu.sentence_bleu(c.text, [c.original.text]).score, abs=1e-9)
    plain = [c for c in cands if c.system.kind == SystemKind.IMPORTED]
    expected = sacrebleu.corpus_bleu([c.text for c in plain], [[c.original.text for c in plain]]).score
    assert run.corpus_score == pytest.approx(expected, abs=1e-9)
    assert run.corpus_n == 14 and run.n == 21


def test_the_confidence_interval_is_the_bootstrap_over_all_stored_statistics(metric_study):
    run = _run(metric_study, chunk_size=3)
    metric = create_metric("bleu", run.params)
    rows = MetricScore.objects.filter(run=run, candidate__system__kind=SystemKind.IMPORTED).order_by("candidate_id")
    stats = np.array([r.stats for r in rows])
    ci = bootstrap_ci(metric, stats, n_resamples=1000)
    assert (run.ci_low, run.ci_high) == pytest.approx((ci.ci_low, ci.ci_high))
    assert run.ci_low <= run.ci_high


def test_per_system_scores_are_means_and_corpus_scores_of_each_system(metric_study):
    run = _run(metric_study)
    by_name = {s["system"]: s for s in run.system_scores}
    assert set(by_name) == {"human", "machine", "control:identical"}
    assert by_name["control:identical"]["is_control"] is True
    assert by_name["control:identical"]["mean"] == pytest.approx(100.0)
    machine = [c for c in _candidates(metric_study) if c.system.name == "machine"]
    assert by_name["machine"]["n"] == 7
    assert by_name["machine"]["mean"] == pytest.approx(
        np.mean([sacrebleu.sentence_bleu(c.text, [c.original.text]).score for c in machine])
    )
    assert by_name["machine"]["corpus"] == pytest.approx(
        sacrebleu.corpus_bleu([c.text for c in machine], [[c.original.text for c in machine]]).score
    )


def test_the_signature_names_the_metric_and_its_parameters(metric_study):
    run = _run(metric_study, params={"lowercase": "true"})
    assert run.signature.startswith("metric:bleu|")
    assert "lowercase:true" in run.signature
    assert run.signature == create_metric("bleu", {"lowercase": True}).signature()


def test_a_run_executed_twice_leaves_exactly_one_score_per_candidate(metric_study):
    run = _run(metric_study, chunk_size=4)
    first = dict(MetricScore.objects.filter(run=run).values_list("candidate_id", "score"))
    # A duplicate delivery of every chunk and of the start task:
    for chunk in MetricRunChunk.objects.filter(run=run):
        metric_run_chunk_execute(run_id=run.pk, chunk_id=chunk.pk)
    metric_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert MetricScore.objects.filter(run=run).count() == 21
    assert dict(MetricScore.objects.filter(run=run).values_list("candidate_id", "score")) == first
    assert run.progress_done == run.progress_total == 6 and run.status == "succeeded"


def test_a_chunk_whose_transaction_was_lost_is_redone_and_counted_once(metric_study):
    """A worker killed after computing but before its commit: the redelivery redoes the chunk."""
    run = metric_run_create(study=metric_study, metric="bleu", chunk_size=10, enqueue=False)
    chunk_ids = metric_run_start(run_id=run.pk)
    metric_run_chunk_execute(run_id=run.pk, chunk_id=chunk_ids[0])
    # Simulate scores that a crashed attempt of chunk 2 left behind without committing its done flag.
    second = MetricRunChunk.objects.get(pk=chunk_ids[1])
    MetricScore.objects.create(run=run, candidate_id=second.candidate_ids[0], score=-1.0, stats=[0.0] * 10)
    for chunk_id in chunk_ids[1:]:
        metric_run_chunk_execute(run_id=run.pk, chunk_id=chunk_id)
    run.refresh_from_db()
    assert run.status == "succeeded" and run.progress_done == 3
    assert MetricScore.objects.filter(run=run).count() == 21
    assert MetricScore.objects.get(run=run, candidate_id=second.candidate_ids[0]).score >= 0


def test_finalize_runs_when_the_last_chunk_is_redelivered_after_a_crash(metric_study):
    """All chunks committed but the process died before finalize: a redelivered chunk finishes the run."""
    run = metric_run_create(study=metric_study, metric="bleu", chunk_size=10, enqueue=False)
    chunk_ids = metric_run_start(run_id=run.pk)
    for chunk_id in chunk_ids:
        metric_run_chunk_execute(run_id=run.pk, chunk_id=chunk_id)
    MetricRun.objects.filter(pk=run.pk).update(status="running", phase="scoring", corpus_score=None)
    assert metric_run_chunk_execute(run_id=run.pk, chunk_id=chunk_ids[-1]) is True
    run.refresh_from_db()
    assert run.status == "succeeded" and run.corpus_score is not None


def test_a_cancelled_run_ends_cancelled_and_its_chunks_write_nothing(metric_study):
    run = metric_run_create(study=metric_study, metric="bleu", chunk_size=5, enqueue=False)
    chunk_ids = metric_run_start(run_id=run.pk)
    metric_run_chunk_execute(run_id=run.pk, chunk_id=chunk_ids[0])
    run = metric_run_cancel(run=run)
    assert run.status == "cancelled" and run.cancel_requested and run.finished_at is not None
    for chunk_id in chunk_ids[1:]:
        assert metric_run_chunk_execute(run_id=run.pk, chunk_id=chunk_id) is False
    run.refresh_from_db()
    assert run.status == "cancelled" and run.progress_done == 1 and run.corpus_score is None
    assert MetricScore.objects.filter(run=run).count() == 5


def test_a_cancelled_run_can_be_retried_and_completes_with_one_score_per_candidate(metric_study):
    run = metric_run_create(study=metric_study, metric="bleu", chunk_size=5, enqueue=False)
    metric_run_chunk_execute(run_id=run.pk, chunk_id=metric_run_start(run_id=run.pk)[0])
    metric_run_cancel(run=run)
    metric_run_retry(run=run)
    run = metric_run_execute(run_id=run.pk)
    assert run.status == "succeeded" and not run.cancel_requested
    assert MetricScore.objects.filter(run=run).count() == 21


def test_cancelling_a_finished_run_changes_nothing(metric_study):
    run = _run(metric_study)
    assert metric_run_cancel(run=run).status == "succeeded"


def test_retrying_a_succeeded_run_is_refused(metric_study):
    with pytest.raises(ValidationError, match="only failed or cancelled"):
        metric_run_retry(run=_run(metric_study))


def test_a_missing_reference_fails_the_run_naming_the_candidate(researcher):
    study = make_study(researcher, missing_reference_at=3, with_control=False)
    run = _run(study, against="reference", chunk_size=4)
    assert run.status == "failed" and run.finished_at is not None
    bad = Candidate.objects.get(original__external_id="v3", system__name="human", original__study=study)
    assert f"candidate {bad.pk} (original 'v3', system 'human')" in run.error
    assert "reference" in run.error.replace(f"candidate {bad.pk}", "")


def test_scoring_against_the_reference_column_uses_it(researcher):
    study = make_study(researcher, with_control=False)
    run = _run(study, against="reference")
    assert run.status == "succeeded" and run.params["against"] == "reference" and run.against == "reference"
    cands = _candidates(study)
    assert run.corpus_score == pytest.approx(
        sacrebleu.corpus_bleu([c.text for c in cands], [[c.original.reference for c in cands]]).score
    )


def test_a_bug_inside_a_metric_fails_the_run_with_the_exception(metric_study, monkeypatch):
    from metrics.core.sacre.bleu import BleuMetric

    def boom(self, originals, candidates, references):
        raise ZeroDivisionError("tokenizer exploded")

    monkeypatch.setattr(BleuMetric, "_segment_stats", boom)
    metric_cache.clear()
    run = _run(metric_study)
    assert run.status == "failed"
    assert run.error == "ZeroDivisionError: tokenizer exploded"


def test_pinc_runs_have_no_against_parameter_and_refuse_the_reference(metric_study):
    run = _run(metric_study, "pinc")
    assert run.status == "succeeded" and run.against == "original"
    control = next(s for s in run.system_scores if s["is_control"])
    assert control["mean"] == pytest.approx(0.0)  # the original itself shares every n-gram
    with pytest.raises(ValidationError, match="no 'against' parameter"):
        metric_run_create(study=metric_study, metric="pinc", against="reference", enqueue=False)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"metric": "no-such-metric"}, "unknown metric 'no-such-metric'"),
        ({"metric": "bleu", "params": {"tokenize": "klingon"}}, "parameter 'tokenize' must be one of"),
        ({"metric": "bleu", "params": {"colour": "red"}}, "unknown parameter 'colour'"),
        ({"metric": "bleu", "against": "reference", "params": {"against": "original"}}, "contradicts"),
    ],
)
def test_bad_run_requests_are_refused_with_a_clear_message(metric_study, kwargs, message):
    with pytest.raises(ValidationError) as exc:
        metric_run_create(study=metric_study, enqueue=False, **kwargs)
    assert message in " ".join(exc.value.messages)
    assert not MetricRun.objects.exists()


def test_a_study_without_candidates_cannot_be_scored(researcher):
    from annotation.services.studies import study_create

    empty = study_create(name="Empty", owner=researcher)
    with pytest.raises(ValidationError, match="no candidates"):
        metric_run_create(study=empty, metric="bleu", enqueue=False)


def test_an_identical_active_run_is_reused_instead_of_duplicated(metric_study):
    a = metric_run_create(study=metric_study, metric="bleu", enqueue=False)
    b = metric_run_create(study=metric_study, metric="bleu", params={"tokenize": "13a"}, enqueue=False)
    c = metric_run_create(study=metric_study, metric="bleu", params={"lowercase": True}, enqueue=False)
    assert a.pk == b.pk != c.pk
    assert a.params["tokenize"] == "13a" and a.params["lowercase"] is False


def test_metric_scores_frame_has_one_row_per_candidate_keyed_like_judgments(metric_study):
    run = _run(metric_study)
    frame = selectors.metric_scores_frame(run=run)
    assert list(frame.columns) == ["item", "original", "system", "is_control", "score"]
    assert len(frame) == 21
    assert set(frame["item"]) == {str(c.pk) for c in _candidates(metric_study)}
    assert frame["is_control"].sum() == 7
    assert frame.loc[frame["system"] == "control:identical", "score"].tolist() == pytest.approx([100.0] * 7)
    assert frame["original"].iloc[0] == "v0" and frame["item"].map(type).eq(str).all()


def test_study_metric_runs_keeps_the_latest_succeeded_run_per_signature(metric_study):
    old = _run(metric_study)
    new = _run(metric_study)
    lower = _run(metric_study, params={"lowercase": True})
    failed = metric_run_create(study=metric_study, metric="pinc", enqueue=False)
    metric_run_fail(run_id=failed.pk, error="x")
    runs = selectors.study_metric_runs(study=metric_study)
    assert {r.pk for r in runs} == {new.pk, lower.pk}
    assert old.pk not in {r.pk for r in runs}


def test_an_uploaded_resource_is_stored_with_its_sha256(metric_study, researcher):
    import hashlib

    data = b"english\tpivot\tcount\nthe\tel\t3\n"
    res = metric_resource_create(
        name="tiny", kind="phrase_table", file=ContentFile(data, name="pt.tsv"), owner=researcher, study=metric_study
    )
    assert res.sha256 == hashlib.sha256(data).hexdigest() and res.size == len(data)
    with res.file.open("rb") as fh:
        assert fh.read() == data
    with pytest.raises(ValidationError, match="empty"):
        metric_resource_create(name="e", kind="other", file=ContentFile(b"", name="e.txt"), owner=researcher)


def test_undefined_sentence_scores_are_stored_as_missing_not_nan():
    assert MetricScore.clean_score(float("nan")) is None
    assert MetricScore.clean_score(2.5) == 2.5
    assert not math.isnan(MetricScore.clean_score(0.0))
