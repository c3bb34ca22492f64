"""In real Chromium: an annotator aligns a pair with the mouse and the keyboard, undoes,
reloads, and submits; the stored links are exactly those made."""

import re
import time

import pytest
from playwright.sync_api import expect

from annotation.alignment.models import AlignmentAssignment, AlignmentPair, ScoringRun
from annotation.alignment.services.assignments import alignment_config_update, assignments_create
from annotation.alignment.services.drafts import assignment_submit
from annotation.alignment.services.pairs import pairs_import_file
from annotation.alignment.services.systems import system_alignments_store
from metrics.core.alignment.model import Alignment
from tests.conftest import browser_login, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

S1 = "He gave up the ghost at dawn."  # He gave up the ghost at dawn .
S2 = "He passed away early in the morning."  # He passed away early in the morning .


@pytest.fixture
def task(study, annotator):
    pairs_import_file(study=study, data=f"pair_id,sentence1,sentence2\nghost,{S1},{S2}\n".encode(), filename="p.csv")
    pair = AlignmentPair.objects.get(study=study)
    auto = system_alignments_store(
        study=study,
        name="auto",
        alignments={pair.pk: Alignment(tuple(pair.tokens1), tuple(pair.tokens2), frozenset({(0, 0), (3, 5)}))},
    )
    alignment_config_update(study=study, prefill_system=auto)
    assignments_create(study=study)
    return AlignmentAssignment.objects.get(annotator=annotator)


def cell(page, w1, w2, state):
    return page.get_by_role("button", name=f"{w1} × {w2}, {state}", exact=True)


def drag(page, start, end):
    a, b = start.bounding_box(), end.bounding_box()
    page.mouse.move(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2)
    page.mouse.down()
    page.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2, steps=6)
    page.mouse.up()


def test_annotator_aligns_with_mouse_and_keyboard_undoes_reloads_and_submits(page, task):
    browser_login(page, "anna")
    expect(page).to_have_url(re.compile(r"/alignment/$"))
    page.get_by_role("link", name="Pair 1", exact=True).click()  # the annotator's own number, not the id "ghost"
    status = page.locator("#save-status")

    # The grid starts from the automatic alignment; Clear and Reset to automatic work.
    expect(cell(page, "He", "He", "sure link")).to_be_visible()
    page.get_by_role("button", name="Clear").click()
    expect(cell(page, "He", "He", "no link")).to_be_visible()
    page.get_by_role("button", name="Reset to automatic").click()
    expect(cell(page, "He", "He", "sure link")).to_be_visible()
    expect(cell(page, "the", "the", "sure link")).to_be_visible()

    # Mouse: a click makes a sure link, a click on it removes it, Shift+click makes a possible one.
    cell(page, "the", "the", "sure link").click()
    cell(page, ".", ".", "no link").click()
    cell(page, "dawn", "early", "no link").click(modifiers=["Shift"])
    expect(cell(page, "dawn", "early", "possible link")).to_be_visible()
    # Dragging paints a many-to-many block: "gave up the ghost" × "passed away".
    drag(page, cell(page, "gave", "passed", "no link"), cell(page, "ghost", "away", "no link"))
    for w1 in ("gave", "up", "the", "ghost"):
        for w2 in ("passed", "away"):
            expect(cell(page, w1, w2, "sure link")).to_be_visible()

    # Hovering highlights the row, the column and the linked words above the grid.
    cell(page, "ghost", "away", "sure link").hover()
    expect(page.locator("#link-summary")).to_contain_text("ghost is linked to passed, away")
    expect(page.locator('.tok[data-side="2"][data-k="1"]')).to_have_class(re.compile(r"\bpartner\b"))
    expect(page.locator('.tok[data-side="1"][data-k="4"]')).to_have_class(re.compile(r"\bhl\b"))

    # Keyboard: arrows move the focus, Space makes a sure link, P a possible one, Ctrl+Z undoes.
    cell(page, "dawn", "early", "possible link").focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    expect(cell(page, "dawn", "morning", "no link")).to_be_focused()
    page.keyboard.press("Space")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("p")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Space")
    expect(cell(page, "at", "in", "sure link")).to_be_focused()
    page.keyboard.press("Control+z")
    expect(cell(page, "at", "in", "no link")).to_be_visible()
    page.keyboard.press("Control+Shift+z")
    expect(cell(page, "at", "in", "sure link")).to_be_visible()
    page.keyboard.press("Control+z")
    expect(cell(page, "at", "in", "no link")).to_be_visible()
    expect(status).to_have_text("Saved")
    expect(page.locator("#assignment-status")).to_have_text("Draft saved")
    page.mouse.move(0, 0)
    cell(page, "ghost", "away", "sure link").hover()
    screenshot(page, "annotator-grid")

    # The draft lives on the server: a reload shows the same links.
    page.reload()
    expect(cell(page, "dawn", "morning", "sure link")).to_be_visible()
    expect(cell(page, "at", "the", "possible link")).to_be_visible()
    expect(cell(page, "at", "in", "no link")).to_be_visible()
    expect(cell(page, "the", "the", "no link")).to_be_visible()

    # Enter submits.
    cell(page, "He", "He", "sure link").focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/alignment/$"))
    # The next page confirms the submission (it used to move on without a word).
    expect(page.get_by_role("status")).to_contain_text(
        "Alignment of pair “1” submitted. You have submitted every pair assigned to you."
    )
    task.refresh_from_db()
    assert task.status == "submitted"
    block = {(i, j) for i in range(1, 5) for j in (1, 2)}
    assert {tuple(x) for x in task.sure} == {(0, 0), (7, 7), (6, 6)} | block
    assert {tuple(x) for x in task.possible} == {(6, 3), (5, 5)}
    assert task.active_seconds >= 0 and task.server_seconds is not None and task.server_seconds >= 0


