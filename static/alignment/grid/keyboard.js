// The keyboard: arrows, Home, End, PageUp and PageDown move the focus over the cells;
// Space toggles a sure link, P a possible one; Enter submits; Escape drops a drag;
// Ctrl+Z undoes, Ctrl+Shift+Z or Ctrl+Y redoes (anywhere on the page but in a text field).
//
// g is the grid's shared context (see grid.js): table, cells, n1, n2, readonly, cellOf(el),
// setFocus(idx, move), toggle(idx, kind), submit(), undo(), redo(), cancelGesture().
// Sets g.keyClickUntil: until then, a synthetic click on a cell is our own key's, not a
// screen reader's (pointer.js ignores it).

import { POSSIBLE, SURE } from "./model.js";

export function wireKeyboard(g) {
  var table = g.table, cells = g.cells, n1 = g.n1, n2 = g.n2, readonly = g.readonly;

  table.addEventListener("keydown", function (e) {
    var b = g.cellOf(e.target);
    if (!b) return;
    var i = +b.dataset.i, j = +b.dataset.j, to = -1;
    var plainKey = !e.ctrlKey && !e.metaKey && !e.altKey;
    switch (e.key) {
      case "ArrowUp": to = Math.max(0, i - 1) * n2 + j; break;
      case "ArrowDown": to = Math.min(n1 - 1, i + 1) * n2 + j; break;
      case "ArrowLeft": to = i * n2 + Math.max(0, j - 1); break;
      case "ArrowRight": to = i * n2 + Math.min(n2 - 1, j + 1); break;
      case "Home": to = e.ctrlKey ? 0 : i * n2; break;
      case "End": to = e.ctrlKey ? cells.length - 1 : i * n2 + n2 - 1; break;
      case "PageUp": to = Math.max(0, i - 10) * n2 + j; break;
      case "PageDown": to = Math.min(n1 - 1, i + 10) * n2 + j; break;
      case " ":
      case "Spacebar":
        if (!plainKey) return;
        e.preventDefault();
        g.keyClickUntil = Date.now() + 400;
        if (!readonly) g.toggle(i * n2 + j, SURE);
        return;
      case "p":
      case "P":
        if (!plainKey) return;
        e.preventDefault();
        if (!readonly) g.toggle(i * n2 + j, POSSIBLE);
        return;
      case "Enter":
        e.preventDefault();
        g.keyClickUntil = Date.now() + 400;
        if (!readonly) g.submit();
        return;
      case "Escape":
        if (g.cancelGesture()) e.preventDefault();
        return;
      default:
        return;
    }
    e.preventDefault();
    g.setFocus(to, true);
  });
  table.addEventListener("keyup", function (e) {
    if (e.key === " " && g.cellOf(e.target)) e.preventDefault();
  });

  document.addEventListener("keydown", function (e) {
    if (readonly || !(e.ctrlKey || e.metaKey) || e.altKey) return;
    var tag = e.target && e.target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    var key = e.key.toLowerCase();
    if (key === "z" && !e.shiftKey) { e.preventDefault(); g.undo(); }
    else if ((key === "z" && e.shiftKey) || key === "y") { e.preventDefault(); g.redo(); }
  });
}
