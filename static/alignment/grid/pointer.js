// The pointer: hover, tap, click and drag on the grid, with auto-scroll past its edges.
//
// Pointer Events serve the mouse, a pen and a finger alike:
//  - mouse: a click toggles a cell, a drag paints a block at once (as before);
//  - touch and pen: a tap toggles a cell and a swipe scrolls the grid as usual; a
//    touch held still for LONG_PRESS ms starts painting, and the drag that follows
//    paints a block (a touchmove listener then stops the browser from scrolling);
//  - the "Paint blocks" toggle (touch screens) makes every touch drag paint at once;
//    the grid then has touch-action: none, so the page scrolls outside the grid.
// While a drag is near an edge of the grid's visible area, or beyond it, the grid
// (or the window, when the grid is cut off by the window) scrolls.
//
// g is the grid's shared context (see grid.js): table, scroller, state, cells, n1, n2,
// rowHeads, colHeads, readonly, kindPlural, keyClickUntil, cellOf(el), idxOf(b),
// setFocus(idx, move), highlight(i, j), announce(text), commit(changes, message),
// toggle(idx, kind). Adds g.cancelGesture() → whether a drag or a pending press was cancelled.

import { makeAutoScroll } from "./autoscroll.js";
import { msg } from "./messages.js";
import { NONE, POSSIBLE, SURE } from "./model.js";

var LONG_PRESS = 350, SLOP = 10;

