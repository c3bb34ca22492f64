"""The study dashboard: the cached snapshot, its version stamp, the answers equal to the report,
the API (researchers only, in the OpenAPI schema) and the page."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from unittest import mock

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.judging.models import Assignment
from annotation.judging.protocols.absolute.models import AssignmentItem
from annotation.judging.services.assignments import assignment_release_unfinished
from annotation.judging.services.design import design_update
from metrics.dashboard import selectors
from metrics.dashboard.models import Dashboard
from metrics.dashboard.services import queueing, snapshot
from metrics.reports.services.build import report_build
from metrics.reports.services.queueing import report_create
from tests.metrics.reports.conftest import make_judged_study, open_judging, run_metric
from tests.metrics.reports.test_comparison_report import judged_comparison  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(researcher):
    return make_judged_study(researcher, name="Watched", n_originals=10, systems=("human", "machine", "mt"), n_judges=3)


def _api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_answers_equal_the_report_built_from_the_same_judgments(judged, researcher):
    run_metric(judged, "bleu")
    dash = snapshot.dashboard_refresh(study=judged)
    report = report_create(study=judged, created_by=researcher, enqueue=False)
    report = report_build(report_id=report.pk)
    answers = dash.snapshot["answers"]
    assert answers["available"] and answers["fingerprint"] == report.fingerprint
    assert answers["ranking"] == report.result["system_ranking"]
    for row in answers["agreement"]:
        alpha = report.result["agreement"][row["criterion"]]["krippendorff_alpha"][row["level"]]
        assert (row["alpha"], row["ci_low"], row["ci_high"]) == (alpha["statistic"], alpha["ci_low"], alpha["ci_high"])
    assert answers["metrics"]["segment"] == report.result["metric_leaderboard"]["segment"]
    assert [r["metric"] for r in answers["metrics"]["segment"]] == ["bleu"]


def test_live_figures_count_progress_coverage_and_qc_per_judge(judged):
    live = selectors.dashboard_live(study=judged, rate=Decimal("0.10"), currency="USD")
    n_items = AssignmentItem.objects.filter(assignment__study=judged).count()
    assert live["totals"]["done"] == live["totals"]["total"] == n_items
    assert live["coverage"]["coverage"] == 1.0 and live["coverage"]["k"] == 3
    assert live["coverage"]["items_complete"] == live["coverage"]["items"] == n_items // 3
    assert {q["judge"] for q in live["qc"]} == {"sim-judge-01", "sim-judge-02", "sim-judge-03"}
    assert all(q["verdict"] in {"pass", "flagged"} and q["tests"] for q in live["qc"])
    assert (
        live["projection"]["cost_spent"]
        == live["projection"]["cost_projected"]
        == str((Decimal("0.10") * n_items).quantize(Decimal("0.01")))
    )
    assert live["projection"]["items_left"] == 0 and live["projection"]["currency"] == "USD"


def test_a_screened_out_judge_shows_the_rule_that_fired(judged):
    from annotation.judging import screening

    a = Assignment.objects.get(study=judged, judge__username="sim-judge-02")
    screening.screen_out(assignment=a, rule="attention", reason="Failed 2 attention checks.")
    live = selectors.dashboard_live(study=judged)
    row = next(q for q in live["qc"] if q["judge"] == "sim-judge-02")
    assert row["verdict"] == "screened out"
    assert row["screened_out"] == {"rule": "attention", "reason": "Failed 2 attention checks."}


def test_the_version_moves_with_a_new_judgment_and_the_poll_queues_one_refresh(
    researcher, django_capture_on_commit_callbacks
):
    from annotation.judging.protocols.absolute.simulation import simulated_judges_fill
    from tests.metrics.reports.conftest import make_study_data

    study = open_judging(make_study_data(researcher, name="Moving", n_originals=4))
    simulated_judges_fill(study=study, n_judges=2, seed=1)
    snapshot.dashboard_refresh(study=study)
    before = selectors.dashboard_version(study=study)
    with django_capture_on_commit_callbacks() as queued:
        dash, version = queueing.dashboard_poll(study=study)
    assert version == before == dash.snapshot_version and not [c for c in queued if "refresh" in repr(c)]
    simulated_judges_fill(study=study, n_judges=3, seed=2)  # a third judge rates: new judgments
    cache.delete(f"paraeval:dashboard-version:{study.pk}")  # past the stamp's 2 s shared by polls
    with mock.patch("metrics.dashboard.services.queueing.job_enqueue") as enqueue:
        with django_capture_on_commit_callbacks(execute=True):
            dash, version = queueing.dashboard_poll(study=study)
        with django_capture_on_commit_callbacks(execute=True):
            queueing.dashboard_poll(study=study)  # a second dashboard on the same study
    assert version != before and enqueue.call_count == 1
    assert enqueue.call_args.args[1] == study.pk


@override_settings(PARAEVAL_DASHBOARD_REFRESH_SECONDS=60)
def test_a_fresh_snapshot_rests_for_the_refresh_interval_before_a_poll_queues_another(
    researcher, django_capture_on_commit_callbacks
):
    from annotation.judging.protocols.absolute.simulation import simulated_judges_fill
    from tests.metrics.reports.conftest import make_study_data

    study = open_judging(make_study_data(researcher, name="Resting", n_originals=4))
    simulated_judges_fill(study=study, n_judges=2, seed=1)
    refreshed = snapshot.dashboard_refresh(study=study)
    simulated_judges_fill(study=study, n_judges=3, seed=2)  # the version moves
    cache.delete(f"paraeval:dashboard-version:{study.pk}")
    with mock.patch("metrics.dashboard.services.queueing.job_enqueue") as enqueue:
        with django_capture_on_commit_callbacks(execute=True):
            dash, version = queueing.dashboard_poll(study=study)
        assert version != dash.snapshot_version and enqueue.call_count == 0  # stale, but resting
        Dashboard.objects.filter(pk=refreshed.pk).update(snapshot_at=refreshed.snapshot_at - timedelta(seconds=61))
        with django_capture_on_commit_callbacks(execute=True):
            queueing.dashboard_poll(study=study)
    assert enqueue.call_count == 1  # past the interval: one refresh


@override_settings(PARAEVAL_DASHBOARD_REFRESH_SECONDS=5, PARAEVAL_DASHBOARD_DUTY=0.1)
def test_after_a_long_refresh_the_snapshot_rests_in_proportion_to_it(researcher, django_capture_on_commit_callbacks):
    """A refresh that took 2 s (worker and database) is followed by 18 s of rest at a 10 % duty:
    a poll 10 s later serves the snapshot and queues nothing; one 19 s later queues a refresh."""
    from annotation.judging.protocols.absolute.simulation import simulated_judges_fill
    from tests.metrics.reports.conftest import make_study_data

    study = open_judging(make_study_data(researcher, name="Duty", n_originals=4))
    simulated_judges_fill(study=study, n_judges=2, seed=1)
    refreshed = snapshot.dashboard_refresh(study=study)
    assert refreshed.refresh_wall_seconds is not None and refreshed.refresh_wall_seconds > 0
    Dashboard.objects.filter(pk=refreshed.pk).update(refresh_wall_seconds=2.0)
    assert snapshot.refresh_rest(dashboard=Dashboard.objects.get(pk=refreshed.pk)) == timedelta(seconds=18)
    Dashboard.objects.filter(pk=refreshed.pk).update(refresh_wall_seconds=0.05)
    assert snapshot.refresh_rest(dashboard=Dashboard.objects.get(pk=refreshed.pk)) == timedelta(seconds=5)
    Dashboard.objects.filter(pk=refreshed.pk).update(refresh_wall_seconds=2.0)
    simulated_judges_fill(study=study, n_judges=3, seed=2)  # the version moves
    for ago, queued in ((10, 0), (19, 1)):
        Dashboard.objects.filter(pk=refreshed.pk).update(snapshot_at=refreshed.snapshot_at - timedelta(seconds=ago))
        cache.delete(f"paraeval:dashboard-version:{study.pk}")
        with mock.patch("metrics.dashboard.services.queueing.job_enqueue") as enqueue:
            with django_capture_on_commit_callbacks(execute=True):
                queueing.dashboard_poll(study=study)
        assert enqueue.call_count == queued, ago


@override_settings(PARAEVAL_DASHBOARD_ANSWERS_SECONDS=3600)
def test_heavy_answers_wait_for_their_interval_while_the_counts_follow(researcher):
    from annotation.judging.protocols.absolute.simulation import simulated_judges_fill
    from tests.metrics.reports.conftest import make_study_data

    study = open_judging(make_study_data(researcher, name="Interval", n_originals=4))
    simulated_judges_fill(study=study, n_judges=2, seed=1)
    first = snapshot.dashboard_refresh(study=study)
    simulated_judges_fill(study=study, n_judges=3, seed=2)
    second = snapshot.dashboard_refresh(study=study)
    assert second.snapshot["totals"]["judgments"] > first.snapshot["totals"]["judgments"]
    assert second.snapshot["answers"] == first.snapshot["answers"] and not second.snapshot["answers_current"]
    third = snapshot.dashboard_refresh(study=study, force_answers=True)
    assert third.snapshot["answers_current"] and third.snapshot["answers"] != first.snapshot["answers"]


def test_api_serves_the_snapshot_to_the_studys_researchers_only(judged, researcher, make_user):
    snapshot.dashboard_refresh(study=judged)
    r = _api(researcher).get(f"/api/dashboard/studies/{judged.pk}/")
    assert r.status_code == 200
    body = r.json()
    assert body["current"] and body["snapshot"]["totals"]["judgments"] > 0
    assert body["snapshot"]["answers"]["ranking"]["systems"]
    stranger = make_user("stranger", researcher=True)
    assert _api(stranger).get(f"/api/dashboard/studies/{judged.pk}/").status_code == 403
    judge = judged.memberships.filter(role="judge").first().user
    assert _api(judge).get(f"/api/dashboard/studies/{judged.pk}/").status_code == 403
    assert APIClient().get(f"/api/dashboard/studies/{judged.pk}/").status_code in (401, 403)
    assert _api(researcher).get("/api/dashboard/studies/999999/").status_code == 404


def test_an_unchanged_answer_is_a_304_without_a_body_and_any_change_gives_a_new_one(judged, researcher):
    """A poll that sends back the ETag of its last answer gets 304 (no snapshot) until the
    snapshot, the rate or the plan change; the 200 it gets then equals a fresh poll's. The study
    moving past the snapshot is said in a header of the 304, not by sending the snapshot again."""
    from annotation.judging.protocols.absolute.simulation import simulated_judges_fill

    client, url = _api(researcher), f"/api/dashboard/studies/{judged.pk}/"
    snapshot.dashboard_refresh(study=judged)
    first = client.get(url)
    etag = first.headers["ETag"]
    assert first.status_code == 200 and "private" in first.headers["Cache-Control"]
    assert "no-store" in first.headers["Cache-Control"]  # a signed-in person's answers are never stored
    assert first.json()["current"] is True and first.headers["Paraeval-Current"] == "true"
    unchanged = client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert unchanged.status_code == 304 and unchanged.content == b"" and unchanged.headers["ETag"] == etag
    assert unchanged.headers["Paraeval-Current"] == "true"
    assert client.get(url, HTTP_IF_NONE_MATCH='"another"').status_code == 200

    simulated_judges_fill(study=judged, n_judges=4, seed=9)  # a fourth judge: the study's version moves
    cache.delete(f"paraeval:dashboard-version:{judged.pk}")
    moved = client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert moved.status_code == 304 and moved.headers["ETag"] == etag and moved.content == b""
    assert moved.headers["Paraeval-Current"] == "false"  # the snapshot is behind; a refresh is queued
    fresh = client.get(url)  # a poll without the ETag gets the same snapshot, saying so in its body
    assert fresh.json()["current"] is False and fresh.json()["snapshot"] == first.json()["snapshot"]
    assert fresh.headers["Paraeval-Current"] == "false" and fresh.headers["ETag"] == etag
    snapshot.dashboard_refresh(study=judged)
    refreshed = client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert refreshed.status_code == 200 and refreshed.json()["current"] is True
    assert refreshed.headers["Paraeval-Current"] == "true" and refreshed.headers["ETag"] != etag
    assert refreshed.json()["snapshot"]["totals"]["judgments"] > first.json()["snapshot"]["totals"]["judgments"]

    etag = refreshed.headers["ETag"]
    client.patch(f"{url}settings/", {"item_rate": "0.30"}, format="json")
    rated = client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert rated.status_code == 200 and rated.json()["item_rate"] == "0.3000"


def test_the_json_answer_sends_the_stored_text_and_equals_the_serialized_one(judged, researcher):
    """The JSON poll sends the snapshot as the text the worker stored (no decoding per poll); its
    answer equals the values the browsable API renders, non-ASCII text included."""
    import json

    from rest_framework.renderers import JSONRenderer

    snapshot.dashboard_refresh(study=judged)
    Dashboard.objects.filter(study=judged).update(currency="SAR", plan={"status": "done", "note": "خطة"})
    client, url = _api(researcher), f"/api/dashboard/studies/{judged.pk}/"
    r = client.get(url, HTTP_ACCEPT="application/json")
    assert r.status_code == 200 and r["Content-Type"] == "application/json"
    d = Dashboard.objects.get(study=judged)
    version = r.json()["version"]
    values = snapshot.dashboard_answer(dashboard=d, version=version)
    assert r.json() == json.loads(JSONRenderer().render(values))
    assert r.json()["plan"]["note"] == "خطة" and r.json()["snapshot"] == d.snapshot
    assert json.loads(d.snapshot_text) == d.snapshot
    assert "خطة".encode() in r.content  # UTF-8, as DRF's renderer writes it, not \\u escapes
    browsable = client.get(url, HTTP_ACCEPT="text/html")
    assert browsable.status_code == 200 and b"totals" in browsable.content


def test_the_etag_does_not_move_with_every_judgment_between_two_refreshes(judged, researcher):
    """With hundreds of judges the study's version moves several times a second: once the snapshot
    is behind, further judgments leave the poll's answer (and its ETag) alone until the next refresh."""
    from annotation.judging.protocols.absolute.simulation import simulated_judges_fill

    client, url = _api(researcher), f"/api/dashboard/studies/{judged.pk}/"
    snapshot.dashboard_refresh(study=judged)
    simulated_judges_fill(study=judged, n_judges=4, seed=9)
    cache.delete(f"paraeval:dashboard-version:{judged.pk}")
    behind = client.get(url)
    assert behind.status_code == 200 and behind.json()["current"] is False
    simulated_judges_fill(study=judged, n_judges=5, seed=10)  # the version moves again
    cache.delete(f"paraeval:dashboard-version:{judged.pk}")
    again = client.get(url, HTTP_IF_NONE_MATCH=behind.headers["ETag"])
    assert again.status_code == 304 and again.headers["ETag"] == behind.headers["ETag"]
    assert again.headers["Paraeval-Current"] == "false"


