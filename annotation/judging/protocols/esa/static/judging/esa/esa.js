// The error span page: the judge marks spans of the paraphrase (and of the original, for
// what it leaves out, or the [missing] button), each minor or major with an optional
// category, accepts or deletes the suggested spans, sets the 0–100 score and submits.
//
// Selecting: with the mouse or a finger (the browser's own selection, read when it ends),
// or with the keyboard: ← → move a word cursor in reading order (mirrored on a
// right-to-left page: → goes to the previous word), ↑ ↓ switch between the original and
// the paraphrase, Shift extends; then 1 marks the selection minor, 2 major; Esc cancels.
// Enter submits once the score is set and every suggested span is decided; Backspace goes
// back to the previous item; ? opens the instructions (judge_form.js, shared with the
// other judge pages, also measures active time and stops a double submit).
//
// Offsets: the page works in UTF-16 units (what the DOM counts) and sends code points,
// end exclusive, on whole characters (offsets.js); the server checks them again.
import { judgeForm, keyboardButton } from "../judge_form.js";
import { snapSelection, spanFromUtf16, spanToUtf16, wordOffsets } from "./offsets.js";

const data = JSON.parse(document.getElementById("esa-data").textContent);
const W = data.words;
const spansHeading = document.getElementById("esa-spans-h");
// What changed, read out by a screen reader: the page's live status line (issue 42).
function say(template, values) {
  const status = document.getElementById("rate-status");
  if (status) status.textContent = template.replace(/%\((\w+)\)s/g, (_, k) => values[k]);
}
const form = document.getElementById("rating-form");
const boxes = { original: document.getElementById("esa-original"), candidate: document.getElementById("esa-candidate") };
const texts = { original: data.original, candidate: data.candidate };
const words = { original: wordOffsets(texts.original), candidate: wordOffsets(texts.candidate) };
const list = document.getElementById("esa-span-list");
const panel = document.getElementById("esa-new");
const panelText = document.getElementById("esa-new-text");
const categorySelect = document.getElementById("esa-new-category");
const slider = document.getElementById("esa-score");
const scoreInput = document.getElementById("esa-score-input");
const scoreOut = document.getElementById("esa-score-out");
const spansInput = document.getElementById("esa-spans-input");

// Every span: {side, start, end (code points), severity, category, missing, proposed, pending}.
let spans = (data.spans || []).map((s) => ({ ...s, pending: Boolean(data.pending && s.proposed) }));
let selection = null; // {side, start, end} in UTF-16 units, or {missing: true}
let cursor = null; // {side, anchor, focus}: word indices

for (const c of data.categories) {
  const option = document.createElement("option");
  option.value = c;
  option.textContent = c;
  categorySelect.append(option);
}

const isRtl = (side) => getComputedStyle(boxes[side]).direction === "rtl";

function spanText(s) {
  return s.missing ? W.missing : texts[s.side].slice(...spanToUtf16(texts[s.side], s.start, s.end));
}

function render(side) {
  const text = texts[side];
  const cuts = new Set([0, text.length]);
  words[side].forEach(([a, b]) => { cuts.add(a); cuts.add(b); });
  const marks = spans.filter((s) => s.side === side && !s.missing).map((s) => {
    const [a, b] = spanToUtf16(text, s.start, s.end);
    cuts.add(a); cuts.add(b);
    return { a, b, s };
  });
  const sel = selection && !selection.missing && selection.side === side ? selection : null;
  if (sel) { cuts.add(sel.start); cuts.add(sel.end); }
  const points = [...cuts].sort((x, y) => x - y);
  const box = boxes[side];
  box.textContent = "";
  for (let i = 0; i + 1 < points.length; i += 1) {
    const [a, b] = [points[i], points[i + 1]];
    const seg = document.createElement("span");
    seg.className = "seg";
    seg.textContent = text.slice(a, b);
    const over = marks.filter((m) => m.a <= a && b <= m.b);
    if (over.some((m) => m.s.pending)) seg.classList.add("mark-suggested");
    if (over.some((m) => !m.s.pending && m.s.severity === "major")) seg.classList.add("mark-major");
    else if (over.some((m) => !m.s.pending)) seg.classList.add("mark-minor");
    if (sel && sel.start <= a && b <= sel.end) seg.classList.add("mark-selected");
    box.append(seg);
  }
}

