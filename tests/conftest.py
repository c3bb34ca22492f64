"""Fixtures shared by the whole suite: people, API clients, a real Celery worker,
and real Chromium driven by Playwright."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from annotation.enums import Role

CHROMIUM = os.environ.get("PARAEVAL_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
SCREENSHOT_DIR = Path(
    os.environ.get("PARAEVAL_SCREENSHOT_DIR", Path(__file__).resolve().parent.parent / "var" / "screenshots")
)


def chromium_available() -> bool:
    return Path(CHROMIUM).exists()


def pytest_report_header(config):
    if not chromium_available():
        return [
            f"!!! BROWSER TESTS SKIPPED: no Chromium at {CHROMIUM} (apt-get install chromium, or set PARAEVAL_CHROMIUM) !!!"
        ]
    return [f"browser tests: Chromium at {CHROMIUM}"]


def pytest_addoption(parser):
    parser.addoption(
        "--backend-pass",
        action="store_true",
        help="a second pass on other backends (PostgreSQL, Redis, RabbitMQ): leave out the tests of "
        "metrics/core that touch no database. metrics.core is pure Python by an import contract "
        "(.importlinter), so their outcome cannot depend on DATABASE_URL or CELERY_BROKER_URL and the "
        "first pass ran them; those marked `extras` (they need an optional extra that the first pass "
        "lacked) still run.",
    )


#: The fixtures through which a test reaches the database or a server on it.
DB_FIXTURES = frozenset({"db", "transactional_db", "live_server", "client", "admin_client", "django_user_model"})


def _pure_core_test(item) -> bool:
    """A test of metrics/core that reaches no database and needs no optional extra."""
    path = Path(str(item.fspath)).resolve()
    core = Path(__file__).resolve().parent / "metrics" / "core"
    return (
        core in path.parents
        and item.get_closest_marker("django_db") is None
        and item.get_closest_marker("extras") is None
        and not DB_FIXTURES & set(item.fixturenames)
    )


def pytest_collection_modifyitems(config, items):
    if config.getoption("--backend-pass"):
        kept = [item for item in items if not _pure_core_test(item)]
        config.hook.pytest_deselected(items=[item for item in items if _pure_core_test(item)])
        items[:] = kept
    if chromium_available():
        return
    skip = pytest.mark.skip(reason=f"no Chromium at {CHROMIUM}")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter):
    if not chromium_available():
        terminalreporter.write_line(
            f"!!! Browser tests were SKIPPED: no Chromium at {CHROMIUM}. Install Debian's chromium to run them. !!!",
            red=True,
            bold=True,
        )


# --- people -----------------------------------------------------------------


@pytest.fixture
def make_user(db):
    from django.contrib.auth.models import User

    def make(username: str, *, password: str = "pw", researcher: bool = False) -> User:
        user = User.objects.create_user(username=username, password=password)
        if researcher:
            from annotation.services.studies import researcher_grant

            researcher_grant(user=user)
        return user

    return make


@pytest.fixture
def researcher(make_user):
    return make_user("rita", researcher=True)


@pytest.fixture
def study(researcher):
    """A study owned by ``researcher`` with 5 originals × 2 systems."""
    from tests.factories import study_with_data

    return study_with_data(owner=researcher, name="Fixture study")


@pytest.fixture
def judge(make_user, study):
    from annotation.services.membership import study_member_add

    user = make_user("jude")
    study_member_add(study=study, user=user, role=Role.JUDGE)
    return user


@pytest.fixture
def annotator(make_user, study):
    from annotation.services.membership import study_member_add

    user = make_user("anna")
    study_member_add(study=study, user=user, role=Role.ANNOTATOR)
    return user


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


# --- a real Celery worker ------------------------------------------------------


def thread_worker(app, **kwargs):
    """``start_worker`` for a real Celery worker in a thread of the test process.

    Its solo pool runs Celery's plain loop (``synloop``: drain the connection, run,
    acknowledge) on every broker. On brokers with an asynchronous transport (Redis,
    RabbitMQ) Celery would otherwise pick its event-loop hub, which in a lone thread
    with no pool pipes to wake it sends acknowledgements and notices the stop only
    when a timer fires, about every 10 s on RabbitMQ. The tests that start real
    ``celery worker`` processes (tests/recovery, test_worker_kill, test_embedded_stack)
    keep the hub, as in production."""
    from celery.contrib.testing.worker import TestWorkController, start_worker

    class PlainLoopWorkController(TestWorkController):
        __test__ = False

        def should_use_eventloop(self):
            return False

    kwargs = {"perform_ping_check": False, "shutdown_timeout": 20, "loglevel": "WARNING", **kwargs}
    return start_worker(app, WorkController=PlainLoopWorkController, **kwargs)


@pytest.fixture
def celery_worker(transactional_db):
    """A real Celery worker consuming from the configured broker in a thread."""
    from config.celery import app

    with thread_worker(app) as worker:
        yield worker


# --- real Chromium ---------------------------------------------------------------


@pytest.fixture(scope="session")
def browser():
    if not chromium_available():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, live_server):
    """A fresh browser context (no cookies) whose relative URLs go to the live server."""
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.js_errors = errors
    csp = watch_console(pg)
    yield pg
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
    assert not csp, f"Content-Security-Policy errors in the console: {csp}"


def watch_console(page) -> list[str]:
    """Collect the console's Content-Security-Policy violations on ``page`` (every page it visits).

    The returned list fills as the page runs; tests (and the ``page`` fixture, at teardown)
    assert it is empty: a violation means something on the page did not work (a blocked
    style, script or handler) even when no assertion noticed.
    """
    found: list[str] = []

    def on_console(msg):
        if msg.type == "error" and "Content Security Policy" in msg.text:
            found.append(f"{page.url}: {msg.text}")

    page.on("console", on_console)
    return found


#: "nan" as a word of its own: not inside "nanosecond", "finance" or a random token (a page's
#: CSRF token, 64 letters and digits, held "nan" now and then and failed checks by substring).
NAN_WORD = re.compile(r"(?<![A-Za-z0-9_])nan(?![A-Za-z0-9_])", re.IGNORECASE)


def shows_nan(text: str) -> bool:
    """Whether ``text`` (a page, a JSON answer, a CSV) shows a NaN where a value should be."""
    return NAN_WORD.search(text) is not None


def browser_login(page, username: str, password: str = "pw") -> None:
    """Log in through the real login form."""
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state()


def enter_on_autofocus(page) -> None:
    """Press Enter once the page's autofocused button has the focus.

    A browser applies ``autofocus`` a moment after the page is shown; a key pressed before goes to the body and
    does nothing, so a test that presses Enter as soon as a heading is visible is a race.
    """
    from playwright.sync_api import expect

    expect(page.locator("[autofocus]")).to_be_focused()
    page.keyboard.press("Enter")


def screenshot(page, name: str, *, full_page: bool = True) -> Path:
    """Save a screenshot for the README tour (var/screenshots/NAME.png)."""
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOT_DIR / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
