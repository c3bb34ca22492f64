// Keyboard access to what scrolls sideways (WCAG 2.1.1; axe's scrollable-region-focusable):
// a wide table or code block that overflows its box on this screen gets a tab stop, so that
// the arrow keys scroll it, and loses it again when the window is wide enough to show all of
// it (no needless tab stops at 1280 px). A table is named by its caption, a block by its
// table's caption or the heading of its section, as a group (a region would be a second
// landmark of the section's name). Loaded on every page (templates/base.html).
const SELECTOR = "table.data, pre, .table-scroll";

let names = 0;

function named(el) {
  if (el.tagName === "TABLE" || el.hasAttribute("aria-label") || el.hasAttribute("aria-labelledby")) return;
  const name = el.querySelector("caption") || el.closest("section, .card")?.querySelector("h1, h2, h3, h4");
  if (name) {
    if (!name.id) name.id = `scroll-name-${++names}`;
    el.setAttribute("aria-labelledby", name.id);
  }
  el.setAttribute("role", "group");
}

export function scrollStopsUpdate(root = document) {
  for (const el of root.querySelectorAll(SELECTOR)) {
    if (el.dataset.scrollStop === undefined && el.hasAttribute("tabindex")) continue; // the page set its own
    const scrolls = el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== "visible";
    if (scrolls && el.dataset.scrollStop === undefined) {
      el.tabIndex = 0;
      el.dataset.scrollStop = "";
      named(el);
    } else if (!scrolls && el.dataset.scrollStop !== undefined) {
      el.removeAttribute("tabindex");
      delete el.dataset.scrollStop;
    }
  }
}

scrollStopsUpdate();
new ResizeObserver(() => scrollStopsUpdate()).observe(document.body);
