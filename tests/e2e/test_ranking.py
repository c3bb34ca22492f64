"""The ranking protocol in real Chromium, in English and in Arabic (a mirrored page): the researcher
chooses ranking on the design page and opens the study with k = 3, scores asked and a control per original; a judge orders every set, by drag
(the mouse) on some and by keys (a digit selects the paraphrase that shows it, ↑/↓ move it, =
ties it) on others, gives the scores, submits with Enter, goes back with Backspace to change the
last one; what is stored equals what was made on the screen. The researcher then sees the QC
table, builds the report with a real worker and downloads every export."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from playwright.sync_api import expect

from annotation.enums import Role
from annotation.services.membership import study_member_add
from annotation.services.studies import study_update
from tests.conftest import browser_login, judge_keys_ready
from tests.factories import study_with_data

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LOAD = 30_000
TASTE = {"alpha": 0, "beta": 1, "gamma": 2}


def _screen(pg) -> list[int]:
    return [int(p) for p in pg.locator("#rank-list .rank-card").evaluate_all("els => els.map(e => e.dataset.place)")]


def _wanted(item) -> list[int]:
    """The judge's order of the places of ``item``: the copy of the original first, then by taste."""
    from annotation.models import Candidate

    names = dict(Candidate.objects.filter(pk__in=item.candidates).values_list("id", "system__name"))
    shown = [names[c] for c in item.candidates]
    return [
        i + 1
        for i in sorted(range(len(shown)), key=lambda i: (not shown[i].startswith("control:"), TASTE.get(shown[i], 9)))
    ]


def _by_keys(pg, target: list[int]) -> None:
    for i, place in enumerate(target):
        pg.keyboard.press(str(place))
        expect(pg.locator(f'.rank-card[data-place="{place}"]')).to_have_class(re.compile(r"\bis-selected\b"))
        for _ in range(_screen(pg).index(place) - i):
            pg.keyboard.press("ArrowUp")
    assert _screen(pg) == target


def _by_drag(pg, target: list[int]) -> None:
    for i, place in enumerate(target):
        current = _screen(pg)
        if current.index(place) == i:
            continue
        source = pg.locator(f'.rank-card[data-place="{place}"] .rank-handle')
        dest = pg.locator(f'.rank-card[data-place="{current[i]}"]')
        source.drag_to(dest, target_position={"x": 30, "y": 4})
    assert _screen(pg) == target


