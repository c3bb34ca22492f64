"""llm-judge runs in the product: the study's rubric goes to the model, unparseable answers are
shown on the run page, and the report knows which runs are LLM judges.

The endpoint is the small OpenAI-compatible server of tests/metrics/core/test_llm_judge.py
(protocol only); the real-model runs are in tests/metrics/core/test_llm_judge_model.py.
"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.judging.models import JudgingDesign
from metrics.core.llm_judge.metric import ENV_API_KEY, ENV_BASE_URL
from metrics.reports.selectors import report_metric_inputs
from metrics.services.runs import metric_run_create
from metrics.services.worker import metric_run_execute
from tests.metrics.core.test_llm_judge import SECRET, _Server

pytestmark = pytest.mark.django_db

CRITERIA = [
    {
        "slug": "meaning",
        "name": "Meaning kept",
        "help": "Does the paraphrase keep the meaning?",
        "scale": {"type": "points", "min": 0, "max": 3, "labels": ["none", "some", "most", "all"]},
    }
]


@pytest.fixture
def endpoint(monkeypatch, tmp_path):
    server = _Server()
    monkeypatch.setenv(ENV_BASE_URL, server.url)
    monkeypatch.setenv(ENV_API_KEY, SECRET)
    monkeypatch.setenv("PARAEVAL_CACHE_DIR", str(tmp_path))
    yield server
    server.close()


def _run(study, **params):
    run = metric_run_create(study=study, metric="llm-judge", params=params, enqueue=False)
    return metric_run_execute(run_id=run.pk)


def test_an_llm_judge_run_asks_about_the_studys_own_criterion_on_its_scale(endpoint, metric_study):
    JudgingDesign.objects.update_or_create(study=metric_study, defaults={"criteria": CRITERIA})
    run = _run(metric_study, model="copy-detector", criterion="meaning")
    assert run.status == "succeeded", run.error
    assert json.loads(run.params["rubric"])["criteria"] == CRITERIA
    prompt = endpoint.requests[0]["body"]["messages"][1]["content"]
    assert "Meaning kept. Does the paraphrase keep the meaning?" in prompt and "3 = all" in prompt
    assert "control" not in prompt.lower() and "machine" not in prompt  # blind, as the judges are
    assert SECRET not in run.signature and SECRET not in json.dumps(run.params)
    # The copy-detector model rates a copy 1 and anything else 4; 4 is off this 0-3 scale.
    control = next(s for s in run.system_scores if s["system"] == "control:identical")
    assert control["mean"] == 1.0 and control["undefined"] == 0
    human = next(s for s in run.system_scores if s["system"] == "human")
    assert human["undefined"] == human["n"] and human["mean"] is None


def test_a_study_without_a_design_of_its_own_gets_pems_rubric(endpoint, metric_study):
    JudgingDesign.objects.filter(study=metric_study).delete()
    run = _run(metric_study, model="copy-detector")
    assert run.params["rubric"] == "" and run.status == "succeeded"
    assert "1 = Unacceptable" in endpoint.requests[0]["body"]["messages"][1]["content"]


def test_the_run_page_says_how_many_answers_could_not_be_read(endpoint, client, researcher, metric_study):
    run = _run(metric_study, model="prose")
    assert run.status == "succeeded" and run.undefined_total == 21
    client.force_login(researcher)
    html = client.get(f"/studies/{metric_study.pk}/metrics/runs/{run.pk}/").content.decode()
    assert 'id="undefined-note"' in html and "21 candidates got no score" in html
    assert "Without a score" in html


def test_an_endpoint_error_that_echoes_the_key_never_reaches_the_run_its_page_or_the_runs_list(
    endpoint, client, researcher, metric_study
):
    run = _run(metric_study, model="echo-key")
    assert run.status == "failed" and "HTTP 401" in run.error and "[redacted]" in run.error
    assert SECRET not in run.error and "Bearer" not in run.error
    client.force_login(researcher)
    for url in (
        f"/studies/{metric_study.pk}/metrics/runs/{run.pk}/",
        f"/studies/{metric_study.pk}/metrics/",
        f"/api/studies/{metric_study.pk}/metric-runs/{run.pk}/",
        f"/api/studies/{metric_study.pk}/metric-runs/",
    ):
        r = client.get(url)
        assert r.status_code == 200 and SECRET not in r.content.decode(), url


def test_a_stored_run_error_never_holds_the_workers_key(endpoint, metric_study):
    from metrics.services.worker import metric_run_fail

    run = metric_run_create(study=metric_study, metric="llm-judge", params={"model": "m"}, enqueue=False)
    metric_run_fail(
        run_id=run.pk, error=f"RuntimeError: request failed with headers {{'Authorization': 'Bearer {SECRET}'}}"
    )
    run.refresh_from_db()
    assert run.status == "failed" and SECRET not in run.error and "[redacted]" in run.error


def test_an_llm_judge_timeout_beyond_600_seconds_is_refused_with_a_clear_400(
    endpoint, client, researcher, metric_study
):
    client.force_login(researcher)
    r = client.post(
        f"/api/studies/{metric_study.pk}/metric-runs/create/",
        {"metric": "llm-judge", "params": {"model": "m", "timeout": 1e12}},
        content_type="application/json",
    )
    assert r.status_code == 400
    assert "'timeout' must be ≤ 600" in r.content.decode()


def test_the_report_inputs_mark_an_llm_judge_run_with_the_criterion_it_rated(endpoint, metric_study):
    run = _run(metric_study, model="copy-detector")
    inputs = report_metric_inputs(study=metric_study, judged_items={str(pk) for pk in range(10**6)})
    info = next(r for r in inputs.runs if r["id"] == run.pk)
    assert info["judge_criterion"] == "overall"


def test_the_template_command_prints_the_default_and_renders_an_item(tmp_path):
    out = StringIO()
    call_command("llm_judge_template", stdout=out)
    assert out.getvalue().startswith("# template v1, hash ") and "$original" in out.getvalue()
    rubric = tmp_path / "rubric.json"
    rubric.write_text(json.dumps(CRITERIA))
    out = StringIO()
    call_command(
        "llm_judge_template",
        "--render",
        "--rubric",
        str(rubric),
        "--criterion",
        "meaning",
        "--original",
        "A.",
        "--candidate",
        "B.",
        stdout=out,
    )
    assert "--- user" in out.getvalue() and "Original: A.\nParaphrase: B." in out.getvalue()
    bad = tmp_path / "t.txt"
    bad.write_text("[user]\n$original only")
    with pytest.raises(Exception, match=r"add \$candidate"):
        call_command("llm_judge_template", "--template", str(bad), stdout=StringIO())
