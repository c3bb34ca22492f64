"""Demo hook: score the demo study with BLEU and PINC so the Metrics tab has results.

Both runs are computed here, in-process (a few hundred candidates take well
under a second), so ``make run`` needs no worker to show them and stays quick.
Heavier metrics (PEM, pivot F1, paraphrase BLEU) are left for the researcher
to start from the page.
"""

from __future__ import annotations

from metrics.core.registry import available_metrics
from metrics.services.runs import metric_run_create
from metrics.services.worker import metric_run_execute

DEMO_METRICS = ("bleu", "pinc")


def setup(*, study, accounts, stdout=None) -> None:
    registered = {cls.slug for cls in available_metrics()}
    for slug in DEMO_METRICS:
        if slug not in registered:
            continue
        run = metric_run_create(study=study, metric=slug, created_by=accounts.get("researcher"), enqueue=False)
        run = metric_run_execute(run_id=run.pk)
        if stdout is not None:
            score = "—" if run.corpus_score is None else f"{run.corpus_score:.4f}"
            stdout.write(f"  metric run: {slug} on the demo study: {run.status}, corpus score {score}\n")