@pytest.mark.parametrize("lang", ["en", "ar"])
def test_a_judge_ranks_every_set_by_drag_and_keys_and_the_researcher_gets_the_report(
    page, live_server, celery_worker, researcher, make_user, lang
):
    from annotation.judging.protocols.ranking.models import RankingItem, RankingJudgment
    from annotation.judging.services.design import design_get_or_create
    from metrics.reports.models import Report

    study = study_with_data(owner=researcher, n_originals=3, systems=tuple(TASTE), name=f"Ranking {lang}")
    study_update(study=study, changes={"language": lang})
    study_member_add(study=study, user=make_user("ann"), role=Role.JUDGE)
    bad: list[str] = []
    page.on("response", lambda r: bad.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    # the researcher chooses the protocol, k and scores on the design page, and opens the study
    browser_login(page, "rita")
    page.goto(f"/studies/{study.pk}/judging/design/")
    page.locator('input[name="protocol"][value="ranking"]').check()
    page.locator('input[name="ranking_k"]').fill("3")
    page.locator('input[name="ranking_scores"]').check()
    for kind, n in (("identical", "1"), ("random", "0"), ("unigram", "0")):
        page.locator(f'input[name="controls_{kind}"]').fill(n)
    page.get_by_role("button", name="Save design").click()
    page.wait_for_load_state()
    design = design_get_or_create(study=study)
    assert (design.protocol, design.ranking_k, design.ranking_scores) == ("ranking", 3, True)
    page.locator("#open-button").click()
    page.wait_for_load_state()
    study.refresh_from_db()
    assert study.status == "open"

    ctx = page.context.browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    pg.on("response", lambda r: bad.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    js_errors: list[str] = []
    pg.on("pageerror", lambda exc: js_errors.append(str(exc)))
    browser_login(pg, "ann")
    pg.goto(f"/judge/studies/{study.pk}/rank/")
    assert (pg.evaluate("document.documentElement.dir") == "rtl") == (lang == "ar")
    pg.locator('form[action$="/instructions/"] button[type="submit"]').click()
    made: dict[str, tuple[list, dict]] = {}  # token → (order of places with ties, scores by place)
    n = 0
    while True:
        expect(pg.locator("#rating-form, #done-h").first).to_be_visible(timeout=LOAD)
        if pg.locator("#done-h").count():
            break
        expect(pg.locator("#rank-list[data-ready]")).to_have_count(1)
        token = pg.locator('#rating-form input[name="token"]').input_value()
        item = RankingItem.objects.get(token=token)
        target = _wanted(item)
        (_by_drag if n % 2 else _by_keys)(pg, target)
        order: list = list(target)
        if n == 2:  # a tie by key: the second with the first
            pg.keyboard.press(str(target[1]))
            pg.keyboard.press("=")
            expect(pg.locator(f'.rank-card[data-place="{target[1]}"]')).to_have_class(re.compile(r"\bis-tied\b"))
            order = [[target[0], target[1]], *target[2:]]
        scores = {p: 90 - 30 * i for i, p in enumerate(target)}
        for p, s in scores.items():
            pg.locator(f"#score_{p}").fill(str(s))
        pg.locator(f'.rank-card[data-place="{target[0]}"] .sentence-text').click()  # a click is not a move
        made[token] = (order, scores)
        pg.keyboard.press("Enter")
        pg.wait_for_load_state()
        n += 1
    assert n == 3 * 2  # one set of the three systems and one control set per original

    # Backspace: back to the last set, change it by keys (the last two swapped), Enter.
    expect(pg.locator("#previous-link")).to_be_visible()
    judge_keys_ready(pg)
    pg.keyboard.press("Backspace")
    expect(pg.locator("#rank-list[data-ready]")).to_have_count(1, timeout=LOAD)
    token = pg.locator('#rating-form input[name="token"]').input_value()
    order, scores = made[token]
    flat = [p for g in order for p in (g if isinstance(g, list) else [g])]
    assert _screen(pg) == flat  # the page shows the judge's own order back
    pg.keyboard.press(str(flat[-1]))
    pg.keyboard.press("ArrowUp")
    made[token] = ([*flat[:-2], flat[-1], flat[-2]], scores)
    expect(pg.locator(f"#rank_{flat[-1]}")).to_have_value(str(len(flat) - 1))
    pg.keyboard.press("Enter")
    expect(pg.locator("#done-h")).to_be_visible(timeout=LOAD)
    assert js_errors == []
    ctx.close()

    def tied_as_sets(groups):  # the order within a tie means nothing
        return [sorted(g) if isinstance(g, list) else g for g in groups]

    stored = {
        j.item.token: (tied_as_sets(j.groups), j.scores)
        for j in RankingJudgment.objects.filter(study=study, is_latest=True).select_related("item")
    }
    expected = {}
    for token, (order, scores) in made.items():
        cands = RankingItem.objects.get(token=token).candidates
        groups = [[cands[p - 1] for p in g] if isinstance(g, list) else cands[g - 1] for g in order]
        expected[token] = (tied_as_sets(groups), {str(cands[p - 1]): s for p, s in scores.items()})
    assert stored == expected
    assert RankingJudgment.objects.filter(study=study).count() == 7  # six rankings and one revision

    page.goto(f"/studies/{study.pk}/judging/qc/")  # the researcher, still signed in
    row = page.locator('#ranking-qc-table tr[data-judge="ann"] td')
    expect(row.nth(0)).to_have_text("3")
    expect(row.nth(1)).to_have_text("3")  # the copy was put first every time

    page.goto(f"/studies/{study.pk}/judging/design/")
    href = page.get_by_role("link", name="Export the rankings (JSONL)").get_attribute("href")
    lines = [json.loads(x) for x in page.request.get(href).text().splitlines()]
    assert len(lines) == 6 and all(x["judge"] == "ann" for x in lines)
    href = page.get_by_role("link", name="Export the rankings (CSV)").get_attribute("href")
    rows = list(csv.DictReader(io.StringIO(page.request.get(href).text())))
    assert len(rows) == 6 * 3

    page.goto(f"/studies/{study.pk}/report/")
    page.get_by_label("Bootstrap resamples").fill("50")
    page.get_by_role("button", name="Build report").click()
    expect(page.locator("#section-pl_ranking")).to_be_visible(timeout=60_000)
    report = Report.objects.get(study=study)
    assert report.result["systems"][0]["system"] == "alpha"
    links = page.locator("#report-exports a").evaluate_all("els => els.map(e => e.getAttribute('href'))")
    links += [
        f"/studies/{study.pk}/reports/{report.pk}/tables/{slug}.csv"
        for slug in page.locator('[id^="section-"]').evaluate_all("els => els.map(e => e.id.slice('section-'.length))")
    ]
    for href in links:
        r = page.request.get(href)
        assert r.status == 200, (href, r.status)
        assert r.body(), href
    assert bad == [], bad


def test_a_finger_drags_a_paraphrase_by_its_handle_on_a_touch_screen(page, live_server, researcher, make_user):
    from annotation.judging.protocols.ranking.models import RankingItem, RankingJudgment

    study = _touch_study(researcher, make_user, "Ranking touch")
    ctx = page.context.browser.new_context(
        base_url=live_server.url, viewport={"width": 400, "height": 800}, has_touch=True, is_mobile=True
    )
    pg = ctx.new_page()
    browser_login(pg, "ann")
    pg.goto(f"/judge/studies/{study.pk}/rank/")
    pg.locator('form[action$="/instructions/"] button[type="submit"]').click()
    expect(pg.locator("#rank-list[data-ready]")).to_have_count(1, timeout=LOAD)
    before = _screen(pg)
    pg.locator("#rank-list").evaluate("el => el.scrollIntoView({block: 'start'})")  # all three cards on screen
    handle = pg.locator(f'.rank-card[data-place="{before[2]}"] .rank-handle').bounding_box()
    top = pg.locator(f'.rank-card[data-place="{before[0]}"]').bounding_box()
    cdp = ctx.new_cdp_session(pg)
    x, y = handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for step in range(1, 6):  # a finger moves in small steps
        ty = y + (top["y"] + 4 - y) * step / 5
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": ty}]})
    pg.wait_for_timeout(300)  # the finger rests before it lifts (no fling)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": ty}]})
    pg.wait_for_timeout(300)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    after = [before[2], before[0], before[1]]
    assert _screen(pg) == after
    expect(pg.locator(f"#rank_{before[2]}")).to_have_value("1")
    token = pg.locator('#rating-form input[name="token"]').input_value()
    # (a finger that lifts while still moving starts a fling, and Chromium spends the next tap on
    # stopping it, as in any list: hence the rest before the finger lifts)
    pg.locator("#submit-button").tap()
    expect(pg.locator("#done-h")).to_be_visible(timeout=LOAD)
    cands = RankingItem.objects.get(token=token).candidates
    assert RankingJudgment.objects.get(item__token=token).groups == [cands[p - 1] for p in after]
    ctx.close()


def _touch_study(researcher, make_user, name: str):
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open

    study = study_with_data(owner=researcher, n_originals=1, systems=tuple(TASTE), name=name)
    study_member_add(study=study, user=make_user("ann"), role=Role.JUDGE)
    design_update(
        study=study,
        changes={
            "protocol": "ranking",
            "seed": 3,
            "ranking_k": 3,
            "control_counts": {"identical": 0, "random": 0, "unigram": 0},
        },
    )
    study_judging_open(study=study)
    return study


def test_a_phone_user_moves_and_ties_paraphrases_by_tapping_their_buttons(page, live_server, researcher, make_user):
    """Issue 42: ties needed the = key, which a phone has not. Each card's buttons move it and tie
    it with the one above (a toggle that says whether it is pressed); what is stored is the screen."""
    from annotation.judging.protocols.ranking.models import RankingItem, RankingJudgment

    study = _touch_study(researcher, make_user, "Ranking taps")
    ctx = page.context.browser.new_context(
        base_url=live_server.url, viewport={"width": 375, "height": 800}, has_touch=True, is_mobile=True
    )
    pg = ctx.new_page()
    browser_login(pg, "ann")
    pg.goto(f"/judge/studies/{study.pk}/rank/")
    pg.locator('form[action$="/instructions/"] button[type="submit"]').click()
    expect(pg.locator("#rank-list[data-ready]")).to_have_count(1, timeout=LOAD)
    first, second, third = _screen(pg)
    card = lambda place: pg.locator(f'.rank-card[data-place="{place}"]')  # noqa: E731
    expect(card(first).locator(".rank-up")).to_be_disabled()  # nowhere further up
    expect(card(first).locator(".rank-tie")).to_be_disabled()  # nothing above to tie with
    expect(card(third).locator(".rank-down")).to_be_disabled()
    card(third).locator(".rank-up").tap()
    assert _screen(pg) == [first, third, second]
    expect(pg.locator("#rate-status")).to_contain_text(f"{third}")
    card(second).locator(".rank-tie").tap()  # the last one ties with the one above it
    expect(card(second).locator(".rank-tie")).to_have_attribute("aria-pressed", "true")
    expect(card(second)).to_have_class(re.compile(r"\bis-tied\b"))
    expect(pg.locator(f"#rank_{second}")).to_have_value("2")
    expect(pg.locator(f"#rank_{third}")).to_have_value("2")
    card(second).locator(".rank-tie").tap()  # pressed again: untied
    expect(card(second).locator(".rank-tie")).to_have_attribute("aria-pressed", "false")
    expect(pg.locator(f"#rank_{second}")).to_have_value("3")
    card(second).locator(".rank-tie").tap()
    token = pg.locator('#rating-form input[name="token"]').input_value()
    pg.locator("#submit-button").tap()
    expect(pg.locator("#done-h")).to_be_visible(timeout=LOAD)
    cands = RankingItem.objects.get(token=token).candidates
    groups = RankingJudgment.objects.get(item__token=token).groups
    assert groups[0] == cands[first - 1] and sorted(groups[1]) == sorted([cands[third - 1], cands[second - 1]])
    ctx.close()


def test_the_buttons_work_by_keyboard_alone_and_keep_the_focus(page, live_server, researcher, make_user):
    """Tab reaches a card's buttons, Enter and Space press them, and the focus stays on the
    button that was pressed while its card moves (moving a node would otherwise drop it)."""
    study = _touch_study(researcher, make_user, "Ranking tabs")
    browser_login(page, "ann")
    page.goto(f"/judge/studies/{study.pk}/rank/")
    page.locator('form[action$="/instructions/"] button[type="submit"]').click()
    expect(page.locator("#rank-list[data-ready]")).to_have_count(1, timeout=LOAD)
    first, second, third = _screen(page)
    up = page.locator(f'.rank-card[data-place="{third}"] .rank-up')
    for _ in range(30):  # Tab to it, as a keyboard user does
        page.keyboard.press("Tab")
        if up.evaluate("el => el === document.activeElement"):
            break
    page.keyboard.press("Enter")
    assert _screen(page) == [first, third, second]
    expect(up).to_be_focused()
    page.keyboard.press(" ")
    assert _screen(page) == [third, first, second]
    expect(up).to_be_disabled()  # at the top: the focus falls back on its card, never on the page
    assert page.evaluate("document.activeElement.closest('.rank-card')?.dataset.place") == str(third)
    page.keyboard.press("Tab")  # from the card to its next button
    assert page.evaluate("document.activeElement.classList.contains('rank-down')")


@pytest.mark.parametrize("lang", ["en", "ar"])
def test_the_ranking_pages_fit_their_boxes_at_1280_and_375_px(page, live_server, researcher, make_user, lang):
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from tests.e2e.test_layout_and_policy import OVERFLOW_JS, WIDTHS

    study = study_with_data(owner=researcher, n_originals=2, systems=tuple(TASTE), name=f"Ranking fit {lang}")
    study_update(study=study, changes={"language": lang})
    study_member_add(study=study, user=make_user("ann"), role=Role.JUDGE)
    design_update(study=study, changes={"protocol": "ranking", "ranking_k": 3, "ranking_scores": True})
    study_judging_open(study=study)
    browser_login(page, "ann")
    page.goto(f"/judge/studies/{study.pk}/instructions/")
    page.locator('form[action$="/instructions/"] button[type="submit"]').click()
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for url in (f"/judge/studies/{study.pk}/instructions/", f"/judge/studies/{study.pk}/rank/"):
            page.goto(url)
            client, scroll, boxes = page.evaluate(OVERFLOW_JS)
            assert scroll <= client, f"{url} at {width}px scrolls sideways"
            assert boxes == [], f"{url} at {width}px: content sticks out of {boxes}"
    page.screenshot(path=f"/tmp/rank-{lang}.png", full_page=True)