@override_settings(PARAEVAL_DASHBOARD_REFRESH_SECONDS=20)
def test_every_poll_says_when_its_answer_may_next_change(judged, researcher):
    """``Paraeval-Poll-After``: a fresh snapshot rests (here 20 s), so nothing can change before its
    rest is over and the page waits that long instead of polling every 3 s; 3 s at least."""
    client, url = _api(researcher), f"/api/dashboard/studies/{judged.pk}/"
    snapshot.dashboard_refresh(study=judged)
    first = client.get(url)
    assert first.json()["current"] and 18 <= int(first.headers["Paraeval-Poll-After"]) <= 21
    again = client.get(url, HTTP_IF_NONE_MATCH=first.headers["ETag"])
    assert again.status_code == 304 and 18 <= int(again.headers["Paraeval-Poll-After"]) <= 21
    Dashboard.objects.filter(study=judged).update(snapshot_at=timezone.now() - timedelta(minutes=5))
    late = client.get(url)
    assert int(late.headers["Paraeval-Poll-After"]) == snapshot.POLL_MIN_SECONDS


def test_the_rate_is_set_through_the_api_and_a_bad_one_is_a_400(judged, researcher):
    client = _api(researcher)
    assert client.patch(
        f"/api/dashboard/studies/{judged.pk}/settings/", {"item_rate": "0.25", "currency": "usd"}, format="json"
    ).json() == {"item_rate": "0.2500", "currency": "USD"}
    for bad in ({"item_rate": "-1"}, {"item_rate": "lots"}, {"currency": "US$"}):
        r = client.patch(f"/api/dashboard/studies/{judged.pk}/settings/", bad, format="json")
        assert r.status_code == 400, bad
    assert Dashboard.objects.get(study=judged).item_rate == Decimal("0.25")


