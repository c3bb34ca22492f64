"""A metric run scores each distinct (original, candidate, reference) of a chunk once and
copies its statistics to every candidate with the same texts (ParaBank's identical
outputs of several systems), with the same numbers as scoring every row."""

from __future__ import annotations

import pytest
import sacrebleu

from metrics.core.registry import get_metric
from metrics.models import MetricScore
from metrics.services.runs import metric_run_create
from metrics.services.worker import metric_run_execute
from tests.factories import CandidateFactory, SystemFactory

from .conftest import make_study
from .sentences import HUMAN

pytestmark = pytest.mark.django_db


def test_identical_candidates_of_two_systems_are_scored_once_with_the_same_numbers(researcher, monkeypatch):
    study = make_study(researcher, with_control=False)
    copy = SystemFactory(study=study, name="copy-of-human")
    for original in study.originals.order_by("position"):
        CandidateFactory(original=original, system=copy, text=HUMAN[original.position])
    seen: list[int] = []
    cls = get_metric("chrf")
    real = cls.segment_stats

    def counting(self, originals, candidates, references=None):
        seen.append(len(candidates))
        return real(self, originals, candidates, references)

    monkeypatch.setattr(cls, "segment_stats", counting)
    run = metric_run_create(study=study, metric="chrf", enqueue=False)
    run = metric_run_execute(run_id=run.pk)
    assert run.status == "succeeded"
    assert run.n == 21 and sum(seen) == 14  # 7 originals × (human, machine); the copies are not scored again
    scores = MetricScore.objects.filter(run=run).select_related("candidate__original", "candidate__system")
    assert scores.count() == 21
    for s in scores:
        expected = sacrebleu.sentence_chrf(s.candidate.text, [s.candidate.original.text]).score
        assert s.score == pytest.approx(expected, abs=1e-9)
    by_system = {row["system"]: row for row in run.system_scores}
    assert by_system["copy-of-human"]["mean"] == pytest.approx(by_system["human"]["mean"])