export function wirePointer(g) {
  var table = g.table, scroller = g.scroller, state = g.state, cells = g.cells, n1 = g.n1, n2 = g.n2;
  var readonly = g.readonly, cellOf = g.cellOf;

  table.addEventListener("pointerover", function (e) {
    if (drag) return;
    var b = cellOf(e.target);
    if (b) return g.highlight(+b.dataset.i, +b.dataset.j);
    var th = e.target.closest("th");
    if (th && th.dataset.i !== undefined) g.highlight(+th.dataset.i, -1);
    else if (th && th.dataset.j !== undefined) g.highlight(-1, +th.dataset.j);
  });

  var mode = SURE;
  document.querySelectorAll('input[name="link-mode"]').forEach(function (r) {
    r.addEventListener("change", function () { if (r.checked) mode = r.value === "possible" ? POSSIBLE : SURE; });
  });

  var paintMode = false;
  var paintBtn = document.getElementById("paint-button");
  if (paintBtn) paintBtn.addEventListener("click", function () {
    paintMode = !paintMode;
    paintBtn.setAttribute("aria-pressed", paintMode ? "true" : "false");
    table.classList.toggle("paint-mode", paintMode);
    g.announce(paintMode ? msg("msgPaintOn", "Paint blocks on: a drag on the grid paints")
      : msg("msgPaintOff", "Paint blocks off: a swipe scrolls the grid"));
  });

  var drag = null, pending = null, previewed = [];
  function clearPreview() {
    previewed.forEach(function (idx) { cells[idx].classList.remove("pv", "pv-erase"); });
    previewed = [];
  }
  function showPreview() {
    clearPreview();
    var cls = drag.erase ? "pv-erase" : "pv";
    var ia = Math.min(drag.i0, drag.i1), ib = Math.max(drag.i0, drag.i1);
    var ja = Math.min(drag.j0, drag.j1), jb = Math.max(drag.j0, drag.j1);
    for (var i = ia; i <= ib; i++) for (var j = ja; j <= jb; j++) {
      cells[i * n2 + j].classList.add(cls);
      previewed.push(i * n2 + j);
    }
  }
  function startDrag(p) {
    drag = { id: p.id, type: p.type, i0: p.i, j0: p.j, i1: p.i, j1: p.j, kind: p.kind, erase: p.erase, x: p.x, y: p.y };
    table.classList.add("painting");
    showPreview();
    autoScroll.start();
  }
  function endDrag() {
    drag = null;
    table.classList.remove("painting");
    clearPreview();
    autoScroll.stop();
  }
  function cancelPending() {
    if (pending) window.clearTimeout(pending.timer);
    pending = null;
  }

  table.addEventListener("pointerdown", function (e) {
    if (readonly || e.button !== 0 || !e.isPrimary) return;
    var b = cellOf(e.target);
    if (!b) return;
    if (drag) endDrag(); // a drag whose release never reached us
    e.preventDefault(); // no text selection; focus is moved by hand below
    var i = +b.dataset.i, j = +b.dataset.j, idx = i * n2 + j;
    g.setFocus(idx, false);
    b.focus({ preventScroll: true });
    var kind = e.shiftKey || e.altKey || mode === POSSIBLE ? POSSIBLE : SURE;
    var p = { id: e.pointerId, type: e.pointerType, i: i, j: j, kind: kind, erase: state[idx] === kind, x: e.clientX, y: e.clientY };
    cancelPending();
    if (e.pointerType === "mouse" || paintMode) {
      // Moves and the release reach us even outside the window.
      try { b.setPointerCapture(e.pointerId); } catch (err) { /* not capturable: fine */ }
      return startDrag(p);
    }
    pending = p;
    p.timer = window.setTimeout(function () { if (pending === p) { pending = null; startDrag(p); } }, LONG_PRESS);
  });
  document.addEventListener("pointermove", function (e) {
    if (pending && e.pointerId === pending.id) {
      // The finger moved before the long press: it is a swipe, and the browser scrolls.
      if (Math.abs(e.clientX - pending.x) > SLOP || Math.abs(e.clientY - pending.y) > SLOP) cancelPending();
      return;
    }
    if (!drag || e.pointerId !== drag.id) return;
    drag.x = e.clientX;
    drag.y = e.clientY;
    track();
  });
  document.addEventListener("pointerup", function (e) {
    if (pending && e.pointerId === pending.id) {
      var p = pending;
      cancelPending();
      return g.toggle(p.i * n2 + p.j, p.kind); // a tap
    }
    if (!drag || e.pointerId !== drag.id) return;
    var d = drag;
    endDrag();
    if (d.i0 === d.i1 && d.j0 === d.j1) return g.toggle(d.i0 * n2 + d.j0, d.kind);
    var changes = [];
    var ia = Math.min(d.i0, d.i1), ib = Math.max(d.i0, d.i1), ja = Math.min(d.j0, d.j1), jb = Math.max(d.j0, d.j1);
    for (var i = ia; i <= ib; i++) for (var j = ja; j <= jb; j++) changes.push([i * n2 + j, d.erase ? NONE : d.kind]);
    var size = (ib - ia + 1) + " × " + (jb - ja + 1);
    g.commit(changes, d.erase ? msg("msgRemovedBlock", "Removed the links of a {size} block", { size: size })
      : msg("msgLinkedBlock", "Linked a {size} block ({kind})", { size: size, kind: g.kindPlural[d.kind] }));
  });
  // A swipe that the browser turns into a scroll cancels the pointer: nothing is painted.
  document.addEventListener("pointercancel", function (e) {
    if (pending && e.pointerId === pending.id) cancelPending();
    if (drag && e.pointerId === drag.id) endDrag();
  });
  // Once a touch paints, its moves must not scroll the page (this listener has to be
  // registered up front and not passive, or the browser would not wait for it).
  table.addEventListener("touchmove", function (e) {
    if (drag && drag.type === "touch" && e.cancelable) e.preventDefault();
  }, { passive: false });
  // A long press would otherwise open the context menu on some phones.
  table.addEventListener("contextmenu", function (e) {
    if (drag || pending || (e.pointerType && e.pointerType !== "mouse")) e.preventDefault();
  });

  // The cell under a point; a point outside the grid's visible cells is first pulled
  // onto its nearest edge, so a drag past the edge reaches the outermost visible cell.
  function visibleArea() {
    var r = scroller.getBoundingClientRect();
    var top = r.top + scroller.clientTop, left = r.left + scroller.clientLeft;
    var vw = document.documentElement.clientWidth, vh = document.documentElement.clientHeight;
    var area = {
      top: top + (n2 ? g.colHeads[0].offsetHeight : 0), left: left + (n1 ? g.rowHeads[0].offsetWidth : 0),
      bottom: top + scroller.clientHeight, right: left + scroller.clientWidth, vw: vw, vh: vh,
    };
    area.vTop = Math.max(area.top, 0); area.vBottom = Math.min(area.bottom, vh);
    area.vLeft = Math.max(area.left, 0); area.vRight = Math.min(area.right, vw);
    return area;
  }
  function clamp(v, lo, hi) { return v < lo ? lo : v > hi ? hi : v; }
  function track() {
    var b;
    if (scroller) {
      var a = visibleArea();
      if (a.vBottom - a.vTop < 2 || a.vRight - a.vLeft < 2) return;
      var x = clamp(drag.x, a.vLeft + 1, a.vRight - 2), y = clamp(drag.y, a.vTop + 1, a.vBottom - 2);
      var el = document.elementFromPoint(x, y);
      b = cellOf(el) || (el && el.tagName === "TD" && table.contains(el) ? el.querySelector("button.cell") : null);
    } else {
      b = cellOf(document.elementFromPoint(drag.x, drag.y));
    }
    if (!b) return;
    var i = +b.dataset.i, j = +b.dataset.j;
    if (i === drag.i1 && j === drag.j1) return;
    drag.i1 = i;
    drag.j1 = j;
    showPreview();
    g.highlight(i, j);
  }

  // ---------------------------------------------------------------- auto-scroll while dragging
  var autoScroll = makeAutoScroll(scroller, {
    pointer: function () { return drag; }, area: visibleArea, track: track,
  });

  // Screen readers activate buttons with a synthetic click (detail 0) and no pointer
  // events; our own keys are handled on keydown and suppress their click (g.keyClickUntil).
  table.addEventListener("click", function (e) {
    var b = cellOf(e.target);
    if (!b || readonly || e.detail !== 0 || Date.now() < g.keyClickUntil) return;
    g.toggle(g.idxOf(b), mode);
  });

  // Escape: drop a drag or a pending long press.
  g.cancelGesture = function () {
    if (!drag && !pending) return false;
    cancelPending();
    if (drag) endDrag();
    return true;
  };
}
