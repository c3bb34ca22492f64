"""In real Chromium: the alignment grid with a finger and with a mouse past its edge.

Touch is driven through the Chrome DevTools Protocol (``Input.dispatchTouchEvent``),
which goes through the browser's own input pipeline like a real touch screen: the
browser decides whether a swipe scrolls, and fires pointer and touch events. The
drafts the page saves are read back from the database.
"""

import pytest
from playwright.sync_api import expect

from annotation.alignment.models import AlignmentAssignment
from annotation.alignment.services.assignments import assignments_create
from annotation.alignment.services.pairs import pairs_import_file
from tests.conftest import browser_login, screenshot, watch_console

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def big_task(study, n1: int, n2: int) -> AlignmentAssignment:
    words1 = " ".join(f"a{k}" for k in range(n1))
    words2 = " ".join(f"b{k}" for k in range(n2))
    pairs_import_file(
        study=study, data=f"pair_id,sentence1,sentence2\nbig,{words1},{words2}\n".encode(), filename="p.csv"
    )
    assignments_create(study=study)
    return AlignmentAssignment.objects.get(pair__study=study)


def cell(page, i: int, j: int):
    return page.locator(f'#align-grid button.cell[data-i="{i}"][data-j="{j}"]')


def centre(locator) -> tuple[float, float]:
    box = locator.bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def painted(page) -> dict[str, set[tuple[int, int]]]:
    """The links the page shows, read from the cells' accessible names."""
    rows = page.evaluate("""() => Array.from(document.querySelectorAll('#align-grid button.cell'))
        .map(b => [+b.dataset.i, +b.dataset.j, b.getAttribute('aria-label')])""")
    out = {"sure": set(), "possible": set()}
    for i, j, label in rows:
        if label.endswith("sure link"):
            out["sure"].add((i, j))
        elif label.endswith("possible link"):
            out["possible"].add((i, j))
    return out


def stored(task) -> dict[str, set[tuple[int, int]]]:
    task.refresh_from_db()
    return {"sure": {tuple(x) for x in task.sure}, "possible": {tuple(x) for x in task.possible}}


def block(i0, i1, j0, j1) -> set[tuple[int, int]]:
    return {(i, j) for i in range(i0, i1 + 1) for j in range(j0, j1 + 1)}


class Finger:
    """One finger on the touch screen, through CDP."""

    def __init__(self, page):
        self.cdp = page.context.new_cdp_session(page)
        self.x = self.y = 0.0

    def _send(self, kind, points):
        self.cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

    def down(self, x, y):
        self.x, self.y = x, y
        self._send("touchStart", [{"x": x, "y": y, "id": 1}])

    def move(self, x, y, steps=8):
        x0, y0 = self.x, self.y
        for k in range(1, steps + 1):
            self.x, self.y = x0 + (x - x0) * k / steps, y0 + (y - y0) * k / steps
            self._send("touchMove", [{"x": self.x, "y": self.y, "id": 1}])

    def up(self):
        self._send("touchEnd", [])


SETTLED = """() => {
    // True once the grid and the window have not scrolled for 10 polls in a row (a fling has ended).
    const s = document.getElementById('grid-scroll');
    const now = [s.scrollTop, s.scrollLeft, window.scrollX, window.scrollY].join();
    window.__settleStill = now === window.__settleLast ? (window.__settleStill || 0) + 1 : 0;
    window.__settleLast = now;
    return window.__settleStill >= 10;
}"""


def settle(page):
    # Polled by Playwright, with a timeout: a promise awaited by page.evaluate has none, so a
    # requestAnimationFrame loop that stops (a throttled headless page) would hang the run for good.
    page.evaluate("() => { window.__settleStill = 0; window.__settleLast = null; }")
    page.wait_for_function(SETTLED, polling=20, timeout=30_000)


def grid_scroll(page) -> tuple[int, int]:
    return tuple(
        page.evaluate(
            "(() => { const s = document.getElementById('grid-scroll'); return [s.scrollTop, s.scrollLeft]; })()"
        )
    )


def show_grid(page):
    """Scroll the window so that the grid's box starts at the top of the window."""
    page.evaluate(
        "window.scrollTo(0, document.getElementById('grid-scroll').getBoundingClientRect().top + window.scrollY - 10)"
    )


