"""The planner in a study: the API queues it, the worker stores it, the pages and the CLI show it."""

from __future__ import annotations

import json
from io import StringIO
from unittest import mock

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from metrics.dashboard.models import Dashboard
from metrics.dashboard.services import planning
from metrics.reports.services.simulation import simulated_judges_fill
from tests.metrics.reports.conftest import make_study_data, open_judging

pytestmark = pytest.mark.django_db

FAST = {"n_originals": 10, "n_judges": 3, "n_simulations": 20, "delta": 0.5}


@pytest.fixture
def piloted(researcher):
    study = open_judging(make_study_data(researcher, name="Pilot", n_originals=10, systems=("human", "machine")))
    simulated_judges_fill(study=study, n_judges=3, seed=2)
    return study


def _api(user):
    c = APIClient()
    c.force_authenticate(user)
    return c


def test_the_api_queues_a_plan_and_the_worker_stores_it_from_the_pilot(piloted, researcher):
    with mock.patch("metrics.dashboard.services.queueing.job_enqueue") as enqueue:
        from django.test import TestCase

        with TestCase.captureOnCommitCallbacks(execute=True):
            r = _api(researcher).post(f"/api/dashboard/studies/{piloted.pk}/plan/", FAST, format="json")
    assert r.status_code == 202 and r.json()["status"] == "computing"
    study_id, params = enqueue.call_args.args[1:]
    planning.study_plan_run(study=piloted, params=params)  # what the task does
    plan = _api(researcher).get(f"/api/dashboard/studies/{piloted.pk}/plan/").json()
    assert plan["status"] == "done" and plan["assumptions"]["source"] == "pilot"
    assert set(plan["assumptions"]["system_means"]) == {"human", "machine"}
    assert 0 <= plan["ranking_right"]["low"] <= plan["ranking_right"]["estimate"] <= plan["ranking_right"]["high"] <= 1
    assert plan["ranking_right"]["n"] == 20 and plan["separation"]


def test_bad_plan_requests_are_400_with_the_field_named(piloted, researcher):
    client = _api(researcher)
    for bad, field in (
        ({"n_originals": 1}, "n_originals"),
        ({"level": 2}, "level"),
        ({"judges_per_item": 5, "n_judges": 2}, "judges_per_item"),
        ({"n_originals": 20000, "n_simulations": 2000, "n_judges": 100}, "n_simulations"),
    ):
        r = client.post(f"/api/dashboard/studies/{piloted.pk}/plan/", bad, format="json")
        assert r.status_code == 400 and field in r.json(), (bad, r.json())


def test_a_study_without_judgments_has_no_pilot_but_a_stated_plan_works(researcher):
    study = open_judging(make_study_data(researcher, name="Before opening", n_originals=5, systems=("a", "b", "c")))
    r = _api(researcher).post(f"/api/dashboard/studies/{study.pk}/plan/", FAST, format="json")
    assert r.status_code == 400 and "no usable pilot" in json.dumps(r.json())
    params = planning.plan_params_clean({**FAST, "source": "stated"}, study=study)
    plan = planning.study_plan(study=study, params=params)
    assert list(plan["assumptions"]["system_means"]) == ["a", "b", "c"]


def test_the_plan_page_shows_the_answer_and_the_form_queues_one(piloted, researcher, client):
    params = planning.plan_params_clean(FAST, study=piloted)
    planning.study_plan_run(study=piloted, params=params)
    client.force_login(researcher)
    page = client.get(f"/studies/{piloted.pk}/plan/").content.decode()
    assert "P(the final ranking is right)" in page and 'id="plan-separation"' in page
    with mock.patch("metrics.dashboard.services.queueing.job_enqueue"):
        r = client.post(
            f"/studies/{piloted.pk}/plan/",
            {**FAST, "source": "pilot", "level": 0.05, "item_sd": 0.7, "judge_bias_sd": 0.25, "noise_sd": 0.6},
        )
    assert r.status_code == 302 and Dashboard.objects.get(study=piloted).plan["status"] == "computing"


def test_the_cli_plans_from_a_study_from_stated_assumptions_and_says_what_is_wrong(piloted):
    out = StringIO()
    call_command("plan_study", "--study", str(piloted.pk), "--originals", "10", "--simulations", "20", stdout=out)
    assert "P(ranking right)" in out.getvalue() and "Assumptions (pilot)" in out.getvalue()
    out = StringIO()
    call_command(
        "plan_study", "--systems", "x=3.5,y=3.0", "--originals", "10", "--simulations", "20", "--json", stdout=out
    )
    plan = json.loads(out.getvalue())
    assert plan["assumptions"]["system_means"] == {"x": 3.5, "y": 3.0}
    with pytest.raises(CommandError, match="give --study"):
        call_command("plan_study", "--originals", "10")
    with pytest.raises(CommandError, match="level"):
        call_command("plan_study", "--systems", "x=3,y=2", "--level", "3")


def test_the_cli_plans_from_a_pilot_file(tmp_path):
    from metrics.core.stats.simulate import simulate_judgments

    path = tmp_path / "pilot.csv"
    simulate_judgments(n_originals=20, n_judges=3, controls=(), seed=1).to_csv(path, index=False)
    out = StringIO()
    call_command("plan_study", "--pilot", str(path), "--originals", "10", "--simulations", "20", stdout=out)
    assert "Assumptions (pilot)" in out.getvalue() and "human1" in out.getvalue()
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    with pytest.raises(CommandError, match="lacks the column"):
        call_command("plan_study", "--pilot", str(tmp_path / "bad.csv"))


def test_the_design_page_shows_the_last_plan_before_opening(researcher, client):
    study = make_study_data(researcher, name="Not open yet", n_originals=5, systems=("a", "b"))
    client.force_login(researcher)
    page = client.get(f"/studies/{study.pk}/judging/design/").content.decode()
    assert 'id="plan-summary"' in page and f"/studies/{study.pk}/plan/" in page and "Plan the study" in page
    params = planning.plan_params_clean({**FAST, "source": "stated"}, study=study)
    planning.study_plan_run(study=study, params=params)
    page = client.get(f"/studies/{study.pk}/judging/design/").content.decode()
    assert "P(the ranking is right)" in page


def test_a_fully_crossed_design_plans_every_judge_per_item_and_a_k_design_its_k(researcher):
    study = make_study_data(researcher, name="Crossed", n_originals=4, systems=("a", "b"))
    assert planning.plan_params_clean({}, study=study)["judges_per_item"] is None
    from annotation.judging.services.design import design_update

    design_update(study=study, changes={"judges_mode": "k", "judges_per_item": 2})
    assert planning.plan_params_clean({"n_judges": 4}, study=study)["judges_per_item"] == 2