def test_the_dashboard_is_in_the_openapi_schema(researcher):
    schema = _api(researcher).get("/api/schema/?format=json").json()
    for path in (
        "/api/dashboard/studies/{study_id}/",
        "/api/dashboard/studies/{study_id}/plan/",
        "/api/dashboard/studies/{study_id}/settings/",
        "/api/dashboard/studies/{study_id}/adaptive/",
    ):
        assert path in schema["paths"], path
    assert "DashboardSnapshot" in schema["components"]["schemas"]


def test_the_page_is_for_researchers_and_has_a_tab(judged, researcher, client):
    client.force_login(researcher)
    page = client.get(f"/studies/{judged.pk}/dashboard/").content.decode()
    assert 'id="dashboard-root"' in page and f"/api/dashboard/studies/{judged.pk}/" in page
    assert "dashboard/dashboard.js" in page and ">Dashboard<" in page
    judge = judged.memberships.filter(role="judge").first().user
    client.force_login(judge)
    assert client.get(f"/studies/{judged.pk}/dashboard/").status_code == 403


def test_the_rate_form_saves_and_a_bad_rate_is_named(judged, researcher, client):
    client.force_login(researcher)
    r = client.post(f"/studies/{judged.pk}/dashboard/settings/", {"item_rate": "abc", "currency": "GBP"}, follow=True)
    assert "item_rate" in r.content.decode()
    client.post(f"/studies/{judged.pk}/dashboard/settings/", {"item_rate": "0.5", "currency": "EUR"})
    assert Dashboard.objects.get(study=judged).currency == "EUR"


