"""The side-by-side rows of the combination matrix (issue 24), in real Chromium: side by side ×
{judges the researcher added, a Prolific join link} × {en, ar}. Each row: the study is made, two
judges answer every pair by keyboard (the keys of the screen: on the Arabic page A is drawn on
the right), the QC page shows each judge's control pairs, the report is built by a real worker,
every export is downloaded, no response is a 4xx or 5xx, and every number is checked against the
answers that went in.

The Prolific row runs its join link with training and an attention check, as a field study
would: two training pairs with reference answers (one right of two is needed; judge 1 gets
one wrong and still passes), answered by the keys of the screen with the feedback page after
each, then one attention pair per participant among the real pairs (a copy of the original
against an unrelated sentence, answered with the copy's side) under the "end" policy; the QC
page shows each judge's attention result. The researcher row has no screening.
"""

from __future__ import annotations

import csv
import io
import json
import secrets
from collections import Counter

import pytest
from playwright.sync_api import expect

from annotation.enums import Role
from annotation.services.membership import study_member_add
from annotation.services.studies import study_update
from tests.conftest import browser_login
from tests.factories import study_with_data

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LOAD = 30_000
RANK = {"alpha": 0, "beta": 1, "gamma": 2}  # what the judges prefer: alpha over beta over gamma
CODE = "MATRIX01"


def _watch(pg, bad: list[str]) -> None:
    pg.on("response", lambda r: bad.append(f"{r.status} {r.url}") if r.status >= 400 else None)


def _choose(item, judge_no: int, n: int, controls_seen: int) -> str:
    """The answer judge ``judge_no`` gives to the ``n``-th pair: the genuine side of a control
    pair (but judge 1 misses their first control), the better-ranked system, some ties."""
    ls, rs = item.left.system.name, item.right.system.name
    if item.is_control:
        genuine_left = not ls.startswith("control:")
        wrong = judge_no == 1 and controls_seen == 0
        return ("A" if genuine_left else "B") if not wrong else ("B" if genuine_left else "A")
    if judge_no == 1 and n % 4 == 0:
        return "tie"
    return "A" if RANK[ls] < RANK[rs] else "B"


def _press(pg, answer: str, rtl: bool) -> None:
    a_key, b_key = ("ArrowRight", "ArrowLeft") if rtl else ("ArrowLeft", "ArrowRight")
    pg.keyboard.press({"A": a_key, "B": b_key, "tie": "ArrowDown"}[answer])
    expect(pg.locator(f'input[name="preference"][value="{answer}"]')).to_be_checked()


def _train(pg, judge_no: int, rtl: bool) -> int:
    """Answer the training pairs by the keys of the screen (judge 1 gets the first one wrong),
    going through the feedback page after each; return how many were answered."""
    from annotation.judging.models import TrainingItem

    n = 0
    while "/training/" in pg.url:
        expect(pg.locator("#training-feedback, #rating-form").first).to_be_visible(timeout=LOAD)
        if pg.locator("#training-feedback").count():
            expect(pg.locator("#feedback-explanation")).to_be_visible()
            pg.locator("#continue-button").click()
            pg.wait_for_url(lambda url: "/feedback/" not in url, timeout=LOAD)
            continue
        expect(pg.locator(".criterion.is-current")).to_have_count(1)
        item = TrainingItem.objects.get(token=pg.locator('#rating-form input[name="token"]').input_value())
        answer = item.expected["answers"]["preference"]
        if judge_no == 1 and n == 0:
            answer = "tie" if answer != "tie" else "A"
        _press(pg, answer, rtl)
        pg.keyboard.press("Enter")
        pg.wait_for_url("**/training/feedback/", timeout=LOAD)
        n += 1
    return n


