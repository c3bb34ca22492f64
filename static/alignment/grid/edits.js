// Edits: every change to the links is one undo step (commit), with undo, redo, the
// toolbar's Undo, Redo, Clear and Reset buttons, and the spoken announcement of each change.
//
// g is the grid's shared context (see grid.js): data, state, n2, lab1, lab2, stateText,
// paint(idx), refreshLinkedWords(), rehighlight(), scheduleSave(). Adds g.announce(text),
// g.commit(changes, message), g.toggle(idx, kind), g.undo(), g.redo(), g.updateButtons().

import { msg } from "./messages.js";
import { NONE, load } from "./model.js";

export function wireEdits(g) {
  var state = g.state, n2 = g.n2;
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
    diff.forEach(function (d) { state[d[0]] = reverse ? d[1] : d[2]; g.paint(d[0]); });
    g.refreshLinkedWords();
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
    g.rehighlight();
    announce(message);
    g.scheduleSave();
  }
  function toggle(idx, kind) {
    var next = state[idx] === kind ? NONE : kind;
    var name = g.lab1[(idx / n2) | 0] + " × " + g.lab2[idx % n2];
    commit([[idx, next]], next === NONE ? msg("msgRemovedLink", "Removed the link {name}", { name: name })
      : msg("msgLinked", "Linked {name} ({kind})", { name: name, kind: g.stateText[kind] }));
  }

  // ---------------------------------------------------------------- toolbar
  var undoBtn = document.getElementById("undo-button");
  var redoBtn = document.getElementById("redo-button");
  var resetBtn = document.getElementById("reset-button");
  var clearBtn = document.getElementById("clear-button");
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
  if (resetBtn && g.data.automatic) resetBtn.addEventListener("click", function () {
    var auto = new Uint8Array(state.length);
    load(auto, g.data.automatic, n2);
    var changes = [];
    for (var idx = 0; idx < state.length; idx++) changes.push([idx, auto[idx]]);
    commit(changes, msg("msgReset", "Reset to the automatic alignment"));
  });

  g.announce = announce;
  g.commit = commit;
  g.toggle = toggle;
  g.undo = undo;
  g.redo = redo;
  g.updateButtons = updateButtons;
}
