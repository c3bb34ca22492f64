// The side-by-side comparison page: keyboard-only answers, active-time measurement
// and double-submit protection. The page works without this script (plain form).
//
// Keys (as on the absolute page, with arrows for the three answers):
// ← or 1: A (left) is better; ↓ or 2: about the same; → or 3: B (right) is better —
// on the current question, then on to the next one; Enter submits once every
// question has an answer; B or Backspace goes back to the previous pair; ? opens
// the instructions. Arrow keys never move between radio buttons here (the browser's
// own behaviour would pick a neighbouring answer instead of the one the arrow names).

const form = document.getElementById("rating-form");
const groups = form ? Array.from(form.querySelectorAll("[data-criterion]")) : [];
const statusLine = document.getElementById("rate-status");
const previousLink = document.getElementById("previous-link");
const instructionsLink = document.getElementById("instructions-link");
// The page's language: the template puts each message, translated, in a data-msg-* attribute.
const msg = (name, fallback) => (form && form.dataset[name]) || fallback;
const DONE_TEXT = msg("msgDone", "Every question has an answer: press Enter to submit.");
let current = 0;

function radiosOf(group) {
  return Array.from(group.querySelectorAll('input[type="radio"]'));
}

function answered(group) {
  return group.querySelector('input[type="radio"]:checked') !== null;
}

function firstUnset() {
  return groups.findIndex((g) => !answered(g));
}

function allSet() {
  return groups.length > 0 && firstUnset() === -1;
}

function say(text) {
  if (statusLine) statusLine.textContent = text;
}

function setCurrent(index, { focus = true } = {}) {
  current = Math.max(0, Math.min(index, groups.length - 1));
  groups.forEach((g, i) => g.classList.toggle("is-current", i === current));
  if (focus) {
    const radios = radiosOf(groups[current]);
    const target = radios.find((r) => r.checked) || radios[0];
    if (target) target.focus({ preventScroll: false });
  }
}

function answer(match) {
  const radio = radiosOf(groups[current]).find(match);
  if (!radio) return false;
  radio.checked = true;
  radio.dispatchEvent(new Event("change", { bubbles: true }));
  if (current < groups.length - 1) {
    setCurrent(current + 1);
  } else {
    groups.forEach((g) => g.classList.remove("is-current"));
    document.getElementById("submit-button").focus();
  }
  say(allSet() ? DONE_TEXT : "");
  return true;
}

function submitIfComplete() {
  if (!allSet()) {
    say(msg("msgMissing", "Answer every question first."));
    setCurrent(firstUnset());
    return;
  }
  if (typeof form.requestSubmit === "function") form.requestSubmit();
  else form.submit();
}

// --- active time: the page counts only while it is visible and focused ----------------
let activeMs = 0;
let activeSince = document.visibilityState === "visible" && document.hasFocus() ? performance.now() : null;

function pauseClock() {
  if (activeSince !== null) {
    activeMs += performance.now() - activeSince;
    activeSince = null;
  }
}

function resumeClock() {
  if (activeSince === null && document.visibilityState === "visible") activeSince = performance.now();
}

window.addEventListener("blur", pauseClock);
window.addEventListener("focus", resumeClock);
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") resumeClock();
  else pauseClock();
});

if (form) {
  let sent = false;
  form.addEventListener("submit", (event) => {
    if (sent) {
      event.preventDefault();
      return;
    }
    if (!allSet()) {
      event.preventDefault();
      submitIfComplete();
      return;
    }
    pauseClock();
    form.elements.active_seconds.value = (activeMs / 1000).toFixed(2);
    sent = true;
    document.getElementById("submit-button").setAttribute("aria-disabled", "true");
    say(msg("msgSaving", "Saving…"));
  });
  form.addEventListener("focusin", (event) => {
    const index = groups.findIndex((g) => g.contains(event.target));
    if (index >= 0) setCurrent(index, { focus: false });
  });
  form.addEventListener("change", () => say(allSet() ? DONE_TEXT : ""));
  const start = firstUnset();
  setCurrent(start === -1 ? 0 : start);
}

document.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const tag = event.target && event.target.tagName;
  if (tag === "TEXTAREA" || (tag === "INPUT" && event.target.type !== "radio")) return;
  const key = event.key;
  if (form && groups.length && ["1", "2", "3"].includes(key)) {
    event.preventDefault();
    answer((r) => r.dataset.key === key);
  } else if (form && groups.length && ["ArrowLeft", "ArrowDown", "ArrowRight"].includes(key)) {
    event.preventDefault();
    answer((r) => r.dataset.arrow === key);
  } else if (form && key === "ArrowUp") {
    event.preventDefault(); // no answer is "up"; keep the browser from picking a neighbour
  } else if (form && key === "Enter") {
    if (tag === "A") return;
    event.preventDefault();
    submitIfComplete();
  } else if (key === "b" || key === "B" || key === "Backspace") {
    if (previousLink) {
      event.preventDefault();
      window.location.assign(previousLink.href);
    }
  } else if (key === "?") {
    if (instructionsLink) {
      event.preventDefault();
      window.location.assign(instructionsLink.href);
    }
  }
});