def _answer_every_pair(pg, study, judge_no: int, rtl: bool, checks: list[str] | None = None) -> dict[str, str]:
    """Answer the judge's pairs on the compare page by the keys of the screen; token → answer.
    An attention pair is answered with its copy's side, its token added to ``checks``."""
    from annotation.judging.models import AttentionCheck
    from annotation.judging.protocols.side_by_side.models import ComparisonItem

    given: dict[str, str] = {}
    controls = 0
    while True:
        expect(pg.locator("#rating-form, #done-h").first).to_be_visible(timeout=LOAD)
        if pg.locator("#done-h").count():
            return given
        expect(pg.locator(".criterion.is-current")).to_have_count(1)
        token = pg.locator('#rating-form input[name="token"]').input_value()
        check = AttentionCheck.objects.filter(token=token).first()
        if check is not None:  # drawn like a pair: the copy of the original is the side to choose
            original = pg.locator(".compare-original .sentence-text").inner_text()
            copy_side = "A" if pg.locator("#side-a .sentence-text").inner_text() == original else "B"
            assert copy_side == ("A" if check.expected == 0.0 else "B")
            _press(pg, copy_side, rtl)
            checks.append(token)
            pg.keyboard.press("Enter")
            expect(pg.locator(f'input[name="token"][value="{token}"]')).to_have_count(0, timeout=LOAD)
            continue
        item = ComparisonItem.objects.select_related("left__system", "right__system").get(token=token)
        answer = _choose(item, judge_no, len(given), controls)
        controls += item.is_control
        a_key, b_key = ("ArrowRight", "ArrowLeft") if rtl else ("ArrowLeft", "ArrowRight")
        pg.keyboard.press({"A": a_key, "B": b_key, "tie": "ArrowDown"}[answer])
        expect(pg.locator(f'input[name="preference"][value="{answer}"]')).to_be_checked()
        given[token] = answer
        pg.keyboard.press("Enter")
        pg.wait_for_load_state()


def _start(pg) -> None:
    """From wherever the judge lands: the instructions (once), then the first pair."""
    if pg.locator('form[action$="/instructions/"] button[type="submit"]').count():
        pg.locator('form[action$="/instructions/"] button[type="submit"]').click()
    expect(pg.locator("#rating-form")).to_be_visible(timeout=LOAD)


TRAINING = [
    {
        "original": "The meeting was moved to Friday.",
        "a": "The meeting is now on Friday.",
        "b": "The meeting was cancelled.",
        "preference": "A",
        "explanation": "B changes the meaning.",
    },
    {
        "original": "She bought three apples.",
        "a": "She sold apples.",
        "b": "She purchased three apples.",
        "preference": "B",
        "explanation": "A changes the meaning.",
    },
]


