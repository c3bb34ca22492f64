"""The planner in a study: the API queues it, the worker stores it, the pages and the CLI show it."""

from __future__ import annotations

import json
from io import StringIO
from unittest import mock

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from annotation.judging.protocols.absolute.simulation import simulated_judges_fill
from metrics.dashboard.models import Dashboard
from metrics.dashboard.services import planning
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
    study_id, params, request = enqueue.call_args.args[1:]
    assert planning.study_plan_claim(study=piloted, request=request)  # what the task does
    planning.study_plan_run(study=piloted, params=params, request=request)
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


# --- issue 38: a plan's cost, its queue, identical requests, a dead worker ------------------------------

SMALL_DELTA = {"n_originals": 10, "n_judges": 3, "n_simulations": 200, "delta": 0.02}


def test_a_form_legal_plan_whose_separation_table_is_too_large_is_refused_before_any_work(piloted, researcher, client):
    """The separation table was not counted: a form-legal small delta ran minutes and hundreds of MB."""
    from metrics.dashboard.services.planning import MAX_CELLS

    with mock.patch("metrics.dashboard.services.queueing.job_enqueue") as enqueue:
        r = _api(researcher).post(f"/api/dashboard/studies/{piloted.pk}/plan/", SMALL_DELTA, format="json")
        assert r.status_code == 400 and set(r.json()) == {"delta"}
        assert "raise delta" in r.json()["delta"][0] and f"{MAX_CELLS:,}" in r.json()["delta"][0]
        stated = {**SMALL_DELTA, "source": "stated", "system_means": {"a": 3.4, "b": 3.1}}
        r = _api(researcher).post(f"/api/dashboard/studies/{piloted.pk}/plan/", stated, format="json")
        assert r.status_code == 400 and "raise delta" in r.json()["delta"][0]
        # The page's form says it too, at the field, with a 400.
        client.force_login(researcher)
        form = {**SMALL_DELTA, "source": "pilot", "level": 0.05, "item_sd": 0.7, "judge_bias_sd": 0.25, "noise_sd": 0.6}
        page = client.post(f"/studies/{piloted.pk}/plan/", form)
        assert page.status_code == 400 and "raise delta" in page.content.decode()
    enqueue.assert_not_called()
    assert (Dashboard.objects.filter(study=piloted).first() is None) or not Dashboard.objects.get(study=piloted).plan


def test_a_plan_drawing_a_huge_simulated_study_is_refused_naming_the_judges(piloted, researcher):
    """Form-legal values could need tens of GB: 20,000 originals × 500 judges drawn per simulated study."""
    r = _api(researcher).post(
        f"/api/dashboard/studies/{piloted.pk}/plan/",
        {"n_originals": 20000, "n_judges": 500, "judges_per_item": 1, "n_simulations": 10},
        format="json",
    )
    assert r.status_code == 400 and "lower n_judges or n_originals" in r.json()["n_judges"][0]


def test_identical_plan_requests_while_one_computes_are_one_request(piloted, researcher):
    from django.test import TestCase

    url = f"/api/dashboard/studies/{piloted.pk}/plan/"
    with mock.patch("metrics.dashboard.services.queueing.job_enqueue") as enqueue:
        with TestCase.captureOnCommitCallbacks(execute=True):
            first = _api(researcher).post(url, FAST, format="json").json()
            again = _api(researcher).post(url, FAST, format="json").json()
        assert enqueue.call_count == 1 and first["request"] == again["request"]
        with TestCase.captureOnCommitCallbacks(execute=True):
            other = _api(researcher).post(url, {**FAST, "n_simulations": 30}, format="json").json()
        assert enqueue.call_count == 2 and other["request"] != first["request"]
    # The superseded request's worker computes nothing and cannot overwrite the newer plan.
    assert not planning.study_plan_claim(study=piloted, request=first["request"])
    assert planning.study_plan_claim(study=piloted, request=other["request"])
    assert not planning.study_plan_claim(study=piloted, request=other["request"])  # a second delivery
    planning.study_plan_run(study=piloted, params=first["params"], request=first["request"])
    assert Dashboard.objects.get(study=piloted).plan["request"] == other["request"]


