// The side-by-side comparison page: keyboard-only answers, active-time measurement
// and double-submit protection (judge_form.js, shared with the rating page). The page
// works without this script (plain form).
//
// Keys (as on the absolute page, with arrows for the three answers):
// ← or 1: A (left) is better; ↓ or 2: about the same; → or 3: B (right) is better —
// on the current question, then on to the next one; Enter submits once every
// question has an answer; B or Backspace goes back to the previous pair; ? opens
// the instructions. Arrow keys never move between radio buttons here (the browser's
// own behaviour would pick a neighbouring answer instead of the one the arrow names).
import { judgeForm } from "./judge_form.js";

judgeForm({
  doneText: "Every question has an answer: press Enter to submit.",
  missingText: "Answer every question first.",
  onKey: (event, key, page) => {
    if (!page.form) return false;
    if (page.groups.length && ["1", "2", "3"].includes(key)) {
      event.preventDefault();
      page.answer((r) => r.dataset.key === key);
    } else if (page.groups.length && ["ArrowLeft", "ArrowDown", "ArrowRight"].includes(key)) {
      event.preventDefault();
      page.answer((r) => r.dataset.arrow === key);
    } else if (key === "ArrowUp") {
      event.preventDefault(); // no answer is "up"; keep the browser from picking a neighbour
    } else {
      return false;
    }
    return true;
  },
});