def test_released_items_move_the_version(judged):
    before = selectors.dashboard_version(study=judged)
    a = Assignment.objects.filter(study=judged).first()
    AssignmentItem.objects.filter(assignment=a, position=1).update(done_at=None)
    assignment_release_unfinished(assignment=a)
    assert selectors.dashboard_version(study=judged) != before


def test_a_side_by_side_study_shows_its_bradley_terry_ranking_equal_to_its_report(judged_comparison, researcher):  # noqa: F811
    """Side by side has live answers too (issue 26): α on pairs and the Bradley–Terry ranking with
    its intervals, equal to the comparison report built at the same moment; no invented clusters."""
    dash = snapshot.dashboard_refresh(study=judged_comparison)
    report = report_create(study=judged_comparison, created_by=researcher, enqueue=False)
    report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    answers = dash.snapshot["answers"]
    assert answers["available"] and answers["fingerprint"] == report.fingerprint
    summary = report.result["comparison"]["preference"]
    assert [(r["system"], r["mean"], r["ci_low"], r["ci_high"]) for r in answers["ranking"]["systems"]] == [
        (r["system"], r["theta"], r["ci_low"], r["ci_high"]) for r in summary["bradley_terry"]["ranking"]
    ]
    assert [r["system"] for r in answers["ranking"]["systems"]] == ["a", "b", "c"]
    assert answers["ranking"]["measure"].startswith("Bradley–Terry θ")
    assert all(r["cluster"] is None and r["pvalue_vs_next"] is None for r in answers["ranking"]["systems"])
    (row,) = answers["agreement"]
    assert row["level"] == "nominal" and row["alpha"] == summary["agreement"]["alpha"]
    assert row["n_items"] == summary["agreement"]["units"] == 15 and row["ci_low"] is None


