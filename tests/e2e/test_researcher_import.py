"""In real Chromium: a researcher logs in, uploads a file and sees the study's counts."""

import pytest
from playwright.sync_api import expect

from tests.conftest import browser_login, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_researcher_uploads_a_file_and_sees_counts(page, researcher, tmp_path):
    data = tmp_path / "study.csv"
    data.write_text(
        "original_id,original,human,machine\n"
        "1,The cat sat on the mat.,A cat was sitting on the mat.,The cat sits on the mat.\n"
        "2,Go home now.,Return home at once.,Go house now.\n",
        encoding="utf-8",
    )
    browser_login(page, "rita")
    page.get_by_role("link", name="New study").click()
    page.get_by_label("Name").fill("Browser study")
    page.get_by_role("button", name="Create study").click()
    page.get_by_label("File").set_input_files(str(data))
    page.get_by_role("button", name="Import").click()
    expect(page.locator('[data-count="originals"]')).to_have_text("2")
    expect(page.locator('[data-count="candidates"]')).to_have_text("4")
    table = page.get_by_role("table", name="Candidates per system")
    expect(table).to_contain_text("human")
    expect(table).to_contain_text("machine")
    screenshot(page, "researcher-study")


def test_researcher_sees_line_numbers_when_the_upload_is_bad(page, study, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("original_id,original,system,candidate\n9,x,s,\n", encoding="utf-8")
    browser_login(page, "rita")
    page.goto(f"/studies/{study.pk}/")
    page.get_by_label("File").set_input_files(str(bad))
    page.get_by_role("button", name="Import").click()
    alert = page.locator("#import-errors")
    expect(alert).to_contain_text("Nothing was imported")
    expect(alert).to_contain_text("bad.csv, line 2, column 'candidate': empty text for system 's'")
    expect(page.locator('[data-count="candidates"]')).to_have_text("10")
