"""Fixtures shared by the whole suite: people, API clients, a real Celery worker,
and real Chromium driven by Playwright."""

from __future__ import annotations

import functools
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
        help="a second pass on other backends (PostgreSQL, Redis, RabbitMQ): leave out (1) the tests of "
        "metrics/core that touch no database (metrics.core is pure Python by an import contract, "
        ".importlinter, so their outcome cannot depend on DATABASE_URL or CELERY_BROKER_URL), and (2) "
        "the browser tests but those of BROWSER_ON_EVERY_BACKEND (what Chromium does with a page does "
        "not depend on the database; the server side of every page and API is tested on this backend by "
        "the tests that remain, and .ci/production.sh opens every page as every role on PostgreSQL), and (3) "
        "the tests marked `embedded_default`, whose processes run with DATABASE_URL and CELERY_BROKER_URL "
        "removed: the same test on every backend. The "
        "first pass ran them all; those marked `extras` (they need an optional extra that the first pass "
        "lacked) still run.",
    )


#: The fixtures through which a test reaches the database or a server on it.
DB_FIXTURES = frozenset({"db", "transactional_db", "live_server", "client", "admin_client", "django_user_model"})


#: What in a test module's source says it may start a process or reach a broker, which its
#: fixtures do not show: such a test may depend on DATABASE_URL or CELERY_BROKER_URL.
PROCESS_WORDS = ("subprocess", "Popen", "multiprocessing", "celery", "kombu", "CELERY_BROKER_URL", "DATABASE_URL")


@functools.cache
def _module_may_start_processes(path: str) -> bool:
    source = Path(path).read_text(encoding="utf-8")
    return any(word in source for word in PROCESS_WORDS)


def _reaches_no_backend(item) -> bool:
    """A test that cannot reach a database (pytest-django refuses a connection to a test without
    the ``django_db`` mark or a database fixture, and this one has neither), reaches no broker and
    starts no process (its module names none of :data:`PROCESS_WORDS`), and needs no optional extra:
    its outcome cannot depend on DATABASE_URL or CELERY_BROKER_URL (metrics.core's tests, pure
    Python by an import contract, are most of them; the parsers, the import contracts, the docs'
    page checks and the plots are the rest)."""
    return (
        item.get_closest_marker("django_db") is None
        and item.get_closest_marker("extras") is None
        and not DB_FIXTURES & set(item.fixturenames)
        and not _module_may_start_processes(str(item.fspath))
    )


#: The browser tests that the backend pass keeps: a judge's whole flow and a field study through
#: the join link on the live server, so the pages' writes reach the other database through a real
#: browser too. The other protocols' pages write through the same services, which the tests that
#: remain run on this backend (their pages' POSTs and APIs included), and .ci/production.sh opens
#: every page of every protocol as every role on PostgreSQL.
BROWSER_ON_EVERY_BACKEND = (
    "tests/e2e/test_judging.py",
    "tests/e2e/test_field_study.py",
)


def _first_pass_only(item) -> bool:
    """Whether ``--backend-pass`` leaves ``item`` out (see the option's help)."""
    if item.get_closest_marker("extras") is not None:
        return False
    if "browser" in item.keywords:
        return not item.nodeid.startswith(BROWSER_ON_EVERY_BACKEND)
    if item.get_closest_marker("embedded_default") is not None:  # the same test whatever the backend
        return True
    return _reaches_no_backend(item)


def _long_first(item) -> int:
    """The long tests (marked ``slow``, or driving Chromium) run first: with two workers that
    steal each other's work, the run then ends on short tests instead of one worker idling while
    the other finishes a long one (CI's time, issue 39)."""
    return 0 if item.get_closest_marker("slow") is not None or "browser" in item.keywords else 1


def pytest_collection_modifyitems(config, items):
    if config.getoption("--backend-pass"):
        left_out = [item for item in items if _first_pass_only(item)]
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if not _first_pass_only(item)]
    items.sort(key=_long_first)  # stable: collection order within each group
    if chromium_available():
        return
    skip = pytest.mark.skip(reason=f"no Chromium at {CHROMIUM}")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter):
    reports = [r for key in ("", "passed", "failed", "error") for r in terminalreporter.stats.get(key, [])]
    restarts = sorted(
        {f"{r.nodeid}: {v}" for r in reports for k, v in getattr(r, "user_properties", ()) if k == RESTART}
    )
    if restarts:
        terminalreporter.section("Chromium restarted (it stopped answering; the step was tried again)")
        for line in restarts:
            terminalreporter.write_line(line)
    # A hung test's stack is long and printed far above; CI shows the end of the log, so the
    # frames where each timeout struck are repeated here, last.
    for r in reports:
        text = getattr(r, "longreprtext", "") or ""
        if r.failed and "Timeout (>" in text:
            terminalreporter.section(f"timed out in {r.when}: {r.nodeid}")
            frames = [line for line in text.splitlines() if re.match(r"\S+\.py:\d+: |>\s", line)]
            for line in frames[-30:]:
                terminalreporter.write_line(line[:200])
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