def test_a_side_by_side_study_without_comparisons_says_so(researcher):
    from tests.metrics.reports.conftest import make_study_data

    study = make_study_data(researcher, name="Empty side by side", n_originals=3, systems=("a", "b"))
    design_update(study=study, changes={"protocol": "comparison"})
    dash = snapshot.dashboard_refresh(study=study)
    assert dash.snapshot["answers"] == {"available": False, "reason": "No comparisons yet."}


@override_settings(PARAEVAL_DASHBOARD_ANSWERS_SECONDS=3600)
def test_the_qc_rows_come_with_the_answers_not_at_every_refresh(judged):
    """The judges' QC rows (a control test per judge and criterion: most of a refresh's CPU at 500
    judges) are computed with the answers; a refresh between two keeps the last ones."""
    from annotation.judging.protocols.absolute.simulation import simulated_judges_fill

    first = snapshot.dashboard_refresh(study=judged)
    simulated_judges_fill(study=judged, n_judges=4, seed=9)
    with mock.patch.object(selectors, "dashboard_qc", wraps=selectors.dashboard_qc) as qc:
        second = snapshot.dashboard_refresh(study=judged)
        assert qc.call_count == 0 and second.snapshot["qc"] == first.snapshot["qc"]
        assert second.snapshot["totals"]["judgments"] > first.snapshot["totals"]["judgments"]
        third = snapshot.dashboard_refresh(study=judged, force_answers=True)
        assert qc.call_count == 1 and len(third.snapshot["qc"]) == len(first.snapshot["qc"]) + 1