function renderList() {
  list.textContent = "";
  const order = { original: 0, candidate: 1 };
  const sorted = spans.map((s, i) => ({ s, i }))
    .sort((x, y) => (order[x.s.side] - order[y.s.side]) || (x.s.missing - y.s.missing) || (x.s.start - y.s.start));
  if (!sorted.length) {
    const li = document.createElement("li");
    li.className = "muted";
    li.textContent = W.no_spans;
    list.append(li);
  }
  for (const [pos, { s, i }] of sorted.entries()) {
    const li = document.createElement("li");
    li.className = `esa-span severity-${s.severity}${s.pending ? " is-suggested" : ""}`;
    li.dataset.side = s.side;
    const q = document.createElement("q");
    q.dir = "auto";
    q.textContent = spanText(s);
    const where = document.createElement("span");
    where.className = "muted";
    where.textContent = ` ${s.side === "original" ? W.original : W.candidate}${s.pending ? ` · ${W.proposed}` : ""} `;
    const sev = document.createElement("select");
    sev.className = "esa-severity";
    sev.setAttribute("aria-label", `${W.minor} / ${W.major}`);
    for (const v of ["minor", "major"]) sev.add(new Option(W[v], v, false, s.severity === v));
    sev.addEventListener("change", () => { s.severity = sev.value; refresh(); });
    li.append(q, where, sev);
    if (data.categories.length) {
      const cat = document.createElement("select");
      cat.className = "esa-category";
      cat.add(new Option(W.no_category, "", false, !s.category));
      for (const c of data.categories) cat.add(new Option(c, c, false, s.category === c));
      cat.addEventListener("change", () => { s.category = cat.value || null; refresh(); });
      li.append(" ", cat);
    }
    if (s.pending) {
      const ok = document.createElement("button");
      ok.type = "button";
      ok.className = "esa-accept";
      ok.textContent = W.accept;
      ok.addEventListener("click", () => {
        s.pending = false;
        refresh();
        say(W.accepted, { text: spanText(s) });
        // the focus moves on to the next suggestion, else to this span's Delete, never to the page
        (list.querySelector(".esa-accept") || list.querySelectorAll(".esa-delete")[pos] || spansHeading).focus();
      });
      li.append(" ", ok);
    }
    const del = document.createElement("button");
    del.type = "button";
    del.className = "esa-delete";
    del.textContent = W.delete;
    del.addEventListener("click", () => {
      spans.splice(i, 1);
      refresh();
      say(W.deleted, { text: spanText(s) });
      const left = list.querySelectorAll(".esa-delete"); // the next span's Delete, else the list's heading
      (left[pos] || left[pos - 1] || spansHeading).focus();
    });
    li.append(" ", del);
    list.append(li);
  }
}

function showPanel() {
  panel.hidden = selection === null;
  if (selection) {
    panelText.textContent = selection.missing ? W.missing
      : texts[selection.side].slice(selection.start, selection.end);
  }
}

// What the server receives: the decided spans, without the page's own fields.
function spansForServer() {
  return spans.filter((s) => !s.pending).map(({ side, start, end, severity, category, missing, proposed }) => (
    { side, start, end, severity, category: category || null, missing: Boolean(missing), proposed: Boolean(proposed) }));
}

function missingMessage() {
  if (spans.some((s) => s.pending)) return W.pending;
  if (scoreInput.value === "") return W.score_missing;
  return "";
}

// Every suggestion at once (a long sentence can bring dozens: issue 42), announced in the
// page's status line; shown only while a suggestion waits.
const allBox = document.getElementById("esa-all");
function allDone(button, change) {
  change();
  refresh();
  const status = document.getElementById("rate-status");
  if (status) status.textContent = button.dataset.done;
  const after = document.getElementById("esa-score");
  if (after) after.focus(); // the buttons are gone: the focus moves on to what is left to do
}
if (allBox) {
  const accept = document.getElementById("esa-accept-all");
  const drop = document.getElementById("esa-delete-all");
  accept.addEventListener("click", () => allDone(accept, () => spans.forEach((s) => { s.pending = false; })));
  drop.addEventListener("click", () => allDone(drop, () => { spans = spans.filter((s) => !s.pending); }));
}

function refresh() {
  render("original");
  render("candidate");
  renderList();
  if (allBox) allBox.hidden = !spans.some((s) => s.pending);
  showPanel();
  spansInput.value = JSON.stringify(spansForServer());
  form.dataset.msgMissing = missingMessage() || W.ready;
  form.dataset.msgDone = W.ready;
  form.dataset.msgSaving = W.saving;
}

function select(side, start, end) {
  const snapped = snapSelection(texts[side], start, end);
  selection = snapped ? { side, start: snapped[0], end: snapped[1] } : null;
  showPanel();
  render("original");
  render("candidate");
}

function addSpan(severity) {
  if (!selection) return false;
  const category = categorySelect.value || null;
  let span;
  if (selection.missing) {
    span = { side: "candidate", start: 0, end: 0, severity, category, missing: true, proposed: false, pending: false };
  } else {
    const [start, end] = spanFromUtf16(texts[selection.side], selection.start, selection.end);
    span = { side: selection.side, start, end, severity, category, missing: false, proposed: false, pending: false };
  }
  // Marking words again replaces every mark of that text they share a character with (a
  // suggestion too): the server refuses overlapping spans of one side (docs/protocol-esa.md).
  spans = spans.filter((s) => s.side !== span.side || Boolean(s.missing) !== span.missing
    || (!span.missing && (s.end <= span.start || span.end <= s.start)));
  spans.push(span);
  say(W.marked, { severity: W[severity], text: spanText(span) });
  selection = null;
  cursor = null;
  categorySelect.value = ""; // the next mark starts with no category, never silently the last one's (issue 42)
  window.getSelection().removeAllRanges();
  // Enter on a focused button would press it again: after a mark the focus goes to the list of
  // marks (where the new one is announced), from where Enter submits and the keys go on marking
  const active = document.activeElement;
  if (active && active.tagName === "BUTTON" && active.type === "button") spansHeading.focus({ preventScroll: true });
  refresh();
  return true;
}