def test_a_plan_whose_worker_died_is_failed_by_the_requeue_pass_and_the_page_says_so(piloted, researcher, client):
    from datetime import timedelta

    from django.test import TestCase
    from django.utils import timezone

    from config.recovery import requeue_jobs
    from metrics.dashboard.services.queueing import plans_requeue_stale

    url = f"/api/dashboard/studies/{piloted.pk}/plan/"
    with mock.patch("metrics.dashboard.services.queueing.job_enqueue") as enqueue:
        with TestCase.captureOnCommitCallbacks(execute=True):
            request = _api(researcher).post(url, FAST, format="json").json()["request"]
        # Its message was lost (the broker was away): not started, so the pass sends it again.
        Dashboard.objects.filter(study=piloted).update(plan_at=timezone.now() - timedelta(minutes=10))
        assert plans_requeue_stale(stale_after=timedelta(minutes=5), queued_after=timedelta(minutes=5)) == 1
        assert enqueue.call_count == 2 and enqueue.call_args.args[1] == piloted.pk
        assert enqueue.call_args.args[3] == request
    assert Dashboard.objects.get(study=piloted).plan["status"] == "computing"
    # A worker took it, then died: no heartbeat touches it any more.
    assert planning.study_plan_claim(study=piloted, request=request)
    assert plans_requeue_stale(stale_after=timedelta(minutes=5)) == 0  # alive as far as anyone knows
    Dashboard.objects.filter(study=piloted).update(plan_at=timezone.now() - timedelta(minutes=10))
    counts = {what: n for n, what in requeue_jobs(stale_after=timedelta(minutes=5))}
    assert counts["plan(s)"] == 1
    plan = Dashboard.objects.get(study=piloted).plan
    assert plan["status"] == "failed" and "worker computing this plan stopped" in plan["error"]
    client.force_login(researcher)
    page = client.get(f"/studies/{piloted.pk}/plan/").content.decode()
    assert "worker computing this plan stopped" in page
    assert _api(researcher).get(url).json()["status"] == "failed"


def test_a_plan_stuck_computing_is_not_a_request_to_join_and_an_old_one_without_an_id_is_failed(piloted, researcher):
    from datetime import timedelta

    from django.test import TestCase
    from django.utils import timezone

    from metrics.dashboard.services.queueing import plans_requeue_stale

    url = f"/api/dashboard/studies/{piloted.pk}/plan/"
    with mock.patch("metrics.dashboard.services.queueing.job_enqueue") as enqueue:
        with TestCase.captureOnCommitCallbacks(execute=True):
            first = _api(researcher).post(url, FAST, format="json").json()
        Dashboard.objects.filter(study=piloted).update(plan_at=timezone.now() - timedelta(hours=1))
        with TestCase.captureOnCommitCallbacks(execute=True):
            again = _api(researcher).post(url, FAST, format="json").json()
    assert enqueue.call_count == 2 and again["request"] != first["request"]  # a silent hour: asked anew
    # A plan queued before plans had an id, computing for an hour: failed by the pass.
    legacy = {"status": "computing", "params": first["params"]}
    Dashboard.objects.filter(study=piloted).update(plan=legacy, plan_at=timezone.now() - timedelta(hours=1))
    assert plans_requeue_stale(stale_after=timedelta(minutes=5)) == 1
    assert Dashboard.objects.get(study=piloted).plan["status"] == "failed"


def _without_overall(study):
    """The piloted study as if its design had no ``overall`` criterion (the simulator only fills
    PEM's four, so the design and the judgments are trimmed afterwards)."""
    from annotation.judging.models import JudgingDesign
    from annotation.judging.protocols.absolute.models import Judgment

    design = JudgingDesign.objects.get(study=study)
    JudgingDesign.objects.filter(pk=design.pk).update(criteria=[c for c in design.criteria if c["slug"] != "overall"])
    for j in Judgment.objects.filter(study=study):
        j.values.pop("overall", None)
        j.save(update_fields=["values"])
    return [c["slug"] for c in design.criteria if c["slug"] != "overall"]


