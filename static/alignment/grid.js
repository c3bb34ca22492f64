// The word-alignment grid (ParaMetric's Figure 1, made clickable).
//
// Rows are the tokens of sentence 1, columns those of sentence 2; each cell is a
// <button> whose accessible name gives both words and the link. The page's data
// comes from a json_script block (the CSP forbids inline scripts). One listener
// per event type sits on the table (event delegation), so a 60 × 60 grid costs
// no more to wire than a 5 × 5 one; the state lives in one Uint8Array.
//
// An ES module (<script type="module">), with its parts beside it in grid/: the model
// without the DOM, building the table, highlighting, edits and undo, the pointer (with
// auto-scroll), the keyboard, active time and saving. The imports are relative, so
// collectstatic's manifest storage rewrites them to the hashed names (config/storage.py).
//
// This entry builds the grid and one shared context object, g, that the parts read
// (the state, the cells, the labels, ...) and add their functions to (g.highlight,
// g.commit, g.toggle, ...); each part's header says what it reads and what it adds. The
// parts call each other through g at event time, so the order they are wired in only
// matters for what they read on wiring (the fields set here).
import { buildTable } from "./grid/build.js";
import { wireEdits } from "./grid/edits.js";
import { wireHighlight } from "./grid/highlight.js";
import { wireKeyboard } from "./grid/keyboard.js";
import { msg } from "./grid/messages.js";
import { NONE, POSSIBLE, STATE_TEXT as STATE_TEXT_EN, SURE, labels, linkLists, load } from "./grid/model.js";
import { wirePointer } from "./grid/pointer.js";
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
  var cells = built.cells, rowHeads = built.rowHeads, colHeads = built.colHeads;
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

  function cellOf(el) { var b = el && el.closest ? el.closest("button.cell") : null; return b && table.contains(b) ? b : null; }
  function idxOf(b) { return +b.dataset.i * n2 + +b.dataset.j; }

  // The context the parts share (see the header above).
  var g = {
    data: data, table: table, scroller: scroller, state: state, n1: n1, n2: n2, lab1: lab1, lab2: lab2,
    readonly: readonly, cells: cells, rows: built.rows, rowHeads: rowHeads, cols: built.cols, colHeads: colHeads,
    stateText: STATE_TEXT, kindPlural: KIND_PLURAL, keyClickUntil: 0,
    paint: paint, cellOf: cellOf, idxOf: idxOf, setFocus: setFocus,
    scheduleSave: function () { saver.scheduleSave(); }, submit: function () { saver.submit(); },
  };
  wireHighlight(g);

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
    g.highlight(+b.dataset.i, +b.dataset.j);
  });

  wireEdits(g);
  wirePointer(g);
  wireKeyboard(g);

  // ---------------------------------------------------------------- timing and saving
  var submitBtn = document.getElementById("submit-button");
  if (submitBtn) submitBtn.addEventListener("click", g.submit);
  var activeSeconds = trackActiveTime(data.active_seconds, readonly);
  var saver = makeSaver({
    data: data, readonly: readonly, statusEl: document.getElementById("save-status"),
    badge: document.getElementById("assignment-status"), submitBtn: submitBtn,
    lists: function () { return linkLists(state, n2); }, activeSeconds: activeSeconds,
  });
  g.updateButtons();
  window.paraevalGrid = { state: state, n1: n1, n2: n2, save: function () { return saver.saveNow(); } };
})();
