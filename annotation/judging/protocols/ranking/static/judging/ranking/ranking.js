// The ranking page: the judge orders k paraphrases best first, by drag (mouse, pen or
// finger) or by keys, ties allowed; active time and double-submit protection come from
// judge_form.js. The page works without this script: each paraphrase has a rank field
// (1 = best, equal ranks are ties), which this script fills from the order on the screen.
//
// Keys follow the screen: a digit selects the paraphrase that shows that number (the
// numbers are places on the screen, the same on a mirrored page; Arabic-Indic digits
// too); ↑ and ↓ move the selected paraphrase up (better) or down (worse) past the next
// group; = ties it with the paraphrase above it, or unties it. Enter submits (once every
// score is given, when scores are asked); Backspace goes back; ? opens the instructions.
// Each paraphrase also has three buttons (move up, move down, tie with the one above: a
// toggle), so that a finger, a switch or a screen reader can do all the keys do (issue 42).
import { judgeForm } from "../judge_form.js";

const form = document.getElementById("rating-form");
const list = document.getElementById("rank-list");
const INDIC = { "٠": "0", "١": "1", "٢": "2", "٣": "3", "٤": "4", "٥": "5", "٦": "6", "٧": "7", "٨": "8", "٩": "9",
  "۰": "0", "۱": "1", "۲": "2", "۳": "3", "۴": "4", "۵": "5", "۶": "6", "۷": "7", "۸": "8", "۹": "9" };

