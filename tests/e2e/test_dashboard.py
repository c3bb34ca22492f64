"""In real Chromium, with a real worker: the researcher watches the dashboard while a scripted
judge works. Counts, QC verdicts and the ranking update without a reload, and the numbers
equal the report built at the same moment."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation.judging import screening
from annotation.judging.models import Assignment
from annotation.judging.protocols.absolute.hot_path import item_next_for_judge_fast
from annotation.judging.protocols.absolute.models import Judgment
from annotation.judging.protocols.absolute.services import judgment_submit
from annotation.judging.protocols.absolute.simulation import simulated_judges_fill
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.judging.services.assignments import assignment_ensure_for_judge
from annotation.models import Candidate
from annotation.services.membership import study_member_add
from metrics.reports.services.build import report_build
from metrics.reports.services.queueing import report_create
from tests.conftest import browser_login, screenshot
from tests.metrics.reports.conftest import make_study_data, open_judging
from tests.metrics.reports.test_comparison_report import judged_comparison  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _judge_rates(study, judge, n: int, value_of) -> None:
    """The scripted judge: ``n`` items through the judge's own hot path, one after another."""
    a = assignment_for_judge(study=study, judge=judge) or assignment_ensure_for_judge(study=study, judge=judge)
    for _ in range(n):
        item = item_next_for_judge_fast(assignment=a)
        system = Candidate.objects.get(judging_items__token=item.token).system.name
        v = value_of(system)
        judgment_submit(
            study=study,
            judge=judge,
            token=item.token,
            key=f"k-{item.token}",
            scores={"adequacy": v, "fluency": v, "dissimilarity": 3, "overall": v},
            serve_stamp=item.serve_stamp,
            active_seconds=6.5,
        )


def _fmt(x) -> str:
    return "–" if x is None else f"{x:.3f}"


def test_the_dashboard_follows_a_judge_at_work_and_equals_the_report(
    page, celery_worker, researcher, make_user, settings
):
    settings.PARAEVAL_DASHBOARD_ANSWERS_SECONDS = 0  # answers at every refresh: the test watches them move
    study = make_study_data(researcher, name="Watched live", n_originals=8, systems=("human", "machine", "mt"))
    sam = make_user("sam")
    study_member_add(study=study, user=sam, role="judge")
    study = open_judging(study)
    simulated_judges_fill(study=study, n_judges=2, seed=5)

    browser_login(page, "rita")
    page.goto(f"/studies/{study.pk}/dashboard/")
    page.get_by_label("Cost per judged item").fill("0.12")
    page.get_by_role("button", name="Save rate").click()
    expect(page.locator("#dash-projection [data-field='cost_projected']")).to_have_text("17.28", timeout=60_000)
    page.evaluate("() => { window.__sameDocument = true; }")
    totals = page.locator("#dash-totals [data-field='judgments']")
    expect(totals).to_have_text(str(Judgment.objects.filter(study=study, is_latest=True).count()), timeout=60_000)
    expect(page.locator("#dash-ranking tbody tr")).to_have_count(3, timeout=60_000)
    expect(page.locator("#dash-qc tr[data-judge='sim-judge-01']")).to_be_visible()

    # The scripted judge rates: "mt" first by far, "human" last (the simulated judges say otherwise).
    _judge_rates(study, sam, 12, lambda s: {"mt": 5, "machine": 3, "human": 1}.get(s, 3))
    expect(totals).to_have_text(str(Judgment.objects.filter(study=study, is_latest=True).count()), timeout=60_000)
    expect(page.locator("#dash-judges tr[data-judge='sam'] td").nth(1)).to_have_text("12", timeout=60_000)
    expect(page.locator("#dash-qc tr[data-judge='sam']")).to_be_visible()

    # A QC verdict changes: sam is screened out by the attention rule.
    screening.screen_out(
        assignment=Assignment.objects.get(study=study, judge=sam), rule="attention", reason="Failed 2 attention checks."
    )
    sam_qc = page.locator("#dash-qc tr[data-judge='sam']")
    expect(sam_qc).to_contain_text("screened out", timeout=60_000)
    expect(sam_qc).to_contain_text("attention: Failed 2 attention checks.")

    # Settled: the page shows the snapshot of the current data; build the report now and compare.
    page.wait_for_function(
        "() => document.getElementById('dashboard-root').dataset.current === 'true'"
        " && !document.getElementById('dash-answers-note').textContent.includes('new judgments')",
        timeout=60_000,
    )
    report = report_create(study=study, created_by=researcher, enqueue=False)
    report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    for r in report.result["system_ranking"]["systems"]:
        row = page.locator(f"#dash-ranking tr[data-system='{r['system']}'] td")
        expect(row.nth(0)).to_have_text(str(r["rank"]))
        expect(row.nth(2)).to_have_text(_fmt(r["mean"]))
        expect(row.nth(4)).to_have_text(str(r["cluster"]))
    for criterion, a in report.result["agreement"].items():
        alpha = a["krippendorff_alpha"][a["alpha_level"]]
        row = page.locator("#dash-agreement tbody tr").filter(has_text=f"{criterion} (")
        expect(row.locator("td").nth(1)).to_have_text(_fmt(alpha["statistic"]))
    assert page.evaluate("() => window.__sameDocument === true")  # never reloaded
    page.locator("#dash-answers-h").scroll_into_view_if_needed()
    screenshot(page, "dashboard")


