"""The demo hook scores the demo study with BLEU and PINC, in-process, so the Metrics tab has results."""

import io

import pytest

from metrics import demo, selectors

pytestmark = pytest.mark.django_db


def test_the_demo_hook_leaves_finished_bleu_and_pinc_runs(metric_study, researcher):
    out = io.StringIO()
    demo.setup(study=metric_study, accounts={"researcher": researcher}, stdout=out)
    runs = {r.metric: r for r in selectors.study_metric_runs(study=metric_study)}
    assert set(runs) == {"bleu", "pinc"}
    assert all(r.status == "succeeded" and r.n == 21 and r.created_by == researcher for r in runs.values())
    assert f"bleu on the demo study: succeeded, corpus score {runs['bleu'].corpus_score:.4f}" in out.getvalue()
