"""The demo's error-span and ranking studies in real Chromium, as docs/protocols.md shows them:
judge1 finds both on the home page, marks a span on an ESA item beside the aligner's
suggestions and submits it, orders the four versions of a verse by keys and submits them; what
is stored is what the screen showed. The researcher's report of each is built and shown (of one
answer each, too thin a report to show in the docs).

Each page is saved (viewport only) as var/screenshots/protocol-*.png; `make tour` copies them
to docs/tour/ where docs/protocols.md shows them.
"""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from annotation.judging.protocols.esa.unit import ESA
from annotation.judging.protocols.ranking.unit import RANKING
from annotation.models import Study
from tests.conftest import browser_login, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
LOAD = 30_000
VIEWPORT = {"width": 1280, "height": 800}

ESA_DEMO_NAME, RANKING_DEMO_NAME = ESA.demo.name, RANKING.demo.name


def shot(page, name: str) -> None:
    screenshot(page, f"protocol-{name}", full_page=False)


def _start(page, study) -> None:
    """From judge1's home page, the study's card, then past its instructions."""
    page.goto("/judge/")
    card = page.locator("li.card", has=page.get_by_role("heading", name=study.participant_title, exact=True))
    card.get_by_role("link", name="Start").click()
    page.locator('form[action$="/instructions/"] button[type="submit"]').click()


def _report(page, study) -> None:
    from metrics.reports.services.build import report_build
    from metrics.reports.services.queueing import report_create

    report = report_create(study=study, created_by=study.owner, enqueue=False)
    report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    page.goto(f"/studies/{study.pk}/report/")
    assert "nan" not in page.locator("main").inner_text().lower()


def test_judge1_marks_spans_and_ranks_in_the_demo_and_the_researcher_sees_both_reports(page):
    from annotation.judging.protocols.esa.models import EsaItem, EsaJudgment
    from annotation.judging.protocols.ranking.models import RankingItem, RankingJudgment

    call_command("load_demo", "--quiet-credentials")
    esa, ranking = Study.objects.get(name=ESA_DEMO_NAME), Study.objects.get(name=RANKING_DEMO_NAME)
    page.set_viewport_size(VIEWPORT)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    bad: list[str] = []
    page.on("response", lambda r: bad.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    browser_login(page, "judge1", "judge1-demo")
    expect(page.locator("li.card")).to_have_count(3)  # the demo study, the ESA and the ranking study

    # 1. Error spans: skip to the first version with suggestions (scoring the items before it).
    _start(page, esa)
    while True:
        expect(page.locator("#rating-form[data-ready]")).to_be_attached(timeout=LOAD)
        item = EsaItem.objects.get(token=page.locator('#rating-form input[name="token"]').input_value())
        if item.proposed and not item.is_control:
            break
        while page.locator(".esa-span.is-suggested").count():  # a suggestion must be kept or deleted
            page.locator(".esa-span.is-suggested").first.locator(".esa-delete").click()
        page.locator("#esa-score").fill("70")
        with page.expect_navigation():
            page.keyboard.press("Enter")
    expect(page.locator(".esa-span.is-suggested")).to_have_count(len(item.proposed))
    candidate = item.candidate.text
    first = page.locator("#esa-candidate .seg").first  # a drag over the paraphrase's first word
    box = first.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 1, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] - 1, y, steps=5)
    page.mouse.up()
    expect(page.locator("#esa-new")).to_be_visible()
    page.locator("#esa-add-major").click()
    page.locator("#esa-score").fill("35")
    expect(page.locator("#esa-span-list li")).to_have_count(len(item.proposed) + 1)
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, "esa-judge")
    marked = [s for s in _shown(page) if not s.get("proposed")]
    assert len(marked) == 1 and marked[0]["severity"] == "major"
    assert candidate[marked[0]["start"] : marked[0]["end"]] == candidate.split()[0]
    while page.locator(".esa-span.is-suggested").count():  # judge1 keeps every suggestion
        page.locator(".esa-span.is-suggested").first.locator(".esa-accept").click()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    stored = EsaJudgment.objects.get(item=item, is_latest=True)
    assert stored.score == 35 and marked[0] in stored.spans
    assert len(stored.spans) == len(item.proposed) + 1
    assert sum(1 for s in stored.spans if s["proposed"]) == len(item.proposed)  # kept, and known as suggested

    # 2. Ranking: the four versions of one verse, reordered by keys; the screen shows the order.
    _start(page, ranking)
    while True:  # to the first set of the verse's four versions (submitting the sets with a control as shown)
        expect(page.locator("#rank-list[data-ready]")).to_have_count(1, timeout=LOAD)
        expect(page.locator("#rank-list .rank-card")).to_have_count(4)
        rank_item = RankingItem.objects.get(token=page.locator('#rating-form input[name="token"]').input_value())
        if not rank_item.is_control:
            break
        with page.expect_navigation():
            page.keyboard.press("Enter")
    texts = page.locator("#rank-list .rank-card .sentence-text").all_text_contents()
    from annotation.models import Candidate

    by_pk = dict(Candidate.objects.filter(pk__in=rank_item.candidates).values_list("pk", "text"))
    assert [t.strip() for t in texts] == [by_pk[pk] for pk in rank_item.candidates]  # the stored screen order
    page.keyboard.press("3")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")  # the third version to the top
    expect(page.locator('.rank-card[data-place="3"]')).to_have_class(re.compile(r"\bis-selected\b"))
    assert _screen(page) == [3, 1, 2, 4]
    shot(page, "ranking-judge")
    page.keyboard.press("Enter")
    page.wait_for_load_state()
    expect(page.locator("#rank-list[data-ready], #done-h").first).to_be_visible(timeout=LOAD)
    judgment = RankingJudgment.objects.get(item=rank_item, is_latest=True)
    cands = rank_item.candidates
    assert judgment.groups == [cands[2], cands[0], cands[1], cands[3]]
    assert errors == [] and bad == [], (errors, bad)

    # 3. The researcher's reports of judge1's two answers.
    page.context.clear_cookies()
    browser_login(page, "researcher", "researcher-demo")
    _report(page, esa)
    expect(page.locator("#section-esa_systems")).to_be_visible()
    _report(page, ranking)
    expect(page.locator("#section-pl_ranking")).to_be_visible()


def _shown(page) -> list[dict]:
    import json

    return json.loads(page.locator("#esa-spans-input").input_value())


def _screen(page) -> list[int]:
    return [int(p) for p in page.locator("#rank-list .rank-card").evaluate_all("els => els.map(e => e.dataset.place)")]
