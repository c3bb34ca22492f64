// Highlighting: the row, column and words under the pointer or the focus, their linked
// partners, the sentences' linked words, and the spoken summary (#link-summary).
//
// g is the grid's shared context (see grid.js): state, n1, n2, lab1, lab2, rows, rowHeads,
// cols, colHeads, stateText. Adds g.highlight(i, j) (-1 for none), g.rehighlight() and
// g.refreshLinkedWords().

import { msg } from "./messages.js";

export function wireHighlight(g) {
  var state = g.state, n1 = g.n1, n2 = g.n2, lab1 = g.lab1, lab2 = g.lab2;

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
      mark(g.rows[i], "hl"); mark(g.rowHeads[i], "hl"); mark(toks1[i], "hl");
      partnersOfRow(i).forEach(function (pj) { if (pj !== j) { mark(toks2[pj], "partner"); mark(g.colHeads[pj], "partner"); } });
    }
    if (j >= 0) {
      mark(g.cols[j], "hl"); mark(g.colHeads[j], "hl"); mark(toks2[j], "hl");
      partnersOfCol(j).forEach(function (pi) { if (pi !== i) { mark(toks1[pi], "partner"); mark(g.rowHeads[pi], "partner"); } });
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
      strong(lab1[i]); plain(" × "); strong(lab2[j]); plain(": " + g.stateText[state[i * n2 + j]] + ". ");
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

  var sentences = document.querySelector(".sentences");
  if (sentences) {
    sentences.addEventListener("pointerover", function (e) {
      var tok = e.target.closest(".tok");
      if (!tok) return;
      if (tok.dataset.side === "1") highlight(+tok.dataset.k, -1); else highlight(-1, +tok.dataset.k);
    });
  }

  g.highlight = highlight;
  g.rehighlight = function () { if (hover) highlight(hover.i, hover.j); };
  g.refreshLinkedWords = refreshLinkedWords;
}