#: The longest a test's worker waits for a message before it looks whether it should stop.
DRAIN_SECONDS = 0.2


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

        def on_consumer_ready(self, consumer):
            # The plain loop waits up to 2 s for a message before it looks whether it should
            # stop (celery.worker.loops.synloop: drain_events(timeout=2.0)): every test's
            # worker took 2-4 s to stop. A wait of at most 0.2 s stops it at once.
            connection = consumer.connection
            drain = connection.drain_events
            connection.drain_events = lambda timeout=None, **kw: drain(
                timeout=DRAIN_SECONDS if timeout is None else min(timeout, DRAIN_SECONDS), **kw
            )
            super().on_consumer_ready(consumer)

    kwargs = {"perform_ping_check": False, "shutdown_timeout": 20, "loglevel": "WARNING", **kwargs}
    return start_worker(app, WorkController=PlainLoopWorkController, **kwargs)


@pytest.fixture
def celery_worker(transactional_db):
    """A real Celery worker consuming from the configured broker in a thread."""
    from config.celery import app

    with thread_worker(app) as worker:
        yield worker


# --- real Chromium ---------------------------------------------------------------


#: user_properties key under which a test records that Chromium was restarted for it.
RESTART = "chromium_restarted"
#: How long creating or closing a context or page may take before Chromium counts as stalled
#: (a second or two normally, on a loaded machine too).
STALL_SECONDS = 60


class Chromium:
    """The session's Chromium, started again when it stops answering.

    Now and then a long-lived Chromium never answers the creation of a context or page
    (microsoft/playwright-python#2987, open; microsoft/playwright#3939 and #4761): the test
    then stalled until pytest-timeout (600 s) and failed in setup, once in each of two CI
    runs. :meth:`guarded` runs such a step under a watchdog: when Chromium has not answered
    in ``STALL_SECONDS``, the watchdog kills this process's Chromium, so that the pending
    call fails at once, and :meth:`restart` starts a new one. Only steps that hold no test
    state are retried (a fresh test's context and page); every restart is recorded on the
    test and listed at the end of the run, so a browser that degrades is seen, not hidden.
    """

    def __init__(self, playwright):
        self._playwright = playwright
        self._pids: set[int] = set()
        self.browser = self._launch()

    @staticmethod
    def _chromium_pids() -> set[int]:
        import psutil

        found = set()
        for proc in psutil.Process().children(recursive=True):
            try:
                if "chrom" in proc.name():
                    found.add(proc.pid)
            except psutil.NoSuchProcess:
                pass
        return found

    def _launch(self):
        before = self._chromium_pids()
        browser = self._playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        self._pids = self._chromium_pids() - before  # this browser's processes, not another Chromium's
        return browser

    def _kill(self) -> None:
        """Kill this browser's processes and everything they started."""
        import psutil

        for pid in self._pids:
            try:
                main = psutil.Process(pid)
                for proc in [*main.children(recursive=True), main]:
                    proc.kill()
            except psutil.NoSuchProcess:
                pass

    def guarded(self, step):
        """``step()``, or :class:`ChromiumStalled` when Chromium does not answer in time."""
        import threading

        fired = threading.Event()

        def stall():
            fired.set()
            self._kill()

        timer = threading.Timer(STALL_SECONDS, stall)
        timer.start()
        try:
            return step()
        except Exception as exc:
            if fired.is_set():
                raise ChromiumStalled(f"no answer from Chromium in {STALL_SECONDS} s") from exc
            raise
        finally:
            timer.cancel()

    def restart(self) -> None:
        self._kill()
        try:
            self.browser.close()
        except Exception:  # noqa: BLE001 - it is already gone; only the new one matters
            pass
        self.browser = self._launch()

    def close(self) -> None:
        self.browser.close()


class ChromiumStalled(Exception):
    pass


@pytest.fixture(scope="session")
def chromium():
    if not chromium_available():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        session = Chromium(p)
        yield session
        session.close()


@pytest.fixture
def browser(chromium):
    """The session's Chromium (the one running now: see :class:`Chromium`)."""
    return chromium.browser


def _fresh_page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    return context.new_page()


def started_page(chromium: Chromium, make, note):
    """``make(browser)``, under the watchdog; once more in a new Chromium if it stalled (``note(why)`` is told)."""
    try:
        return chromium.guarded(lambda: make(chromium.browser))
    except ChromiumStalled as exc:
        note(f"new context and page: {exc}")
        chromium.restart()
        return chromium.guarded(lambda: make(chromium.browser))


@pytest.fixture
def page(chromium, live_server, request):
    """A fresh browser context (no cookies) whose relative URLs go to the live server."""
    pg = started_page(
        chromium,
        lambda browser: _fresh_page(browser, live_server),
        lambda why: request.node.user_properties.append((RESTART, why)),
    )
    context = pg.context
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.js_errors = errors
    csp = watch_console(pg)
    yield pg
    try:
        chromium.guarded(context.close)
    except ChromiumStalled as exc:
        request.node.user_properties.append((RESTART, f"closing the context: {exc}"))
        chromium.restart()
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


def judge_keys_ready(page) -> None:
    """Wait until the judge page's keys work (judge_form.js has put its listener in place and
    marked ``<html data-keys-ready>``): a module script runs a moment after the page is shown,
    so a key pressed as soon as a heading is visible may go unheard."""
    from playwright.sync_api import expect

    expect(page.locator("html[data-keys-ready]")).to_be_attached()


def screenshot(page, name: str, *, full_page: bool = True) -> Path:
    """Save a screenshot for the README tour (var/screenshots/NAME.png)."""
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOT_DIR / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
