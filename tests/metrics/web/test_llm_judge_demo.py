"""The demo study judged by a real local LLM: SmolLM2-135M served by llama.cpp on loopback, run as
``llm-judge`` through the endpoint, and shown in the report's leaderboard beside the human ceiling.

The demo is cut to its first 12 originals (a 135M model on 2 CPU cores takes about a
second an item) and judged by the simulator, as test_demo_study.py does. Skipped, naming
``make install-llm``, where llama-cpp-python[server] or the GGUF is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.demo import DEMO_STUDY_NAME
from annotation.models import Original, Study
from metrics import services
from metrics.core.llm_judge.metric import ENV_API_KEY, ENV_BASE_URL, ENV_MODEL
from metrics.reports.leaderboard_md import meta_evaluation_markdown
from tests.metrics.core.test_llm_judge_model import llama_server, needs_server  # noqa: F401 - a fixture

ROOT = Path(__file__).resolve().parents[3]

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


@needs_server
def test_an_llm_judge_on_the_demo_study_is_ranked_beside_the_human_ceiling(llama_server, monkeypatch, tmp_path):  # noqa: F811
    monkeypatch.setenv(ENV_BASE_URL, llama_server)
    monkeypatch.setenv(ENV_API_KEY, "")
    monkeypatch.setenv(ENV_MODEL, "smollm2")
    monkeypatch.setenv("PARAEVAL_CACHE_DIR", str(tmp_path / "cache"))
    call_command("load_demo", "--quiet-credentials")
    study = Study.objects.get(name=DEMO_STUDY_NAME)
    Original.objects.filter(study=study, position__gte=12).delete()
    call_command("simulate_judges", DEMO_STUDY_NAME, "--judges", "3", "--seed", "1",
                 "--profile", str(ROOT / "fixtures" / "demo" / "simulation_profile.json"))
    for slug, params in (("chrf", {}), ("llm-judge", {"max_tokens": 4, "concurrency": 2})):
        run = services.metric_run_create(study=study, metric=slug, params=params, enqueue=False)
        run = services.metric_run_execute(run_id=run.pk)
        assert run.status == "succeeded", run.error
    llm_run = run
    assert "model:smollm2" in llm_run.signature
    call_command("report", DEMO_STUDY_NAME, "--out", str(tmp_path / "report"), "--n-boot", "50",
                 "--min-shared", "10")
    result = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))["result"]
    meta = result["metric_meta_evaluation"]
    ceiling = meta["segment"]["human_ceiling"]
    assert ceiling["human"]["statistic"] is not None and ceiling["n_judges"] == 3
    assert {r["metric"] for r in ceiling["metrics"]} == {"chrf", "llm-judge"}
    (pool,) = meta["llm_judge_pool"]
    assert pool["criterion"] == "overall" and pool["with_llm"][0]["judge"] == "llm-judge"
    board = meta_evaluation_markdown(result)
    assert "| llm-judge |" in board and "Human ceiling (overall" in board and "human judges + llm-judge" in board