def test_a_side_by_side_dashboard_shows_its_bradley_terry_ranking_equal_to_the_report(
    page,
    celery_worker,
    researcher,
    judged_comparison,  # noqa: F811 (the fixture imported above)
):
    browser_login(page, "rita")
    page.goto(f"/studies/{judged_comparison.pk}/dashboard/")
    expect(page.locator("#dash-ranking tbody tr")).to_have_count(3, timeout=60_000)
    expect(page.locator("#dash-ranking thead th[data-field='measure']")).to_contain_text("Bradley–Terry θ")
    expect(page.locator("#dash-answers-note")).to_contain_text("95 % intervals")
    report = report_create(study=judged_comparison, created_by=researcher, enqueue=False)
    report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    summary = report.result["comparison"]["preference"]
    for i, r in enumerate(summary["bradley_terry"]["ranking"]):
        row = page.locator(f"#dash-ranking tr[data-system='{r['system']}'] td")
        expect(row.nth(0)).to_have_text(str(i + 1))
        expect(row.nth(2)).to_have_text(_fmt(r["theta"]))
        expect(row.nth(3)).to_have_text(f"[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]")
        expect(row.nth(4)).to_have_text("—")  # no significance clusters for Bradley–Terry: none invented
    agreement = page.locator("#dash-agreement tbody tr").first
    expect(agreement.locator("td").nth(1)).to_have_text(_fmt(summary["agreement"]["alpha"]))
    expect(agreement.locator("td").nth(2)).to_have_text("—")


def test_the_planner_page_answers_with_its_interval(page, celery_worker, researcher):
    study = open_judging(make_study_data(researcher, name="Planned", n_originals=10, systems=("human", "machine")))
    simulated_judges_fill(study=study, n_judges=3, seed=2)
    browser_login(page, "rita")
    page.goto(f"/studies/{study.pk}/plan/")
    page.get_by_label("Originals").fill("30")
    page.get_by_label("Simulations").fill("40")
    page.get_by_role("button", name="Plan").click()
    # plan.js polls the plan and reloads the page when the worker has finished.
    expect(page.locator("#plan-ranking")).to_be_visible(timeout=90_000)
    expect(page.locator("#plan-separation tbody tr")).to_have_count(4)
    screenshot(page, "planning")


def test_a_304_tells_the_page_that_new_judgments_wait_for_the_next_refresh(page, researcher, make_user):
    """The study moving past the snapshot does not send the snapshot again: the page's next poll is
    a 304 whose ``Paraeval-Current`` header makes its note say that new data are coming (no worker
    runs here, so the refresh the poll queues never lands)."""
    from metrics.dashboard.services.snapshot import dashboard_refresh

    study = make_study_data(researcher, name="Behind", n_originals=6, systems=("human", "mt"))
    sam = make_user("sam")
    study_member_add(study=study, user=sam, role="judge")
    study = open_judging(study)
    dashboard_refresh(study=study)
    answers = []
    page.on(
        "response",
        lambda r: (
            answers.append((r.status, r.headers.get("paraeval-current")))
            if "/api/dashboard/studies/" in r.url
            else None
        ),
    )
    browser_login(page, "rita")
    page.goto(f"/studies/{study.pk}/dashboard/")
    note = page.locator("#dash-note")
    expect(note).to_contain_text("Updated", timeout=30_000)
    expect(note).not_to_contain_text("refreshing")
    _judge_rates(study, sam, 2, lambda s: 4)
    expect(note).to_contain_text("(refreshing: new data)", timeout=60_000)
    assert answers[0] == (200, "true")
    assert (304, "false") in answers and all(status == 304 for status, _ in answers[1:])
    expect(page.locator("#dash-totals [data-field='judgments']")).to_have_text("0")  # the figures stay