// --- the mouse and touch: the browser's selection, read when it ends ---------------------
function offsetIn(box, node, offset) {
  const range = document.createRange();
  range.selectNodeContents(box);
  range.setEnd(node, offset);
  return range.toString().length;
}

function readSelection() {
  const sel = window.getSelection();
  if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return;
  const range = sel.getRangeAt(0);
  for (const side of ["original", "candidate"]) {
    const box = boxes[side];
    if (box.contains(range.startContainer) && box.contains(range.endContainer)) {
      cursor = null;
      select(side, offsetIn(box, range.startContainer, range.startOffset), offsetIn(box, range.endContainer, range.endOffset));
      return;
    }
  }
}

document.addEventListener("mouseup", () => setTimeout(readSelection, 0));
document.addEventListener("touchend", () => setTimeout(readSelection, 0));
let selectionTimer = null;
document.addEventListener("selectionchange", () => {
  clearTimeout(selectionTimer);
  selectionTimer = setTimeout(readSelection, 400); // touch handles move the selection without a mouseup
});

document.getElementById("esa-missing").addEventListener("click", () => {
  cursor = null;
  selection = { missing: true };
  refresh();
});
document.getElementById("esa-add-minor").addEventListener("click", () => addSpan("minor"));
document.getElementById("esa-add-major").addEventListener("click", () => addSpan("major"));
document.getElementById("esa-new-cancel").addEventListener("click", () => { selection = null; cursor = null; refresh(); });

// --- the score: unset until the judge moves the slider -----------------------------------
function setScore() {
  scoreInput.value = slider.value;
  scoreOut.textContent = slider.value;
  slider.classList.remove("unset");
  form.dataset.msgMissing = missingMessage() || W.ready;
}
slider.addEventListener("input", setScore);
slider.addEventListener("change", setScore);
// A click or a tap on the thumb where it rests (50, unset) changes no value, so neither event
// above comes: the press itself sets the score, so that 50 can be given like any other value.
slider.addEventListener("pointerup", setScore);

// --- the keyboard: a word cursor ---------------------------------------------------------
function moveCursor(step, extend, side) {
  const target = side || (cursor ? cursor.side : "candidate");
  const n = words[target].length;
  if (!n) return;
  if (!cursor || cursor.side !== target) {
    const at = cursor ? Math.min(cursor.focus, n - 1) : (step < 0 ? n - 1 : 0);
    cursor = { side: target, anchor: at, focus: at };
  } else {
    const at = Math.max(0, Math.min(n - 1, cursor.focus + step));
    cursor = { side: target, anchor: extend ? cursor.anchor : at, focus: at };
  }
  const lo = Math.min(cursor.anchor, cursor.focus);
  const hi = Math.max(cursor.anchor, cursor.focus);
  window.getSelection().removeAllRanges();
  select(target, words[target][lo][0], words[target][hi][1]);
}

judgeForm({
  doneText: W.ready,
  missingText: W.score_missing,
  isSet: () => scoreInput.value !== "" && !spans.some((s) => s.pending),
  focusTarget: () => null,
  onKey: (event, key) => {
    const tag = event.target && event.target.tagName;
    const onSlider = tag === "INPUT" && event.target.type === "range";
    // Enter presses a button reached by keyboard; after a click or tap it submits (judge_form.js)
    if (key === "Enter" && (tag === "SELECT" || keyboardButton(event.target))) return true;
    if ((key === "1" || key === "2") && selection) { // also from the panel's category list
      event.preventDefault();
      addSpan(key === "1" ? "minor" : "major");
      return true;
    }
    if (tag === "SELECT") return key.startsWith("Arrow");
    if (key === "Escape" && (selection || cursor)) {
      selection = null;
      cursor = null;
      refresh();
      return true;
    }
    if (onSlider && key.startsWith("Arrow")) return true; // the slider's own keys
    if (key === "ArrowLeft" || key === "ArrowRight") {
      event.preventDefault();
      const side = cursor ? cursor.side : "candidate";
      const forward = (key === "ArrowRight") !== isRtl(side);
      moveCursor(forward ? 1 : -1, event.shiftKey);
      return true;
    }
    if (key === "ArrowUp" || key === "ArrowDown") {
      event.preventDefault();
      moveCursor(0, false, key === "ArrowUp" ? "original" : "candidate");
      return true;
    }
    return false;
  },
});

if (scoreInput.value !== "") {
  scoreOut.textContent = scoreInput.value;
  slider.classList.remove("unset");
}
refresh();
form.dataset.ready = "1"; // the keys and marks work from here on (tests wait for it)
