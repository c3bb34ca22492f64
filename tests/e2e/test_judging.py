"""In real Chromium: a judge rates by keyboard only, reloads and resumes, revises, finishes;
a researcher opens a study, watches progress refresh and reads QC."""

import re

import pytest
from playwright.sync_api import expect

from annotation.enums import Role
from annotation.services.membership import study_member_add
from tests.conftest import browser_login, enter_on_autofocus, screenshot, watch_console

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def judged_study(study, make_user):
    """The fixture study (5 originals × 2 systems) opened for judge 'ann': 25 items with controls."""
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open

    ann = make_user("ann")
    study_member_add(study=study, user=ann, role=Role.JUDGE)
    design_update(study=study, changes={"seed": 7})
    study_judging_open(study=study)
    return study, ann


def console_errors(page) -> list[str]:
    """Collect the page's console errors (a CSP violation shows up here, not as a page error).

    The browser's own request for /favicon.ico (the site has none) is not ours to judge.
    """
    errors: list[str] = []

    def record(msg):
        text = f"{msg.text} {msg.location.get('url', '')}"
        if msg.type == "error" and "/favicon.ico" not in text:
            errors.append(text)

    page.on("console", record)
    return errors


def at_item(page, heading: str):
    """Wait until the item page shows ``heading`` and its script has taken the keyboard
    (it marks the current criterion); keys pressed before that would be lost."""
    expect(page.locator("#item-h")).to_have_text(heading)
    expect(page.locator(".criterion.is-current")).to_have_count(1)


def rate_by_keys(page, keys: str, expect_next: str):
    for key in keys:
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    at_item(page, expect_next)


def rate_rest_on_the_server(study, judge, *, leave: int):
    from annotation.judging.protocols.absolute.selectors import item_next_for_judge
    from annotation.judging.protocols.absolute.services import judgment_submit
    from annotation.judging.selectors.judge import assignment_for_judge

    assignment = assignment_for_judge(study=study, judge=judge)
    while (item := item_next_for_judge(assignment=assignment)) and item.total - item.done > leave:
        judgment_submit(
            study=study,
            judge=judge,
            token=item.token,
            key=f"server-{item.position:04d}",
            scores={"adequacy": 4, "fluency": 4, "dissimilarity": 3, "overall": 4},
            serve_stamp=item.serve_stamp,
        )