@pytest.fixture
def phone(browser, live_server):
    """A phone-sized touch-screen browser context (375 px wide)."""
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": 375, "height": 740}, has_touch=True, is_mobile=True
    )
    context.set_default_timeout(15_000)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    csp = watch_console(pg)
    yield pg
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
    assert not csp, f"Content-Security-Policy errors in the console: {csp}"


def test_on_a_phone_a_tap_toggles_a_swipe_scrolls_and_a_long_press_drag_paints(phone, study, annotator):
    page = phone
    task = big_task(study, 30, 30)
    browser_login(page, "anna")
    page.goto(f"/alignment/tasks/{task.pk}/")
    status = page.locator("#save-status")
    # The page fits a phone: nothing sticks out sideways, the grid scrolls inside its box.
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    assert page.evaluate(
        "(() => { const s = document.getElementById('grid-scroll'); "
        "return s.scrollWidth > s.clientWidth && s.scrollHeight > s.clientHeight; })()"
    )
    expect(page.locator("#paint-button")).to_be_visible()
    page.evaluate(
        "window.scrollTo(0, document.querySelector('.grid-toolbar').getBoundingClientRect().top + window.scrollY - 8)"
    )
    screenshot(page, "annotator-grid-phone", full_page=False)  # a full-page shot drops the touch emulation
    show_grid(page)
    finger = Finger(page)

    # A tap toggles one cell.
    page.touchscreen.tap(*centre(cell(page, 1, 1)))
    expect(cell(page, 1, 1)).to_have_class("cell s")
    expect(status).to_have_text("Saved")
    assert stored(task) == {"sure": {(1, 1)}, "possible": set()}

    # A swipe (no hold) scrolls the grid and paints nothing.
    x, y = centre(cell(page, 6, 6))
    finger.down(x, y)
    finger.move(x - 120, y - 150, steps=10)
    finger.up()
    settle(page)
    top, left = grid_scroll(page)
    assert top > 0 and left > 0
    expect(page.locator("#align-grid button.pv, #align-grid button.pv-erase")).to_have_count(0)
    assert painted(page) == {"sure": {(1, 1)}, "possible": set()}

    # Touch and hold, then drag: a block is painted, and the grid does not scroll meanwhile.
    page.evaluate("(() => { const s = document.getElementById('grid-scroll'); s.scrollTop = 0; s.scrollLeft = 0; })()")
    settle(page)
    assert grid_scroll(page) == (0, 0)
    start, end = cell(page, 3, 2), cell(page, 7, 5)
    x, y = centre(start)
    finger.down(x, y)
    expect(start).to_have_class("cell pv")  # the hold has turned into painting
    finger.move(*centre(end), steps=10)
    expect(end).to_have_class("cell pv")
    assert grid_scroll(page) == (0, 0)
    screenshot(page, "annotator-grid-touch-painting", full_page=False)
    finger.up()
    expect(cell(page, 7, 5)).to_have_class("cell s")
    expect(status).to_have_text("Saved")
    want = {"sure": {(1, 1)} | block(3, 7, 2, 5), "possible": set()}
    assert painted(page) == want
    assert stored(task) == want

    # Holding on a painted cell and dragging removes the block it covers.
    finger.down(*centre(cell(page, 7, 5)))
    expect(cell(page, 7, 5)).to_have_class("cell s pv-erase")
    finger.move(*centre(cell(page, 6, 4)), steps=4)
    finger.up()
    expect(status).to_have_text("Saved")
    want = {"sure": {(1, 1)} | block(3, 7, 2, 5) - block(6, 7, 4, 5), "possible": set()}
    assert painted(page) == want
    assert stored(task) == want

    # "Paint blocks" on: a drag paints at once, in the chosen link kind.
    page.get_by_label("a possible link").check()
    page.locator("#paint-button").click()
    expect(page.locator("#paint-button")).to_have_attribute("aria-pressed", "true")
    show_grid(page)
    finger.down(*centre(cell(page, 10, 0)))
    expect(cell(page, 10, 0)).to_have_class("cell pv")
    finger.move(*centre(cell(page, 11, 2)), steps=6)
    finger.up()
    expect(status).to_have_text("Saved")
    want["possible"] = block(10, 11, 0, 2)
    assert painted(page) == want
    assert stored(task) == want
    assert grid_scroll(page) == (0, 0)