@pytest.mark.parametrize("lang", ["en", "ar"])
@pytest.mark.parametrize("judges", ["researcher", "prolific"])
def test_side_by_side_row_of_the_matrix(page, live_server, celery_worker, researcher, make_user, judges, lang):
    from annotation.judging import screening, training
    from annotation.judging.models import AttentionCheck, TrainingAnswer
    from annotation.judging.protocols.side_by_side.models import ComparisonItem, ComparisonJudgment
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from annotation.models import Participant
    from annotation.participation import services as participation
    from metrics.reports.models import Report

    study = study_with_data(
        owner=researcher, n_originals=3, systems=("alpha", "beta", "gamma"), name=f"Matrix {judges} {lang}"
    )
    study_update(study=study, changes={"language": lang})
    names = []
    if judges == "researcher":
        for name in ("ann", "bob"):
            study_member_add(study=study, user=make_user(name), role=Role.JUDGE)
            names.append(name)
    design_update(
        study=study,
        changes={"protocol": "comparison", "seed": 21, "control_counts": {"identical": 1, "random": 0, "unigram": 0}},
    )
    study_judging_open(study=study)
    if judges == "prolific":  # a field study screens its participants: training and an attention check
        for row in TRAINING:
            training.training_item_add(study=study, row=row)
        screening.screening_settings_update(
            study=study,
            changes={
                "training_required": 1,
                "training_retries": 0,
                "attention_count": 1,
                "attention_policy": "end",
                "attention_max_failures": 1,
            },
        )
    link = (
        participation.join_link_create(
            study=study, role="judge", platform="prolific", created_by=researcher, completion_code=CODE
        )
        if judges == "prolific"
        else None
    )
    bad: list[str] = []
    _watch(page, bad)
    answers: dict[str, dict[str, str]] = {}  # judge username → token → answer
    checks: list[str] = []  # the attention pairs met
    for judge_no in range(2):
        ctx = page.context.browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
        pg = ctx.new_page()
        _watch(pg, bad)
        if link is None:
            browser_login(pg, names[judge_no])
            pg.goto(f"/judge/studies/{study.pk}/compare/")
        else:
            ids = {k: secrets.token_hex(12) for k in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")}
            pg.goto(f"/join/{link.token}/?" + "&".join(f"{k}={v}" for k, v in ids.items()))
            pg.locator("#consent-accept").click()
            pg.locator("#start-link").click()
        rtl = pg.evaluate("document.documentElement.dir") == "rtl"
        assert rtl == (lang == "ar")
        _start(pg)
        if link is not None:
            assert _train(pg, judge_no, rtl) == 2
        given = _answer_every_pair(pg, study, judge_no, rtl, checks)
        username = ComparisonItem.objects.get(token=next(iter(given))).assignment.judge.username
        answers[username] = given
        if link is not None:  # the completion code, once every pair is answered
            expect(pg.locator("#completion-code")).to_have_text(CODE)
        ctx.close()
    if link is not None:
        assert Participant.objects.filter(study=study, completed_at__isnull=False).count() == 2
        # training: two answers each, judge 1 one wrong, both passed; one attention pair each, passed
        right = Counter(
            TrainingAnswer.objects.filter(assignment__study=study, correct=True).values_list(
                "assignment__judge__username", flat=True
            )
        )
        assert sorted(right[u] for u in answers) == [1, 2]
        assert TrainingAnswer.objects.filter(assignment__study=study).count() == 4
        assert len(checks) == 2 and all(c.passed for c in AttentionCheck.objects.filter(assignment__study=study))
    n_pairs = 3 * 3 + 3  # three system pairs and one control pair per original
    assert [len(g) for g in answers.values()] == [n_pairs, n_pairs]
    stored = {
        (j.judge.username, j.item.token): j.values["preference"]
        for j in ComparisonJudgment.objects.filter(study=study, is_latest=True).select_related("judge", "item")
    }
    assert stored == {(u, t): a for u, g in answers.items() for t, a in g.items()}

    # what went in, as counts: wins and ties per system on genuine pairs; control pairs per judge
    items = {
        it.token: it
        for it in ComparisonItem.objects.filter(assignment__study=study).select_related("left__system", "right__system")
    }
    wins, ties, correct = Counter(), Counter(), Counter()
    for u, g in answers.items():
        for t, a in g.items():
            it = items[t]
            ls, rs = it.left.system.name, it.right.system.name
            if it.is_control:
                correct[u] += (a == "A") == (not ls.startswith("control:"))
            elif a == "tie":
                ties[ls] += 1
                ties[rs] += 1
            else:
                wins[ls if a == "A" else rs] += 1

    browser_login(page, "rita")
    # QC: each judge's control pairs
    page.goto(f"/studies/{study.pk}/judging/qc/")
    for u in answers:
        row = page.locator(f'#comparison-qc-table tr[data-judge="{u}"] td')
        expect(row.nth(0)).to_have_text("3")
        expect(row.nth(1)).to_have_text(str(correct[u]))
        expect(row.nth(5)).to_have_text("1 of 1" if link is not None else "—")
    assert sorted(correct.values()) == [2, 3]

    # the protocol's own export, from the design page's link
    page.goto(f"/studies/{study.pk}/judging/design/")
    href = page.get_by_role("link", name="Export the comparisons (CSV)").get_attribute("href")
    body = page.request.get(href)
    assert body.status == 200
    rows = list(csv.DictReader(io.StringIO(body.text())))
    assert len(rows) == 2 * n_pairs
    by_system = Counter(r["preferred_system"] for r in rows if r["is_control"] == "False" and r["answer"] != "tie")
    assert by_system == wins

    # the report, built by a real worker
    page.goto(f"/studies/{study.pk}/report/")
    page.get_by_label("Bootstrap resamples").fill("100")
    page.get_by_role("button", name="Build report").click()
    expect(page.locator("#section-preference_system_wins")).to_be_visible(timeout=60_000)
    report = Report.objects.get(study=study)
    summary = report.result["comparison"]["preference"]
    for row in summary["systems"]:
        assert (row["wins"], row["ties"]) == (wins[row["system"]], ties[row["system"]]), row
    assert summary["n_comparisons"] == 2 * 3 * 3 and summary["n_control_comparisons"] == 2 * 3
    assert {r["judge"]: r["correct"] for r in summary["controls"]} == dict(correct)

    # every export the report page links, and every table as CSV
    links = page.locator("#report-exports a").evaluate_all("els => els.map(e => e.getAttribute('href'))")
    links += [
        f"/studies/{study.pk}/reports/{report.pk}/tables/{slug}.csv"
        for slug in page.locator('[id^="section-"]').evaluate_all("els => els.map(e => e.id.slice('section-'.length))")
    ]
    assert len(links) >= 5
    for href in links:
        r = page.request.get(href)
        assert r.status == 200, (href, r.status)
        assert r.body(), href
        if href.endswith(".json"):
            assert json.loads(r.text())["result"]["comparison"]["preference"]["systems"] == summary["systems"]
    assert bad == [], bad