def test_a_sixty_by_sixty_grid_keeps_its_headers_in_view(page, study, annotator):
    words1 = " ".join(f"a{k}" for k in range(60))
    words2 = " ".join(f"b{k}" for k in range(60))
    pairs_import_file(
        study=study, data=f"pair_id,sentence1,sentence2\nbig,{words1},{words2}\n".encode(), filename="p.csv"
    )
    assignments_create(study=study)
    task = AlignmentAssignment.objects.get(annotator=annotator)
    browser_login(page, "anna")
    page.goto(f"/alignment/tasks/{task.pk}/")
    expect(page.locator("button.cell")).to_have_count(3600)
    first = cell(page, "a0", "b0", "no link")
    first.focus()
    page.keyboard.press("Control+End")
    last = cell(page, "a59", "b59", "no link")
    expect(last).to_be_focused()
    page.keyboard.press("Space")
    expect(cell(page, "a59", "b59", "sure link")).to_be_in_viewport()
    box = page.locator("#grid-scroll").bounding_box()
    col_head = page.locator('th.colhead[data-j="59"]').bounding_box()
    row_head = page.locator('th.rowhead[data-i="59"]').bounding_box()
    assert abs(col_head["y"] - box["y"]) < 3, "the column headers stay at the top of the scrolled grid"
    assert abs(row_head["x"] - box["x"]) < 3, "the row headers stay at the left of the scrolled grid"
    expect(page.locator("#save-status")).to_have_text("Saved")
    screenshot(page, "annotator-grid-60x60")


def test_researcher_imports_a_system_and_scores_it_in_the_browser(page, celery_worker, task, researcher, tmp_path):
    assignment_submit(assignment=task, sure=[[0, 0], [7, 7], [6, 6]], possible=[], revision=0, active_seconds=40)
    pharaoh = tmp_path / "giza.txt"
    pharaoh.write_text("0-0 6-6 7p7 5-5\n", encoding="utf-8")
    browser_login(page, "rita")
    page.goto(f"/studies/{task.pair.study_id}/alignment/")
    page.get_by_label("System name", exact=True).fill("giza")
    page.get_by_label("Alignment file").set_input_files(str(pharaoh))
    page.get_by_label("Alignment format").select_option("pharaoh")
    page.get_by_role("button", name="Import alignments").click()
    expect(page.locator("#alignment-systems")).to_contain_text("giza")
    page.get_by_role("link", name="Scoring").last.click()
    page.get_by_label("System alignment", exact=True).select_option(label="giza")
    page.get_by_role("button", name="Score the system").click()
    expect(page.locator("#results-summary")).to_be_visible(timeout=30_000)
    run = ScoringRun.objects.get()
    # 4 proposed links, 3 of them in the gold (one as possible), 3 gold sure links found.
    expect(page.locator("#results-summary")).to_contain_text("0.7500")
    assert run.results["summary"]["link_precision"] == 0.75
    screenshot(page, "researcher-alignment-results")
    deadline = time.monotonic() + 5
    while run.status != "succeeded" and time.monotonic() < deadline:
        run.refresh_from_db()
    assert run.status == "succeeded"