def test_a_rate_saved_while_a_refresh_runs_is_not_overwritten_by_that_refresh(judged):
    """The race CI met on PostgreSQL: a refresh read the old rate, the researcher saved a new one,
    and the refresh then wrote its old projection with the current version, so no poll refreshed
    again and the page showed 0.00 for good. Now the refresh sees the change and computes again."""
    snapshot.dashboard_refresh(study=judged)
    real = selectors.dashboard_live
    rates = []

    def live(*, study, rate, currency, qc):
        rates.append(rate)
        if len(rates) == 1:  # the researcher saves a rate while this refresh runs
            snapshot.dashboard_settings_update(study=study, item_rate="0.12", currency="EUR")
        return real(study=study, rate=rate, currency=currency, qc=qc)

    with mock.patch.object(selectors, "dashboard_live", side_effect=live):
        dash = snapshot.dashboard_refresh(study=judged)
    assert rates == [Decimal("0"), Decimal("0.12")]
    projection = next(v for v in dash.snapshot.values() if isinstance(v, dict) and "cost_projected" in v)
    assert (projection["rate"], projection["currency"]) == ("0.1200", "EUR")
    assert dash.snapshot_version == selectors.dashboard_version(study=judged)


def test_polls_read_the_stored_snapshot_once_per_refresh_and_then_the_new_one(judged, researcher):
    """Twenty dashboards open on one study ask for the same snapshot after a refresh: the web
    process reads its text from the database once, and the next refresh's text once more."""
    from annotation.judging.protocols.absolute.simulation import simulated_judges_fill

    client, url = _api(researcher), f"/api/dashboard/studies/{judged.pk}/"
    snapshot.dashboard_refresh(study=judged)

    def reads_of_the_text(polls):
        with CaptureQueriesContext(connection) as ctx:
            bodies = [client.get(url, HTTP_ACCEPT="application/json") for _ in range(polls)]
        assert all(b.status_code == 200 for b in bodies)
        return sum('"snapshot_text"' in q["sql"] for q in ctx.captured_queries), bodies

    reads, bodies = reads_of_the_text(5)
    assert reads == 1 and len({b.content for b in bodies}) == 1
    simulated_judges_fill(study=judged, n_judges=4, seed=9)
    snapshot.dashboard_refresh(study=judged)
    reads, bodies = reads_of_the_text(3)
    assert reads == 1
    assert bodies[0].json()["snapshot"] == Dashboard.objects.get(study=judged).snapshot
    assert bodies[0].json()["snapshot"]["totals"]["judges"] == 4
    client.patch(f"{url}settings/", {"item_rate": "0.25"}, format="json")  # the settings: read again
    reads, bodies = reads_of_the_text(2)
    assert reads == 1 and bodies[0].json()["item_rate"] == "0.2500"


