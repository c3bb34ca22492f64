"""The browser fixtures' watchdog (tests/conftest.py, ``Chromium``): a step Chromium never
answers fails within the stall limit instead of hanging the test, and a new Chromium takes over."""

import time

import pytest

import tests.conftest as shared

pytestmark = pytest.mark.browser

#: A promise that never settles: ``page.evaluate`` has no timeout of its own, like the creation
#: of a context or page that a stalled Chromium never answers.
NEVER = "() => new Promise(() => {})"


@pytest.fixture
def own(chromium):
    """A Chromium of this test's own: killing it leaves the session's (and its pages) alone."""
    mine = shared.Chromium(chromium._playwright)
    yield mine
    mine.close()


def test_a_step_chromium_never_answers_is_cut_short_and_chromium_starts_again(own, chromium, monkeypatch):
    monkeypatch.setattr(shared, "STALL_SECONDS", 2)
    session_page = chromium.browser.new_page()
    page = own.browser.new_page()
    started = time.monotonic()
    with pytest.raises(shared.ChromiumStalled, match="no answer from Chromium in 2 s"):
        own.guarded(lambda: page.evaluate(NEVER))
    assert time.monotonic() - started < 30
    assert not own.browser.is_connected()

    own.restart()
    fresh = own.guarded(own.browser.new_page)
    assert fresh.evaluate("() => 6 * 7") == 42
    fresh.close()
    assert session_page.evaluate("() => 1 + 1") == 2  # the session's Chromium was not touched
    session_page.close()


def test_the_page_fixture_starts_a_new_chromium_when_the_first_page_stalls(own, monkeypatch):
    monkeypatch.setattr(shared, "STALL_SECONDS", 2)
    tries, notes = [], []

    def make(browser):
        tries.append(browser)
        pg = browser.new_page()
        if len(tries) == 1:
            pg.evaluate(NEVER)  # the first Chromium never answers
        return pg

    pg = shared.started_page(own, make, notes.append)
    assert len(tries) == 2 and tries[0] is not tries[1] and not tries[0].is_connected()
    assert notes == ["new context and page: no answer from Chromium in 2 s"]
    assert pg.evaluate("() => 'answered'") == "answered"


def test_a_step_that_answers_in_time_is_left_alone(chromium):
    page = chromium.guarded(chromium.browser.new_page)
    assert chromium.guarded(lambda: page.evaluate("() => 'ok'")) == "ok"
    page.close()
    assert chromium.browser.is_connected()