def test_judge_rates_by_keyboard_resumes_revises_and_finishes(page, browser, live_server, judged_study):
    from annotation.judging.protocols.absolute.models import Judgment

    study, ann = judged_study
    errors = console_errors(page)
    browser_login(page, "ann")
    expect(page).to_have_url(re.compile(r"/judge/$"))
    page.get_by_role("link", name="Start").click()

    # first visit: the instructions, then Enter on the focused "Start rating" button
    expect(page.get_by_role("heading", name="How to rate")).to_be_visible()
    screenshot(page, "judge-instructions")
    enter_on_autofocus(page)
    at_item(page, "1 of 25")

    # the accessible structure: four radio groups named by their criterion, radios by number and label
    for name in ("Adequacy", "Fluency", "Lexical dissimilarity", "Overall"):
        expect(page.get_by_role("radiogroup", name=re.compile(f"^{name}"))).to_have_count(1)
    expect(page.get_by_role("radio", name="3 Much of the meaning")).to_have_count(1)
    expect(page.get_by_role("radio", name="5 Perfect")).to_have_count(1)

    # Enter before all four are scored does nothing but say so
    page.keyboard.press("4")
    page.keyboard.press("Enter")
    expect(page.locator("#rate-status")).to_contain_text("Give every criterion a value first")
    expect(page.locator("#item-h")).to_have_text("1 of 25")
    rate_by_keys(page, "423", "2 of 25")  # focus went back to the first unscored criterion (fluency)
    page.keyboard.press("5")
    page.keyboard.press("4")
    expect(
        page.get_by_role("radiogroup", name=re.compile("^Adequacy")).get_by_role("radio", name=re.compile("^5"))
    ).to_be_checked()
    screenshot(page, "judge-rating")
    page.keyboard.press("2")
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    at_item(page, "3 of 25")
    rate_by_keys(page, "3333", "4 of 25")

    # a reload, and another device, resume exactly here
    page.reload()
    at_item(page, "4 of 25")
    other = browser.new_context(base_url=live_server.url)
    other_page = other.new_page()
    other_csp = watch_console(other_page)
    browser_login(other_page, "ann")
    other_page.goto(f"/judge/studies/{study.pk}/")
    expect(other_page.locator("#item-h")).to_have_text("4 of 25")
    other.close()
    assert other_csp == []

    # B goes back to the previous item, with its scores shown; new scores make a revision
    page.keyboard.press("b")
    at_item(page, "Changing item 3 of 25")
    expect(
        page.get_by_role("radiogroup", name=re.compile("^Overall")).get_by_role("radio", name=re.compile("^3"))
    ).to_be_checked()
    rate_by_keys(page, "1111", "4 of 25")
    revised = Judgment.objects.filter(judge=ann, item__position=3).order_by("revision")
    assert [(j.revision, j.values["overall"], j.is_latest) for j in revised] == [(1, 3, False), (2, 1, True)]
    assert Judgment.objects.filter(judge=ann, is_latest=True).count() == 3
    assert all(j.active_seconds is not None for j in Judgment.objects.filter(judge=ann))

    # the rest (all but two) on the server, then the last two by keyboard
    rate_rest_on_the_server(study, ann, leave=2)
    page.reload()
    at_item(page, "24 of 25")
    rate_by_keys(page, "5512", "25 of 25")
    page.keyboard.press("2")
    page.keyboard.press("2")
    page.keyboard.press("2")
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name=re.compile("All done"))).to_be_visible()
    expect(page).to_have_url(re.compile(r"/done/$"))
    assert Judgment.objects.filter(judge=ann, is_latest=True).count() == 25
    screenshot(page, "judge-finished")
    assert errors == []


def test_the_judge_page_fits_a_phone(browser, live_server, judged_study):
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True
    )
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    csp = watch_console(page)
    browser_login(page, "ann")
    page.get_by_role("link", name="Start").click()
    page.get_by_role("button", name="Start rating").click()
    expect(page.locator("#item-h")).to_have_text("1 of 25")
    page.get_by_text("4 Most of the meaning").click()  # tapping a labelled choice works
    expect(page.get_by_role("radio", name="4 Most of the meaning")).to_be_checked()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375, f"the page scrolls sideways on a phone ({width}px wide)"
    screenshot(page, "judge-mobile")
    context.close()
    assert errors == []
    assert csp == []


def careful(item):
    """What an attentive judge gives: the controls' expected scores, good scores otherwise."""
    from annotation.models import Candidate

    kind = Candidate.objects.get(text=item.paraphrase, original__text=item.original).system.kind
    return {"control_identical": (5, 5, 1, 2), "control_random": (1, 5, 5, 1), "control_unigram": (1, 1, 5, 1)}.get(
        kind, (4, 4, 3, 4)
    )


def rate_everything(study, judge, score_fn):
    from annotation.judging.protocols.absolute.selectors import item_next_for_judge
    from annotation.judging.protocols.absolute.services import judgment_submit
    from annotation.judging.selectors.judge import assignment_for_judge

    assignment = assignment_for_judge(study=study, judge=judge)
    while (item := item_next_for_judge(assignment=assignment)) is not None:
        a, f, d, o = score_fn(item)
        judgment_submit(
            study=study,
            judge=judge,
            token=item.token,
            key=f"{judge.username}-{item.position:04d}",
            scores={"adequacy": a, "fluency": f, "dissimilarity": d, "overall": o},
            serve_stamp=item.serve_stamp,
        )