def test_a_mouse_drag_past_the_edge_scrolls_the_grid_and_paints_the_cells_passed(page, study, annotator):
    task = big_task(study, 60, 60)
    browser_login(page, "anna")
    page.goto(f"/alignment/tasks/{task.pk}/")
    status = page.locator("#save-status")
    expect(page.locator("#paint-button")).to_be_hidden()  # only shown on touch screens
    page.locator("#grid-scroll").scroll_into_view_if_needed()
    box = page.locator("#grid-scroll").bounding_box()
    assert not page.locator('#align-grid button.cell[data-i="45"][data-j="45"]').evaluate(
        "b => { const r = b.getBoundingClientRect(), s = document.getElementById('grid-scroll').getBoundingClientRect();"
        " return r.top < s.bottom && r.left < s.right; }"
    ), "the far cell starts out of sight"

    # Press on (2, 1), then hold the mouse below and right of the grid until the grid has
    # scrolled far enough for the block to reach row 45 and column 45.
    page.mouse.move(*centre(cell(page, 2, 1)))
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] + 20, box["y"] + box["height"] + 20, steps=5)
    expect(cell(page, 45, 45)).to_have_class("cell pv", timeout=30_000)
    # Back inside the grid the scrolling stops; release on a cell now in view.
    page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + box["height"] * 0.6, steps=3)
    settle(page)
    end = page.evaluate("""(() => { const s = document.getElementById('grid-scroll').getBoundingClientRect();
        const b = document.elementFromPoint(s.left + s.width * 0.6, s.top + s.height * 0.6).closest('button.cell');
        return [+b.dataset.i, +b.dataset.j]; })()""")
    i1, j1 = end
    assert i1 > 30 and j1 > 30
    page.mouse.move(*centre(cell(page, i1, j1)), steps=2)
    page.mouse.up()
    expect(cell(page, i1, j1)).to_have_class("cell s")
    expect(status).to_have_text("Saved")
    want = {"sure": block(2, i1, 1, j1), "possible": set()}
    assert painted(page) == want
    assert stored(task) == want

    # Dragging back up past the top edge scrolls back and removes the links passed.
    page.mouse.move(*centre(cell(page, i1, j1)))
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] - 30, steps=4)
    expect(scroller_top := page.locator("#grid-scroll")).to_have_js_property("scrollTop", 0, timeout=30_000)
    expect(cell(page, 2, j1)).to_have_class("cell s pv-erase")
    page.mouse.up()
    expect(status).to_have_text("Saved")
    # The column under the pointer when released decides the block's other corner.
    got = painted(page)
    assert got["sure"] < want["sure"]
    removed = want["sure"] - got["sure"]
    rows = {i for i, _ in removed}
    assert rows == set(range(2, i1 + 1)), "the block removed reaches back to the top row"
    assert stored(task) == got
    assert scroller_top.evaluate("s => s.scrollTop") == 0


def test_dragging_near_the_bottom_of_the_window_scrolls_the_window_then_the_grid(page, study, annotator):
    task = big_task(study, 60, 12)
    page.set_viewport_size({"width": 1280, "height": 500})
    browser_login(page, "anna")
    page.goto(f"/alignment/tasks/{task.pk}/")
    page.evaluate("window.scrollTo(0, 0)")
    box = page.locator("#grid-scroll").bounding_box()
    assert box["y"] + box["height"] > 500, "the grid is cut off by the bottom of the window"
    start = cell(page, 0, 2)
    x, y = centre(start)
    assert y < 500 and page.evaluate("window.scrollY") == 0
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x, 495, steps=5)
    # First the window scrolls until the grid's bottom is in view, then the grid scrolls.
    page.wait_for_function(
        """() => {
        const s = document.getElementById('grid-scroll');
        return s.getBoundingClientRect().bottom <= innerHeight && s.scrollTop > 100; }""",
        timeout=30_000,
    )
    assert page.evaluate("window.scrollY") > 0
    page.mouse.move(x, 300, steps=3)
    settle(page)
    end = page.evaluate(
        """(x) => { const b = document.elementFromPoint(x, 300).closest('button.cell');
        return [+b.dataset.i, +b.dataset.j]; }""",
        x,
    )
    assert end[1] == 2 and end[0] > 5
    page.mouse.up()
    expect(page.locator("#save-status")).to_have_text("Saved")
    want = {"sure": block(0, end[0], 2, 2), "possible": set()}
    assert painted(page) == want
    assert stored(task) == want