def test_a_design_without_overall_plans_from_its_first_criterion_or_the_one_named(piloted, researcher):
    first, second = _without_overall(piloted)[:2]
    a = planning.pilot_assumptions(study=piloted)
    assert a.source == "pilot" and set(a.system_means) == {"human", "machine"} and a.discrete
    named = planning.pilot_assumptions(study=piloted, criterion=second)
    assert named.system_means != a.system_means or named.noise_sd != a.noise_sd
    params = planning.plan_params_clean({**FAST, "criterion": second}, study=piloted)
    assert params["criterion"] == second
    assert planning.study_plan(study=piloted, params=params)["assumptions"]["source"] == "pilot"
    r = _api(researcher).post(
        f"/api/dashboard/studies/{piloted.pk}/plan/", {**FAST, "criterion": "nope"}, format="json"
    )
    assert r.status_code == 400 and "criterion" in r.json() and first in json.dumps(r.json())


def _protocol_study(researcher, protocol, **design):
    from django.contrib.auth.models import User

    from annotation.enums import Role
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from annotation.services.membership import study_member_add
    from tests.factories import study_with_data

    study = study_with_data(owner=researcher, n_originals=4, systems=("alpha", "beta", "gamma"), name=protocol)
    for name in ("ann", "bob"):
        user = User.objects.filter(username=name).first() or User.objects.create_user(username=name, password="pw")
        study_member_add(study=study, user=user, role=Role.JUDGE)
    design_update(study=study, changes={"protocol": protocol, "seed": 5, **design})
    study_judging_open(study=study)
    study.refresh_from_db()
    return study


def test_an_esa_pilot_plans_from_its_0_to_100_scores(researcher):
    from annotation.judging.models import Assignment
    from annotation.judging.protocols.esa import services as esa

    study = _protocol_study(researcher, "esa", control_counts={"identical": 0, "random": 0, "unigram": 0})
    for a in Assignment.objects.filter(study=study).select_related("judge"):
        while (entry := esa.esa_item_next_for_judge(assignment=a)) is not None:
            score = {"alpha": 80, "beta": 60, "gamma": 40}[esa_system(entry.token)]
            esa.esa_submit(
                study=study,
                judge=a.judge,
                token=entry.token,
                key=f"k-{entry.token}",
                spans=[],
                score=score + (5 if a.judge.username == "ann" else 0),
                serve_stamp=entry.serve_stamp,
            )
    a = planning.pilot_assumptions(study=study)
    assert not a.discrete and a.system_means == {"alpha": 82.5, "beta": 62.5, "gamma": 42.5}
    plan = planning.study_plan(study=study, params=planning.plan_params_clean({**FAST, "delta": 5}, study=study))
    assert plan["assumptions"]["source"] == "pilot"


def esa_system(token):
    from annotation.judging.protocols.esa.models import EsaItem

    return EsaItem.objects.select_related("candidate__system").get(token=token).candidate.system.name


@pytest.mark.parametrize(
    ("protocol", "design", "says"),
    [("ranking", {"ranking_k": 3}, "orders only"), ("comparison", {}, "preferences")],
)
def test_a_pilot_of_orders_or_preferences_is_refused_saying_what_the_planner_supports(
    researcher, protocol, design, says
):
    study = _protocol_study(researcher, protocol, **design)
    r = _api(researcher).post(f"/api/dashboard/studies/{study.pk}/plan/", FAST, format="json")
    body = json.dumps(r.json())
    assert r.status_code == 400 and says in body and "stated" in body and "overall" not in body
    params = planning.plan_params_clean({**FAST, "source": "stated"}, study=study)
    assert planning.study_plan(study=study, params=params)["assumptions"]["source"] == "stated"
