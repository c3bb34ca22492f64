// The side-by-side comparison page: keyboard-only answers, active-time measurement
// and double-submit protection (judge_form.js, shared with the rating page). The page
// works without this script (plain form).
//
// Keys follow the screen: each answer's radio carries the keys of the place where it
// is drawn (data-keys, from the protocol unit: ← or 1 for the left one, ↓ or 2 for
// the middle, → or 3 for the right one), so on a mirrored (right-to-left) page, where
// A is drawn on the right, → chooses A. The answer moves on to the next question;
// Enter submits once every question has an answer; Backspace goes back to the previous
// pair (never B: "B is better" is an answer here); ? opens the instructions. Arrow keys
// never move between radio buttons here (the browser's own behaviour would pick a
// neighbouring answer instead of the one the arrow points at).
import { judgeForm, radiosOf } from "../judge_form.js";

const ARROWS = ["ArrowLeft", "ArrowRight", "ArrowDown", "ArrowUp"];
const keysOf = (radio) => (radio.dataset.keys || "").split(" ");

judgeForm({
  doneText: "Every question has an answer: press Enter to submit.",
  missingText: "Answer every question first.",
  onKey: (event, key, page) => {
    if (!page.form || !page.groups.length) return false;
    if (radiosOf(page.groups[page.current()]).some((r) => keysOf(r).includes(key))) {
      event.preventDefault();
      page.answer((r) => keysOf(r).includes(key));
      return true;
    }
    if (ARROWS.includes(key)) {
      event.preventDefault(); // an arrow that names no answer: keep the browser from picking a neighbour
      return true;
    }
    return false;
  },
});
