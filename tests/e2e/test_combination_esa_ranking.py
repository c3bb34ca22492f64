"""The combination matrix for the protocols whose attention check is drawn among the items
(issue 38): ESA, ranking and side by side, each in real Chromium, as a field study in Arabic.

For every registered protocol with screening whose check is not a page of its own (the
absolute protocol's check has its own page; its rows are test_combination_matrix's): the
researcher's study is in Arabic (right to left), has two training items with a pass rule
(both right needed) and one attention check per participant under the "end" policy, is
opened with no judges, and is shared through a Prolific join link. First a judge account
the researcher adds after opening signs in (its list is built while nobody holds an item:
it must not be empty), trains and answers every item. Then participant 1 arrives through the
link with Prolific's ids, consents, passes the training, answers every item by the keys of
the page (the attention check as it asks), finishes and gets the completion code.
Participant 2 arrives later, after participant 1 has finished (a judge added late), gets a
non-empty list of their own and finishes the same way. Every judge page is right to left;
the attention check counts as one more item on every page's progress bar and on the end
page. The researcher's participants page shows both participants with their items done and
code, the progress page counts every judge's judgments, and the report builds through a
real worker. No judge page names a system or says "control" or "attention", none answers
4xx or 5xx, and none throws a JavaScript error.

A new protocol with screening among the items needs a driver in :data:`DRIVERS` (how a
person answers its training and its items by keys); the first test says so.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from playwright.sync_api import expect

from annotation.enums import Role
from annotation.judging.protocols.registry import protocol_get, protocols_all
from annotation.services.membership import study_member_add
from tests.annotation.judging.test_blinding import scrub_random_values
from tests.conftest import browser_login, watch_console
from tests.e2e.test_combination_side_by_side import TRAINING as COMPARISON_TRAINING
from tests.e2e.test_combination_side_by_side import _press
from tests.e2e.test_esa_field import TRAINING as ESA_TRAINING
from tests.e2e.test_esa_field import _mark_major
from tests.e2e.test_ranking_field import TRAINING as RANKING_TRAINING
from tests.e2e.test_ranking_field import _by_keys, _screen
from tests.factories import study_with_data

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LOAD = 30_000
CODE = "LATEJOIN38"
SCREEN_OUT = "SCREENED38"
#: Distinctive system names, so that a page naming one is findable.
SYSTEMS = ("sysalpha-x38", "sysbeta-x38", "sysgamma-x38")
#: Words no judge page may carry: a system's name, or a word that would give a check or a
#: control away (the control kinds are among the blinding suite's words too).
FORBIDDEN = ("control", "attention", "identical", "unigram", *SYSTEMS)


def _esa_score(pg, score: int) -> None:
    """The score typed into its field, sent with Enter (the page's key for "submit")."""
    pg.locator("#esa-score").fill(str(score))
    with pg.expect_navigation():
        pg.keyboard.press("Enter")


def _esa_train(pg, rtl: bool) -> None:
    """Both training items right: the faithful paraphrase high and unmarked, the unrelated
    sentence marked major (↓ then 2) and low."""
    expect(pg.locator("#rating-form[data-ready]")).to_be_attached()
    if pg.locator("#esa-candidate").inner_text() == ESA_TRAINING[1]["candidate"]:
        _mark_major(pg)
        _esa_score(pg, 10)
    else:
        _esa_score(pg, 90)


def _esa_item(pg, check, rtl: bool) -> None:
    """A real item gets a middling score; the check as an attentive reader answers it: a copy
    of the original high, an unrelated sentence marked major and low."""
    expect(pg.locator("#rating-form[data-ready]")).to_be_attached()
    if check is None:
        _esa_score(pg, 60)
        return
    copy = pg.locator("#esa-candidate").text_content() == pg.locator("#esa-original").text_content()
    assert copy == (check.criterion == "copy")
    if not copy:
        _mark_major(pg)
    _esa_score(pg, 90 if copy else 10)


def _ranking_train(pg, rtl: bool) -> None:
    """Both training sets in their reference order, by the digit and ↑ keys."""
    original = pg.locator(".compare-original .sentence-text").inner_text()
    _by_keys(pg, [2, 3, 1] if original == RANKING_TRAINING[0]["original"] else [3, 1, 2])
    pg.keyboard.press("Enter")


def _ranking_item(pg, check, rtl: bool) -> None:
    """A real set kept in screen order; the check with the copy of the original first and the
    unrelated sentence last, as it asks."""
    from annotation.judging.protocols.ranking.screening import attention_layout

    if check is None:
        _by_keys(pg, _screen(pg))
    else:
        _item, _texts, copy, unrelated = attention_layout(check=check)
        original = pg.locator(".compare-original .sentence-text").inner_text()
        assert pg.locator(f'.rank-card[data-place="{copy}"] .sentence-text').inner_text() == original
        rest = [p for p in _screen(pg) if p not in (copy, unrelated)]
        _by_keys(pg, [copy, *rest, unrelated])
    pg.keyboard.press("Enter")


def _comparison_train(pg, rtl: bool) -> None:
    """Both training pairs right, by the keys of the screen (on an Arabic page A is on the right)."""
    expect(pg.locator(".criterion.is-current")).to_have_count(1)
    original = pg.locator(".compare-original .sentence-text").inner_text()
    row = next(r for r in COMPARISON_TRAINING if r["original"] == original)
    _press(pg, row["preference"], rtl)
    pg.keyboard.press("Enter")


def _comparison_item(pg, check, rtl: bool) -> None:
    """A real pair gets A; the check gets the side holding the copy of the original."""
    expect(pg.locator(".criterion.is-current")).to_have_count(1)
    if check is None:
        _press(pg, "A", rtl)
    else:
        original = pg.locator(".compare-original .sentence-text").inner_text()
        side = "A" if pg.locator("#side-a .sentence-text").inner_text() == original else "B"
        assert side == ("A" if check.expected == 0.0 else "B")
        _press(pg, side, rtl)
    pg.keyboard.press("Enter")


@dataclass(frozen=True)
class Driver:
    """How a person answers one protocol's pages: its design, its training rows (and whether
    they are given as text), one training item, one item or attention check."""

    design: dict
    systems: tuple[str, ...]
    training: list[dict]
    from_text: bool
    train: Callable
    answer: Callable


DRIVERS = {
    "esa": Driver({"protocol": "esa"}, SYSTEMS[:2], ESA_TRAINING, True, _esa_train, _esa_item),
    "ranking": Driver(
        {"protocol": "ranking", "ranking_k": 3}, SYSTEMS, RANKING_TRAINING, True, _ranking_train, _ranking_item
    ),
    "comparison": Driver(
        {"protocol": "comparison"}, SYSTEMS, COMPARISON_TRAINING, False, _comparison_train, _comparison_item
    ),
}


def _among_items() -> list[str]:
    """The registry's protocols with screening whose attention check is drawn among the items."""
    return [u.slug for u in protocols_all() if u.has_screening and u.attention_page != "judging:attention"]


def test_every_protocol_with_an_attention_check_among_its_items_has_a_driver():
    assert {"esa", "ranking"} <= set(_among_items())
    assert set(_among_items()) == set(DRIVERS)


def _blinding_leaks(pages: list[tuple[str, str]], study, unit) -> list[str]:
    """Every forbidden word on a judge page (random tokens and stamps blanked first: they may
    spell a word by chance, which is no leak)."""
    from annotation.judging.models import AttentionCheck, TrainingItem

    tokens = set(unit.items_of_study(study=study).values_list("token", flat=True))
    tokens |= set(AttentionCheck.objects.filter(assignment__study=study).values_list("token", flat=True))
    tokens |= set(TrainingItem.objects.filter(study=study).values_list("token", flat=True))
    leaks = []
    for where, html in pages:
        low = scrub_random_values(html, tokens).lower()
        leaks += [f"{where}: {w!r}" for w in FORBIDDEN if w.lower() in low]
    return leaks


def _study(*, owner, driver: Driver, name: str):
    """The factory's study, its paraphrases reworded so that no text names its system (the
    factory writes "from <system>" into each; the scan would find that, not a leak)."""
    from annotation.models import Candidate

    study = study_with_data(owner=owner, n_originals=3, systems=driver.systems, name=name)
    words = ("first", "second", "third")
    for c in Candidate.objects.filter(original__study=study).select_related("original", "system"):
        way = words[driver.systems.index(c.system.name)]
        c.text = f"{c.original.text.removesuffix('.')}, put the {way} way."
        c.save(update_fields=["text"])
    return study


def _judge(browser, live_server, study, driver: Driver, bad: list[str], pages: list[tuple[str, str]], *, via) -> dict:
    """One person, in a browser of their own, through the training and every item: a Prolific
    participant when ``via`` is the join link (to the completion code), else the username of a
    judge account the researcher added (signed in, to the done page)."""
    from annotation.judging.models import AttentionCheck
    from annotation.models import Participant

    ctx = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    ctx.set_default_timeout(LOAD)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.on("response", lambda r: bad.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    csp = watch_console(pg)
    ids: dict[str, str] = {}
    if isinstance(via, str):
        browser_login(pg, via)
        pg.goto(f"/judge/studies/{study.pk}/")
    else:
        ids = {k: secrets.token_hex(12) for k in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")}
        pg.goto(f"/join/{via.token}/?" + "&".join(f"{k}={v}" for k, v in ids.items()))
        expect(pg.locator("html")).to_have_attribute("lang", "ar")
        expect(pg.locator("html")).to_have_attribute("dir", "rtl")
        pg.locator("#consent-accept").click()
        pg.locator("#start-link").click()
    expect(pg.locator("html")).to_have_attribute("dir", "rtl")
    if pg.locator('form[action$="/instructions/"] button[type="submit"]').count():
        pg.locator('form[action$="/instructions/"] button[type="submit"]').click()

    pg.wait_for_url("**/training/", timeout=LOAD)
    trained = 0
    while "/training/" in pg.url:
        expect(pg.locator("#training-feedback, #rating-form").first).to_be_visible(timeout=LOAD)
        expect(pg.locator("html")).to_have_attribute("dir", "rtl")
        pages.append((pg.url, pg.content()))
        if pg.locator("#training-feedback").count():
            with pg.expect_navigation():
                pg.locator("#continue-button").click()
            continue
        driver.train(pg, True)
        pg.wait_for_url("**/training/feedback/", timeout=LOAD)
        trained += 1
    assert trained == 2

    answered, checks, bars = 0, [], []
    while True:
        expect(pg.locator("#rating-form, #done-h").first).to_be_visible(timeout=LOAD)
        expect(pg.locator("html")).to_have_attribute("dir", "rtl")
        pages.append((pg.url, pg.content()))
        if pg.locator("#done-h").count():
            break
        bar = pg.locator("#judge-progress")
        bars.append((int(bar.get_attribute("value")), int(bar.get_attribute("max"))))
        token = pg.locator('#rating-form input[name="token"]').input_value()
        check = AttentionCheck.objects.filter(token=token).first()
        driver.answer(pg, check, True)
        expect(pg.locator(f'input[name="token"][value="{token}"]')).to_have_count(0, timeout=LOAD)
        if check is None:
            answered += 1
        else:
            checks.append(token)
    # The check is counted as one more item, the same on every page and on the end page.
    n = answered + len(checks)
    assert bars == [(i, n) for i in range(n)], bars
    expect(pg.locator("main")).to_contain_text(f"{n} / {n}")
    if ids:
        expect(pg.locator("#completion-code")).to_have_text(CODE)
        expect(pg.locator("html")).to_have_attribute("dir", "rtl")
        pages.append((pg.url, pg.content()))
    ctx.close()
    assert not errors, errors
    assert not csp, csp
    username = Participant.objects.get(platform_id=ids["PROLIFIC_PID"]).user.username if ids else via
    return {"username": username, "answered": answered, "checks": checks, "ids": ids}


@pytest.mark.parametrize("slug", _among_items())
def test_late_judges_of_an_arabic_field_study_all_get_items_and_the_researcher_counts_them(
    page, browser, live_server, celery_worker, researcher, make_user, slug
):
    from annotation.judging import screening, training
    from annotation.judging.models import AttentionCheck
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from annotation.models import Participant
    from annotation.participation import services as participation
    from annotation.services.studies import study_update
    from metrics.reports.models import Report

    driver, unit = DRIVERS[slug], protocol_get(slug)
    study = _study(owner=researcher, driver=driver, name=f"Late {slug} ar")
    study_update(study=study, changes={"language": "ar"})
    design_update(
        study=study,
        changes={**driver.design, "seed": 38, "control_counts": {"identical": 1, "random": 0, "unigram": 0}},
    )
    study_judging_open(study=study)  # with no judges: nobody holds an item yet
    for row in driver.training:
        training.training_item_add(study=study, row=row, from_text=driver.from_text)
    screening.screening_settings_update(
        study=study,
        changes={
            "training_required": 2,
            "training_retries": 0,
            "attention_count": 1,
            "attention_policy": "end",
            "attention_max_failures": 1,
        },
    )
    link = participation.join_link_create(
        study=study,
        role="judge",
        platform="prolific",
        created_by=researcher,
        completion_code=CODE,
        screen_out_code=SCREEN_OUT,
    )
    # A judge account the researcher adds after opening signs in first: its list is built
    # when nobody holds an item yet. Then the two participants, the second after the first is done.
    study_member_add(study=study, user=make_user("layla"), role=Role.JUDGE)
    bad: list[str] = []
    pages: list[tuple[str, str]] = []
    account = _judge(browser, live_server, study, driver, bad, pages, via="layla")
    first = _judge(browser, live_server, study, driver, bad, pages, via=link)
    late = _judge(browser, live_server, study, driver, bad, pages, via=link)
    people = [first, late]

    for p in (account, *people):
        assert p["answered"] > 0, p  # every late judge gets a non-empty list
        assert len(p["checks"]) == 1 and AttentionCheck.objects.get(token=p["checks"][0]).passed
        judged = unit.judgments_of_study(study=study).filter(judge__username=p["username"], is_latest=True)
        assert judged.count() == p["answered"]  # the check is no judgment
    assert Participant.objects.filter(study=study, completed_at__isnull=False).count() == 2
    assert _blinding_leaks(pages, study, unit) == []

    # The researcher: both participants on the participants page, with their items done and code.
    browser_login(page, "rita")
    page.on("response", lambda r: bad.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.goto(f"/studies/{study.pk}/participants/")
    for p in people:
        row = page.locator(f'#participants tr[data-pseudonym="{p["username"]}"]')
        expect(row).to_contain_text(p["ids"]["PROLIFIC_PID"])
        expect(row.locator('td[data-field="status"]')).to_have_attribute("data-status", "completed")
        expect(row.locator("td.num").first).to_have_text(f"{p['answered']} / {p['answered']}")
        expect(row).to_contain_text(CODE)

    # The progress page: each judge's answers, and every judgment, counted.
    page.goto(f"/studies/{study.pk}/judging/progress/")
    for p in (account, *people):
        row = page.locator(f'#judge-progress tr[data-judge="{p["username"]}"]')
        expect(row.locator('td[data-field="done"]')).to_have_text(str(p["answered"]))
        expect(row.locator('td[data-field="total"]')).to_have_text(str(p["answered"]))
    total = sum(p["answered"] for p in (account, *people))
    expect(page.locator('#overall-h ~ p.stats strong[data-field="judgments"]')).to_have_text(str(total))
    expect(page.locator('#overall-h ~ p.stats strong[data-field="done"]')).to_have_text(str(total))

    # The report, built by a real worker.
    page.goto(f"/studies/{study.pk}/report/")
    boot = page.get_by_label("Bootstrap resamples")
    if boot.count():
        boot.fill("100")
    page.get_by_role("button", name="Build report").click()
    expect(page.locator("#report-exports")).to_be_visible(timeout=120_000)
    report = Report.objects.get(study=study)
    assert report.status == "succeeded", report.error
    assert bad == [], bad