if (form && list) {
  const cards = () => Array.from(list.querySelectorAll(".rank-card"));
  const card = (place) => list.querySelector(`.rank-card[data-place="${place}"]`);
  const placeOf = (c) => Number(c.dataset.place);
  const rankInput = (c) => c.querySelector(".rank-input");
  const scoreInput = (c) => c.querySelector(".score-input");
  const statusLine = document.getElementById("rate-status");
  const text = (name, values = {}) => (form.dataset[name] || "").replace(/%\((\w+)\)s/g, (_, k) => values[k]);
  const say = (t) => { if (statusLine) statusLine.textContent = t; };
  const missingRanks = form.dataset.msgMissing;
  let selected = null;

  // The order as groups of places, best first; tied places share a group. From the rank
  // fields when they are filled (a revision, or a refused submission), else the screen order.
  let groups = [];
  const filled = cards().every((c) => rankInput(c).value !== "");
  for (const c of cards()) {
    const prev = groups.length ? groups[groups.length - 1] : null;
    const prevRank = prev ? rankInput(card(prev[0])).value : null;
    if (filled && prev && rankInput(c).value === prevRank) prev.push(placeOf(c));
    else groups.push([placeOf(c)]);
  }

  function render() {
    const focused = document.activeElement; // moving a card blurs what it holds: focus it again
    let before = 0;
    for (const g of groups) {
      g.forEach((p, i) => {
        const c = card(p);
        if (list.children[before + i] !== c) list.insertBefore(c, list.children[before + i] || null);
        c.classList.toggle("is-tied", i > 0);
        c.dataset.rank = String(before + 1);
        rankInput(c).value = String(before + 1);
      });
      before += g.length;
    }
    buttonsUpdate();
    if (focused && focused !== document.activeElement && list.contains(focused)) {
      (focused.disabled ? focused.closest(".rank-card") : focused).focus({ preventScroll: true });
    }
    form.dispatchEvent(new Event("change"));
  }

  // The buttons of each card: up and down are off where the card cannot go further; the tie
  // button is pressed while the card is tied with the one above, off on the first card.
  function buttonsUpdate() {
    cards().forEach((c, i) => {
      const [gi, g] = locate(placeOf(c));
      const tied = g.indexOf(placeOf(c)) > 0;
      const moves = c.querySelector(".rank-moves");
      if (!moves) return;
      // a tied card can always move: out of its tie, above or below the rest of it
      moves.querySelector(".rank-up").disabled = gi === 0 && g.length === 1;
      moves.querySelector(".rank-down").disabled = gi === groups.length - 1 && g.length === 1;
      const tie = moves.querySelector(".rank-tie");
      tie.disabled = i === 0;
      tie.setAttribute("aria-pressed", tied ? "true" : "false");
    });
  }

  function buttonsAdd() {
    for (const c of cards()) {
      const place = placeOf(c);
      const moves = document.createElement("div");
      moves.className = "rank-moves";
      moves.setAttribute("role", "group");
      moves.setAttribute("aria-labelledby", `cand-${place}-label`);
      for (const [cls, label, act] of [
        ["rank-up", form.dataset.labelUp, () => move(place, false)],
        ["rank-down", form.dataset.labelDown, () => move(place, true)],
        ["rank-tie", form.dataset.labelTie, () => toggleTie(place)],
      ]) {
        const b = document.createElement("button");
        b.type = "button";
        b.className = cls;
        b.textContent = label || cls;
        b.addEventListener("click", () => { selected = place; act(); });
        moves.appendChild(b);
      }
      c.querySelector(".rank-body").appendChild(moves);
    }
  }

  function locate(place) {
    const gi = groups.findIndex((g) => g.includes(place));
    return [gi, groups[gi]];
  }

  function move(place, down) {
    const [gi, g] = locate(place);
    if (g.length > 1) { // out of its tie, just above (or below) the rest of it
      g.splice(g.indexOf(place), 1);
      groups.splice(down ? gi + 1 : gi, 0, [place]);
    } else {
      const other = down ? gi + 1 : gi - 1;
      if (other < 0 || other >= groups.length) return;
      [groups[gi], groups[other]] = [groups[other], groups[gi]];
    }
    render();
    say(text("msgMoved", { place, rank: card(place).dataset.rank }));
  }

  function toggleTie(place) {
    const [gi, g] = locate(place);
    if (g.length > 1) {
      g.splice(g.indexOf(place), 1);
      groups.splice(gi + 1, 0, [place]);
      render();
      say(text("msgUntied", { place }));
    } else if (gi > 0) {
      groups.splice(gi, 1);
      groups[gi - 1].push(place);
      render();
      say(text("msgTied", { place }));
    }
  }

  function select(place) {
    const c = card(place);
    if (!c) return;
    selected = place;
    cards().forEach((x) => x.classList.toggle("is-selected", x === c));
    cards().forEach((x) => x.setAttribute("aria-current", x === c ? "true" : "false"));
    c.focus({ preventScroll: false });
    say(text("msgSelected", { place }));
  }

  // With the script, the order on the screen is the answer: the rank fields only show it.
  for (const c of cards()) {
    rankInput(c).readOnly = true;
    rankInput(c).tabIndex = -1;
  }
  buttonsAdd();
  render();

  function scoresMissing() {
    return cards().some((c) => {
      const s = scoreInput(c);
      if (!s) return false;
      const v = s.value.trim();
      return v === "" || !(Number(v) >= 0 && Number(v) <= 100);
    });
  }

  judgeForm({
    doneText: "Press Enter to submit this order.",
    missingText: "Rank every paraphrase first.",
    isSet: () => {
      const missing = scoresMissing();
      form.dataset.msgMissing = missing ? (form.dataset.msgScores || missingRanks) : missingRanks;
      return !missing && cards().every((c) => rankInput(c).value !== "");
    },
    focusTarget: () => {
      if (!document.activeElement || document.activeElement === document.body) return null;
      const empty = cards().map(scoreInput).find((s) => s && s.value.trim() === "");
      return empty || null;
    },
    onKey: (event, key) => {
      const digit = INDIC[key] || key;
      if (/^[1-9]$/.test(digit) && card(digit)) {
        event.preventDefault();
        select(Number(digit));
        return true;
      }
      const focused = document.activeElement && document.activeElement.closest
        ? document.activeElement.closest(".rank-card") : null;
      const place = selected || (focused ? placeOf(focused) : null);
      if (key === "ArrowUp" || key === "ArrowDown") {
        event.preventDefault();
        if (place) { move(place, key === "ArrowDown"); card(place).focus(); }
        return true;
      }
      if (key === "=") {
        event.preventDefault();
        if (place) toggleTie(place);
        return true;
      }
      return false;
    },
  });

  // --- drag: the card follows the pointer; dropped, it stands alone at its new place ------
  let dragging = null;
  let before = "";
  list.addEventListener("pointerdown", (event) => {
    const c = event.target.closest(".rank-card");
    if (!c || event.target.closest("input, a, button")) return; // the card's fields and buttons work as such
    if (event.pointerType !== "mouse" && !event.target.closest(".rank-handle")) return; // a finger scrolls elsewhere
    dragging = c;
    before = cards().map(placeOf).join(" ");
    select(placeOf(c));
    c.classList.add("is-dragging");
    try { c.setPointerCapture(event.pointerId); } catch { /* synthetic pointers */ }
    if (event.pointerType === "mouse") event.preventDefault(); // no text selection (a finger's handle has touch-action: none)
  });
  list.addEventListener("pointermove", (event) => {
    if (!dragging) return;
    const over = cards().find((x) => {
      if (x === dragging) return false;
      const r = x.getBoundingClientRect();
      return event.clientY >= r.top && event.clientY <= r.bottom;
    });
    if (!over) return;
    const r = over.getBoundingClientRect();
    list.insertBefore(dragging, event.clientY < r.top + r.height / 2 ? over : over.nextSibling);
  });
  const drop = () => {
    if (!dragging) return;
    const place = placeOf(dragging);
    dragging.classList.remove("is-dragging");
    dragging = null;
    if (cards().map(placeOf).join(" ") === before) return; // a click, not a move: the ties stay
    // The new groups: the dropped card alone, the others keep their ties where still adjacent.
    const old = new Map();
    groups.forEach((g, i) => g.forEach((p) => old.set(p, i)));
    const next = [];
    let last = null;
    for (const c of cards()) {
      const p = placeOf(c);
      const id = p === place ? -1 : old.get(p);
      if (last !== null && id !== -1 && id === last) next[next.length - 1].push(p);
      else next.push([p]);
      last = id;
    }
    groups = next;
    render();
    say(text("msgMoved", { place, rank: card(place).dataset.rank }));
  };
  list.addEventListener("pointerup", drop);
  list.addEventListener("pointercancel", drop);
  list.dataset.ready = "true"; // the keys and the drag are live (tests wait for it)
}
else {
  judgeForm({ doneText: "", missingText: "" }); // the end page: Backspace back to the last set, ? the instructions
}
