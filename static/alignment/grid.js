// The word-alignment grid (ParaMetric's Figure 1, made clickable).
//
// Rows are the tokens of sentence 1, columns those of sentence 2; each cell is a
// <button> whose accessible name gives both words and the link. The page's data
// comes from a json_script block (the CSP forbids inline scripts). One listener
// per event type sits on the table (event delegation), so a 60 × 60 grid costs
// no more to wire than a 5 × 5 one; the state lives in one Uint8Array.
//
// An ES module (<script type="module">), with its parts beside it in grid/: the model
// without the DOM, building the table, auto-scroll, active time and saving. The imports
// are relative, so collectstatic's manifest storage rewrites them to the hashed names
// (config/storage.py). This entry stays above 400 lines on purpose: its handlers (pointer,
// keyboard, focus, undo) share the drag, the focus and the undo stacks in one closure,
// and splitting them further would only pass that state around.
import { buildTable } from "./grid/build.js";
import { makeAutoScroll } from "./grid/autoscroll.js";
import { msg } from "./grid/messages.js";
import { NONE, POSSIBLE, STATE_TEXT as STATE_TEXT_EN, SURE, labels, linkLists, load } from "./grid/model.js";
import { makeSaver } from "./grid/saving.js";
import { trackActiveTime } from "./grid/timing.js";