def test_a_refresh_reads_the_judgments_once_for_the_qc_and_the_answers(judged):
    with CaptureQueriesContext(connection) as ctx:
        dash = snapshot.dashboard_refresh(study=judged, force_answers=True)
    # The frame's query: the judgments' values with their candidates' system kinds.
    frames = [q for q in ctx.captured_queries if '"judging_judgment"."values"' in q["sql"] and "kind" in q["sql"]]
    assert len(frames) == 1, [q["sql"][:200] for q in frames]
    assert dash.snapshot["answers"]["available"] and len(dash.snapshot["qc"]) == 3
    alone = selectors.dashboard_qc(study=judged)  # outside a refresh: its own read, the same rows
    assert alone == dash.snapshot["qc"]


def test_a_refresh_and_a_poll_join_no_table_they_do_not_use(judged, researcher):
    """Meta.ordering's joins stay in Django's GROUP BY queries unless ``.order_by()`` clears
    them: at 500 judges each one joined every assigned item (tests/queries.py)."""
    from tests.queries import queries_with_unused_joins

    with CaptureQueriesContext(connection) as ctx:
        snapshot.dashboard_refresh(study=judged, force_answers=True)
        _api(researcher).get(f"/api/dashboard/studies/{judged.pk}/")
    assert queries_with_unused_joins(ctx.captured_queries) == []


def _parallel_workers() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW max_parallel_workers_per_gather")
        return cursor.fetchone()[0]


def test_serial_queries_turns_parallel_plans_off_inside_and_back_on_after_even_on_error():
    if connection.vendor != "postgresql":
        with CaptureQueriesContext(connection) as queries, snapshot.serial_queries():
            pass
        assert len(queries) == 0  # nothing to set on SQLite
        return
    before = _parallel_workers()
    assert before != "0"  # PostgreSQL's default (2), or the server's own setting
    with snapshot.serial_queries():
        assert _parallel_workers() == "0"
    assert _parallel_workers() == before
    with pytest.raises(RuntimeError, match="the refresh failed"), snapshot.serial_queries():
        raise RuntimeError("the refresh failed")
    assert _parallel_workers() == before


def test_a_refresh_runs_its_queries_without_parallel_workers(judged):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's setting: the PostgreSQL pass runs this")
    seen = []
    live = selectors.dashboard_live

    def spy(**kwargs):
        seen.append(_parallel_workers())
        return live(**kwargs)

    with mock.patch.object(selectors, "dashboard_live", spy):
        snapshot.dashboard_refresh(study=judged)
    assert seen == ["0"]
    assert _parallel_workers() != "0"


def _study_moves(study, n_judges: int, seed: int) -> None:
    from annotation.judging.protocols.absolute.simulation import simulated_judges_fill

    simulated_judges_fill(study=study, n_judges=n_judges, seed=seed)
    cache.delete(f"paraeval:dashboard-version:{study.pk}")  # past the stamp's 2 s shared by polls