def test_researcher_opens_the_study_and_watches_progress_and_qc(page, study, make_user):
    from annotation.judging.protocols.absolute.frame import judgments_frame
    from annotation.judging.selectors.exclusions import judges_excluded

    ann, bob = make_user("ann"), make_user("bob")
    for judge in (ann, bob):
        study_member_add(study=study, user=judge, role=Role.JUDGE)
    errors = console_errors(page)
    browser_login(page, "rita")
    page.goto(f"/studies/{study.pk}/")
    page.get_by_role("link", name="Judging design").click()
    expect(page.get_by_role("heading", name="Criteria")).to_be_visible()
    page.get_by_label("Seed", exact=True).fill("2010")
    page.get_by_role("button", name="Save design").click()
    expect(page.get_by_text("Design saved.")).to_be_visible()
    screenshot(page, "judging-design")
    page.get_by_role("button", name="Open study for judging").click()
    expect(page.get_by_text("Judging is open")).to_be_visible()
    table = page.get_by_role("table", name="Progress per judge")
    expect(table.locator('tr[data-judge="ann"] [data-field="done"]')).to_have_text("0")

    # judgments arrive; the page refreshes itself
    rate_everything(study, ann, careful)
    expect(table.locator('tr[data-judge="ann"] [data-field="done"]')).to_have_text("25", timeout=12_000)
    screenshot(page, "judging-progress")

    # QC: the attentive judge passes, the one who gives 3s everywhere fails and is excluded
    rate_everything(study, bob, lambda item: (3, 3, 3, 3))
    page.get_by_role("link", name="Judge QC").click()
    qc = page.get_by_role("table", name="Quality control per judge")
    expect(qc.locator('tr[data-judge="ann"] [data-field="verdict"]')).to_contain_text("pass")
    expect(qc.locator('tr[data-judge="bob"] [data-field="verdict"]')).to_contain_text("fail")
    page.get_by_label("Reason for excluding bob").fill("the same score for everything")
    page.get_by_role("button", name="Exclude bob").click()
    expect(page.get_by_role("button", name="Include bob")).to_be_visible()
    screenshot(page, "judging-qc")
    assert judges_excluded(study=study) == {"bob"}
    assert set(judgments_frame(study=study)["judge"]) == {"ann"}
    assert errors == []


def test_a_pem_sized_study_end_to_end(page, researcher, make_user):
    """300 originals × 4 systems + 3 controls = 2,100 items: the first and the last by keyboard."""
    from django.db.models import F
    from django.utils import timezone

    from annotation.judging.protocols.absolute.models import AssignmentItem, Judgment
    from annotation.judging.selectors.judge import assignment_for_judge
    from annotation.judging.services.assignments import instructions_mark_seen
    from annotation.judging.services.opening import study_judging_open
    from tests.factories import study_with_data

    study = study_with_data(
        n_originals=300, systems=("human1", "human2", "machine1", "machine2"), owner=researcher, name="PEM-sized"
    )
    ann = make_user("ann")
    study_member_add(study=study, user=ann, role=Role.JUDGE)
    summary = study_judging_open(study=study)
    assert summary.items == 2100 and summary.controls_created == 900
    assignment = assignment_for_judge(study=study, judge=ann)
    instructions_mark_seen(assignment=assignment)

    browser_login(page, "ann")
    page.get_by_role("link", name="Start").click()
    at_item(page, "1 of 2,100")
    rate_by_keys(page, "4434", "2 of 2,100")
    expect(page.locator("#judge-progress")).to_have_attribute("max", "2100")

    # Items 2..2099 are stored directly (test setup, not the path under test: the
    # service is exercised above and in the unit tests), leaving the last one.
    now = timezone.now()
    todo = list(AssignmentItem.objects.filter(assignment=assignment, position__gte=2, position__lt=2100))
    Judgment.objects.bulk_create(
        [
            Judgment(
                study=study,
                item=i,
                judge=ann,
                key=f"bulk-{i.position:05d}",
                served_at=now,
                submitted_at=now,
                seconds=5.0,
                values={"adequacy": 4, "fluency": 4, "dissimilarity": 3, "overall": 4},
            )
            for i in todo
        ],
        batch_size=1000,
    )
    AssignmentItem.objects.filter(pk__in=[i.pk for i in todo]).update(done_at=now, updated_at=F("created_at"))

    page.reload()
    at_item(page, "2,100 of 2,100")
    for key in "3333":
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name=re.compile("All done"))).to_be_visible()
    expect(page.get_by_text("You have rated all 2,100 pairs")).to_be_visible()
    assert Judgment.objects.filter(judge=ann, is_latest=True).count() == 2100
