"""Paired tests read a metric run's stored statistics (issue 16): nothing is re-scored."""

from __future__ import annotations

import numpy as np
import pytest

from annotation.models import Candidate
from metrics import selectors
from metrics.core.base.bootstrap import paired_bootstrap
from metrics.core.registry import create_metric
from metrics.core.stats.significance import metric_pairwise_tests
from metrics.services.runs import metric_run_create
from metrics.services.worker import metric_run_execute

pytestmark = pytest.mark.django_db


def test_stored_statistics_come_back_aligned_by_original_without_controls(metric_study):
    run = metric_run_create(study=metric_study, metric="bleu", chunk_size=5, enqueue=False)
    run = metric_run_execute(run_id=run.pk)
    originals, stats = selectors.metric_run_paired_stats(run=run)
    assert originals == [f"v{i}" for i in range(7)]
    assert list(stats) == ["human", "machine"]  # the identical-copy control is left out
    metric = create_metric("bleu", run.params)
    for system, rows in stats.items():
        cands = (
            Candidate.objects.filter(original__study=metric_study, system__name=system)
            .select_related("original")
            .order_by("original__position")
        )
        direct = metric.segment_stats([c.original.text for c in cands], [c.text for c in cands])
        assert np.array_equal(rows, direct)
    board = metric_pairwise_tests(metric, stats, n_resamples=200)
    assert (
        board.pvalue("human", "machine")
        == paired_bootstrap(metric, stats["human"], stats["machine"], n_resamples=200).pvalue
    )
    assert board.statistics == (metric.aggregate(stats["human"]), metric.aggregate(stats["machine"]))


def test_an_original_missing_for_one_system_is_left_out_of_the_pairing(metric_study):
    run = metric_run_execute(run_id=metric_run_create(study=metric_study, metric="pinc", enqueue=False).pk)
    run.scores.filter(candidate__original__external_id="v3", candidate__system__name="machine").delete()
    originals, stats = selectors.metric_run_paired_stats(run=run)
    assert "v3" not in originals and len(originals) == 6
    assert all(rows.shape == (6, 2) for rows in stats.values())