(function () {
  var dataEl = document.getElementById("grid-data");
  var table = document.getElementById("align-grid");
  if (!dataEl || !table) return;
  var data = JSON.parse(dataEl.textContent);
  // A link kind's name, and its plural, in the page's language (by NONE, SURE, POSSIBLE).
  var STATE_TEXT = [msg("msgNoLink", STATE_TEXT_EN[NONE]), msg("msgSureLink", STATE_TEXT_EN[SURE]),
    msg("msgPossibleLink", STATE_TEXT_EN[POSSIBLE])];
  var KIND_PLURAL = ["", msg("msgSureLinks", "sure links"), msg("msgPossibleLinks", "possible links")];
  var t1 = data.tokens1, t2 = data.tokens2, n1 = t1.length, n2 = t2.length;
  var readonly = !!data.readonly;
  var state = new Uint8Array(n1 * n2);
  load(state, data, n2);
  var lab1 = labels(t1), lab2 = labels(t2);

  // ---------------------------------------------------------------- build the table
  var built = buildTable(table, t1, t2, lab1, lab2, msg("msgCorner", "Rows: sentence 1; columns: sentence 2"));
  var cells = built.cells, rows = built.rows, rowHeads = built.rowHeads, cols = built.cols, colHeads = built.colHeads;
  for (var idx = 0; idx < cells.length; idx++) paint(idx);
  if (cells.length) cells[0].tabIndex = 0;
  if (readonly) table.classList.add("readonly");

  var scroller = document.getElementById("grid-scroll");
  function fitScrollPadding() {
    // Keep a focused cell clear of the sticky headers when the browser scrolls to it.
    if (!scroller || !n1 || !n2) return;
    scroller.style.scrollPaddingTop = colHeads[0].offsetHeight + "px";
    scroller.style.scrollPaddingLeft = rowHeads[0].offsetWidth + "px";
  }
  fitScrollPadding();

  function paint(idx) {
    var v = state[idx], b = cells[idx];
    b.className = v === SURE ? "cell s" : v === POSSIBLE ? "cell p" : "cell";
    b.setAttribute("aria-label", lab1[(idx / n2) | 0] + " × " + lab2[idx % n2] + ", " + STATE_TEXT[v]);
  }

  // ---------------------------------------------------------------- words as running text
  var toks1 = [], toks2 = [];
  document.querySelectorAll(".sentences .tok").forEach(function (el) {
    (el.dataset.side === "1" ? toks1 : toks2)[+el.dataset.k] = el;
  });

  function refreshLinkedWords() {
    var linked1 = new Uint8Array(n1), linked2 = new Uint8Array(n2);
    for (var idx = 0; idx < state.length; idx++) {
      if (state[idx]) { linked1[(idx / n2) | 0] = 1; linked2[idx % n2] = 1; }
    }
    toks1.forEach(function (el, i) { if (el) el.classList.toggle("linked", !!linked1[i]); });
    toks2.forEach(function (el, j) { if (el) el.classList.toggle("linked", !!linked2[j]); });
  }
  refreshLinkedWords();

  // ---------------------------------------------------------------- highlighting
  var summary = document.getElementById("link-summary");
  var marked = [];
  var hover = null;

  function mark(el, cls) { if (el) { el.classList.add(cls); marked.push([el, cls]); } }
  function partnersOfRow(i) { var out = []; for (var j = 0; j < n2; j++) if (state[i * n2 + j]) out.push(j); return out; }
  function partnersOfCol(j) { var out = []; for (var i = 0; i < n1; i++) if (state[i * n2 + j]) out.push(i); return out; }

  function highlight(i, j) {
    marked.forEach(function (m) { m[0].classList.remove(m[1]); });
    marked = [];
    hover = i < 0 && j < 0 ? null : { i: i, j: j };
    if (!hover) return;
    if (i >= 0) {
      mark(rows[i], "hl"); mark(rowHeads[i], "hl"); mark(toks1[i], "hl");
      partnersOfRow(i).forEach(function (pj) { if (pj !== j) { mark(toks2[pj], "partner"); mark(colHeads[pj], "partner"); } });
    }
    if (j >= 0) {
      mark(cols[j], "hl"); mark(colHeads[j], "hl"); mark(toks2[j], "hl");
      partnersOfCol(j).forEach(function (pi) { if (pi !== i) { mark(toks1[pi], "partner"); mark(rowHeads[pi], "partner"); } });
    }
    describe(i, j);
  }

  // Text built with textContent only: tokens are user data.
  function describe(i, j) {
    if (!summary) return;
    summary.textContent = "";
    function strong(text) { var s = document.createElement("strong"); s.textContent = text; summary.appendChild(s); }
    function plain(text) { summary.appendChild(document.createTextNode(text)); }
    function list(idxs, lab) { return idxs.length ? idxs.map(function (k) { return lab[k]; }).join(", ") : msg("msgNothing", "nothing"); }
    if (i >= 0 && j >= 0) {
      strong(lab1[i]); plain(" × "); strong(lab2[j]); plain(": " + STATE_TEXT[state[i * n2 + j]] + ". ");
    }
    // "{word} is linked to {words}.": the word goes in bold where the translation puts it.
    function linkedTo(word, words, end) {
      var parts = msg("msgLinkedTo", "{word} is linked to {words}.").split("{word}");
      parts.forEach(function (part, k) {
        if (k) strong(word);
        if (part) plain(part.replace("{words}", function () { return words; }));
      });
      plain(end);
    }
    if (i >= 0) linkedTo(lab1[i], list(partnersOfRow(i), lab2), j >= 0 ? " " : "");
    if (j >= 0) linkedTo(lab2[j], list(partnersOfCol(j), lab1), "");
  }

  function cellOf(el) { var b = el && el.closest ? el.closest("button.cell") : null; return b && table.contains(b) ? b : null; }
  function idxOf(b) { return +b.dataset.i * n2 + +b.dataset.j; }

  table.addEventListener("pointerover", function (e) {
    if (drag) return;
    var b = cellOf(e.target);
    if (b) return highlight(+b.dataset.i, +b.dataset.j);
    var th = e.target.closest("th");
    if (th && th.dataset.i !== undefined) highlight(+th.dataset.i, -1);
    else if (th && th.dataset.j !== undefined) highlight(-1, +th.dataset.j);
  });
  var sentences = document.querySelector(".sentences");
  if (sentences) {
    sentences.addEventListener("pointerover", function (e) {
      var tok = e.target.closest(".tok");
      if (!tok) return;
      if (tok.dataset.side === "1") highlight(+tok.dataset.k, -1); else highlight(-1, +tok.dataset.k);
    });
  }

  // ---------------------------------------------------------------- focus (roving tabindex)
  var focusIdx = 0;
  function setFocus(idx, move) {
    if (idx < 0 || idx >= cells.length) return;
    cells[focusIdx].tabIndex = -1;
    focusIdx = idx;
    cells[idx].tabIndex = 0;
    if (move) cells[idx].focus();
  }
  table.addEventListener("focusin", function (e) {
    var b = cellOf(e.target);
    if (!b) return;
    var idx = idxOf(b);
    if (idx !== focusIdx) setFocus(idx, false);
    highlight(+b.dataset.i, +b.dataset.j);
  });

  // ---------------------------------------------------------------- edits, undo, redo
  var undoStack = [], redoStack = [];
  var announcer = document.getElementById("grid-announce");
  function announce(text) { if (announcer) announcer.textContent = text; }

  // changes: array of [idx, newValue]; one call is one undo step.
  function commit(changes, message) {
    var diff = [];
    changes.forEach(function (c) { if (state[c[0]] !== c[1]) diff.push([c[0], state[c[0]], c[1]]); });
    if (!diff.length) return;
    apply(diff, false);
    undoStack.push(diff);
    redoStack.length = 0;
    changed(message);
  }
  function apply(diff, reverse) {
    diff.forEach(function (d) { state[d[0]] = reverse ? d[1] : d[2]; paint(d[0]); });
    refreshLinkedWords();
  }
  function undo() {
    var d = undoStack.pop();
    if (!d) return;
    apply(d, true);
    redoStack.push(d);
    changed(msg("msgUndone", "Undone"));
  }
  function redo() {
    var d = redoStack.pop();
    if (!d) return;
    apply(d, false);
    undoStack.push(d);
    changed(msg("msgRedone", "Redone"));
  }
  function changed(message) {
    updateButtons();
    if (hover) highlight(hover.i, hover.j);
    announce(message);
    scheduleSave();
  }
  function toggle(idx, kind) {
    var next = state[idx] === kind ? NONE : kind;
    var name = lab1[(idx / n2) | 0] + " × " + lab2[idx % n2];
    commit([[idx, next]], next === NONE ? msg("msgRemovedLink", "Removed the link {name}", { name: name })
      : msg("msgLinked", "Linked {name} ({kind})", { name: name, kind: STATE_TEXT[kind] }));
  }

  // ---------------------------------------------------------------- pointer: tap, click and drag
  // Pointer Events serve the mouse, a pen and a finger alike:
  //  - mouse: a click toggles a cell, a drag paints a block at once (as before);
  //  - touch and pen: a tap toggles a cell and a swipe scrolls the grid as usual; a
  //    touch held still for LONG_PRESS ms starts painting, and the drag that follows
  //    paints a block (a touchmove listener then stops the browser from scrolling);
  //  - the "Paint blocks" toggle (touch screens) makes every touch drag paint at once;
  //    the grid then has touch-action: none, so the page scrolls outside the grid.
  // While a drag is near an edge of the grid's visible area, or beyond it, the grid
  // (or the window, when the grid is cut off by the window) scrolls.
  var mode = SURE;
  document.querySelectorAll('input[name="link-mode"]').forEach(function (r) {
    r.addEventListener("change", function () { if (r.checked) mode = r.value === "possible" ? POSSIBLE : SURE; });
  });

  var LONG_PRESS = 350, SLOP = 10;
  var paintMode = false;
  var paintBtn = document.getElementById("paint-button");
  if (paintBtn) paintBtn.addEventListener("click", function () {
    paintMode = !paintMode;
    paintBtn.setAttribute("aria-pressed", paintMode ? "true" : "false");
    table.classList.toggle("paint-mode", paintMode);
    announce(paintMode ? msg("msgPaintOn", "Paint blocks on: a drag on the grid paints")
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
    startAutoScroll();
  }
  function endDrag() {
    drag = null;
    table.classList.remove("painting");
    clearPreview();
    stopAutoScroll();
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
    setFocus(idx, false);
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
      return toggle(p.i * n2 + p.j, p.kind); // a tap
    }
    if (!drag || e.pointerId !== drag.id) return;
    var d = drag;
    endDrag();
    if (d.i0 === d.i1 && d.j0 === d.j1) return toggle(d.i0 * n2 + d.j0, d.kind);
    var changes = [];
    var ia = Math.min(d.i0, d.i1), ib = Math.max(d.i0, d.i1), ja = Math.min(d.j0, d.j1), jb = Math.max(d.j0, d.j1);
    for (var i = ia; i <= ib; i++) for (var j = ja; j <= jb; j++) changes.push([i * n2 + j, d.erase ? NONE : d.kind]);
    var size = (ib - ia + 1) + " × " + (jb - ja + 1);
    commit(changes, d.erase ? msg("msgRemovedBlock", "Removed the links of a {size} block", { size: size })
      : msg("msgLinkedBlock", "Linked a {size} block ({kind})", { size: size, kind: KIND_PLURAL[d.kind] }));
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
      top: top + (n2 ? colHeads[0].offsetHeight : 0), left: left + (n1 ? rowHeads[0].offsetWidth : 0),
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
    highlight(i, j);
  }

  // ---------------------------------------------------------------- auto-scroll while dragging
  var autoScroll = makeAutoScroll(scroller, {
    pointer: function () { return drag; }, area: visibleArea, track: track,
  });
  function startAutoScroll() { autoScroll.start(); }
  function stopAutoScroll() { autoScroll.stop(); }

  // Screen readers activate buttons with a synthetic click (detail 0) and no pointer
  // events; our own keys are handled on keydown and suppress their click.
  var keyClickUntil = 0;
  table.addEventListener("click", function (e) {
    var b = cellOf(e.target);
    if (!b || readonly || e.detail !== 0 || Date.now() < keyClickUntil) return;
    toggle(idxOf(b), mode);
  });

  // ---------------------------------------------------------------- keyboard
  table.addEventListener("keydown", function (e) {
    var b = cellOf(e.target);
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
        keyClickUntil = Date.now() + 400;
        if (!readonly) toggle(i * n2 + j, SURE);
        return;
      case "p":
      case "P":
        if (!plainKey) return;
        e.preventDefault();
        if (!readonly) toggle(i * n2 + j, POSSIBLE);
        return;
      case "Enter":
        e.preventDefault();
        keyClickUntil = Date.now() + 400;
        if (!readonly) submit();
        return;
      case "Escape":
        if (drag || pending) { cancelPending(); if (drag) endDrag(); e.preventDefault(); }
        return;
      default:
        return;
    }
    e.preventDefault();
    setFocus(to, true);
  });
  table.addEventListener("keyup", function (e) {
    if (e.key === " " && cellOf(e.target)) e.preventDefault();
  });

  document.addEventListener("keydown", function (e) {
    if (readonly || !(e.ctrlKey || e.metaKey) || e.altKey) return;
    var tag = e.target && e.target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    var key = e.key.toLowerCase();
    if (key === "z" && !e.shiftKey) { e.preventDefault(); undo(); }
    else if ((key === "z" && e.shiftKey) || key === "y") { e.preventDefault(); redo(); }
  });

  // ---------------------------------------------------------------- toolbar
  var undoBtn = document.getElementById("undo-button");
  var redoBtn = document.getElementById("redo-button");
  var resetBtn = document.getElementById("reset-button");
  var clearBtn = document.getElementById("clear-button");
  var submitBtn = document.getElementById("submit-button");
  var statusEl = document.getElementById("save-status");
  var badge = document.getElementById("assignment-status");
  function updateButtons() {
    if (undoBtn) undoBtn.disabled = !undoStack.length;
    if (redoBtn) redoBtn.disabled = !redoStack.length;
  }
  if (undoBtn) undoBtn.addEventListener("click", undo);
  if (redoBtn) redoBtn.addEventListener("click", redo);
  if (clearBtn) clearBtn.addEventListener("click", function () {
    var changes = [];
    for (var idx = 0; idx < state.length; idx++) changes.push([idx, NONE]);
    commit(changes, msg("msgCleared", "Cleared every link"));
  });
  if (resetBtn && data.automatic) resetBtn.addEventListener("click", function () {
    var auto = new Uint8Array(state.length);
    load(auto, data.automatic, n2);
    var changes = [];
    for (var idx = 0; idx < state.length; idx++) changes.push([idx, auto[idx]]);
    commit(changes, msg("msgReset", "Reset to the automatic alignment"));
  });
  if (submitBtn) submitBtn.addEventListener("click", submit);

  // ---------------------------------------------------------------- timing and saving
  var activeSeconds = trackActiveTime(data.active_seconds, readonly);
  var saver = makeSaver({
    data: data, readonly: readonly, statusEl: statusEl, badge: badge, submitBtn: submitBtn,
    lists: function () { return linkLists(state, n2); }, activeSeconds: activeSeconds,
  });
  function scheduleSave() { saver.scheduleSave(); }
  function saveNow() { return saver.saveNow(); }
  function submit() { saver.submit(); }
  updateButtons();
  window.paraevalGrid = { state: state, n1: n1, n2: n2, save: saveNow };
})();