def test_a_watched_study_is_refreshed_in_rounds_on_the_workers_clock(researcher, django_capture_on_commit_callbacks):
    """While a page polls, each round schedules the next at the end of the snapshot's rest, the
    polls queue none of their own and are asked back when the round's result is there; a round
    queued under an older mark does nothing; nobody watching, the rounds stop and a poll starts
    them again."""
    from metrics.dashboard import tasks
    from tests.metrics.reports.conftest import make_study_data

    study = open_judging(make_study_data(researcher, name="Rounds", n_originals=4))
    _study_moves(study, 2, 1)
    with mock.patch.object(queueing, "job_enqueue") as enqueue:
        with django_capture_on_commit_callbacks(execute=True):
            queueing.dashboard_poll(study=study)  # no snapshot yet: the poll queues the first round
    mark = Dashboard.objects.get(study=study).refresh_queued_at
    assert enqueue.call_args.args == (tasks.dashboard_refresh_task, study.pk, mark.isoformat())

    with mock.patch.object(tasks, "job_enqueue") as scheduled:
        tasks.dashboard_refresh_task(study.pk, mark.isoformat())  # the worker runs it
    dash = Dashboard.objects.get(study=study)
    following = dash.refresh_queued_at
    assert dash.snapshot_version == selectors.dashboard_version(study=study)  # refreshed
    rest = snapshot.refresh_rest(dashboard=dash).total_seconds()
    assert following > dash.snapshot_at and rest - 2 <= (following - timezone.now()).total_seconds() <= rest
    assert scheduled.call_args.args == (tasks.dashboard_refresh_task, study.pk, following.isoformat())
    assert scheduled.call_args.kwargs == {"eta": following}

    _study_moves(study, 3, 2)
    Dashboard.objects.filter(study=study).update(snapshot_at=timezone.now() - timedelta(minutes=1))  # rest over
    with mock.patch.object(queueing, "job_enqueue") as enqueue:
        with django_capture_on_commit_callbacks(execute=True):
            dash, version = queueing.dashboard_poll(study=study)
    assert enqueue.call_count == 0  # the next round is scheduled: the poll queues nothing
    headers = snapshot.dashboard_poll_headers(dashboard=dash, version=version)
    assert headers["Paraeval-Current"] == "false"
    wall = max(dash.refresh_wall_seconds, 1.0)
    wait = (following - timezone.now()).total_seconds() + wall
    assert abs(int(headers["Paraeval-Poll-After"]) - min(max(round(wait), 3), 30)) <= 1  # the round's result

    taken = dash.snapshot_at
    assert snapshot.dashboard_refresh_round(study=study, mark=mark) is None  # superseded: nothing done
    assert Dashboard.objects.get(study=study).snapshot_at == taken
    nxt = snapshot.dashboard_refresh_round(study=study, mark=following)
    dash = Dashboard.objects.get(study=study)
    assert dash.snapshot_version == selectors.dashboard_version(study=study) and nxt == dash.refresh_queued_at

    unchanged = dash.snapshot_at  # nothing moved: a round only schedules the next
    nxt = snapshot.dashboard_refresh_round(study=study, mark=nxt)
    assert nxt is not None and Dashboard.objects.get(study=study).snapshot_at == unchanged

    Dashboard.objects.filter(study=study).update(viewed_at=timezone.now() - timedelta(minutes=2))
    assert snapshot.dashboard_refresh_round(study=study, mark=nxt) is None  # nobody watches: the rounds stop
    assert Dashboard.objects.get(study=study).refresh_queued_at is None
    _study_moves(study, 4, 3)
    Dashboard.objects.filter(study=study).update(snapshot_at=timezone.now() - timedelta(minutes=1))
    with mock.patch.object(queueing, "job_enqueue") as enqueue:
        with django_capture_on_commit_callbacks(execute=True):
            queueing.dashboard_poll(study=study)
    assert enqueue.call_count == 1  # a page again: its poll starts the rounds


def test_a_round_run_in_the_caller_schedules_no_next_one(judged):
    """Eager tasks (tests, docs runs) run in the caller: a round that scheduled its successor
    there would run it at once, and again, for as long as the page was watched."""
    from metrics.dashboard import tasks

    Dashboard.objects.update_or_create(study=judged, defaults={"viewed_at": timezone.now()})
    mark = timezone.now()
    Dashboard.objects.filter(study=judged).update(refresh_queued_at=mark)
    with mock.patch.object(tasks, "job_enqueue") as scheduled:
        tasks.dashboard_refresh_task.apply(args=(judged.pk, mark.isoformat()))
    assert scheduled.call_count == 0
    assert Dashboard.objects.get(study=judged).snapshot_text  # the round itself ran
