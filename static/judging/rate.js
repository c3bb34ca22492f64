// The judge's rating page: keyboard-only rating, active-time measurement and
// double-submit protection. The page works without this script (plain form).
//
// Keys: a number key shown beside a choice (data-key) picks it on the current
// criterion and moves to the next one; on a slider the arrow keys move it (native
// range input) and Tab moves on; Enter submits once every criterion has a value;
// B or Backspace goes back to the previous item; ? opens the instructions.
//
// A slider that was never touched has no value: its name is taken away until the
// judge moves it, so an untouched slider is never sent as its midpoint. (Without
// this script the slider's position is sent as shown.)

const form = document.getElementById("rating-form");
const groups = form ? Array.from(form.querySelectorAll("[data-criterion]")) : [];
const statusLine = document.getElementById("rate-status");
const previousLink = document.getElementById("previous-link");
const instructionsLink = document.getElementById("instructions-link");
let current = 0;

function radiosOf(group) {
  return Array.from(group.querySelectorAll('input[type="radio"]'));
}

function sliderOf(group) {
  return group.querySelector('input[type="range"]');
}

function valueOf(group) {
  const slider = sliderOf(group);
  if (slider) return slider.dataset.unset ? null : slider.value;
  const checked = group.querySelector('input[type="radio"]:checked');
  return checked ? checked.value : null;
}

function sliderTouched(slider) {
  if (slider.dataset.unset) {
    delete slider.dataset.unset;
    slider.name = slider.dataset.name;
  }
  const out = document.getElementById(`${slider.dataset.name}-value`);
  if (out) out.textContent = slider.value;
  slider.setAttribute("aria-valuetext", slider.value);
}

groups.forEach((g) => {
  const slider = sliderOf(g);
  if (!slider) return;
  slider.dataset.name = slider.name;
  if (slider.dataset.unset) slider.removeAttribute("name");
  slider.addEventListener("input", () => sliderTouched(slider));
  slider.addEventListener("change", () => sliderTouched(slider));
  // Arrow keys on an untouched slider: the first press counts as setting it.
  slider.addEventListener("keydown", (e) => {
    if (["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "PageUp", "PageDown", "Home", "End"].includes(e.key)) {
      setTimeout(() => sliderTouched(slider), 0);
    }
  });
});

// The page's language: the template puts each message, translated, in a data-msg-* attribute.
const msg = (name, fallback) => (form && form.dataset[name]) || fallback;
const DONE_TEXT = msg("msgDone", "Every criterion has a value: press Enter to submit.");

function firstUnset() {
  return groups.findIndex((g) => valueOf(g) === null);
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
    const slider = sliderOf(groups[current]);
    if (slider) {
      slider.focus({ preventScroll: false });
      return;
    }
    const radios = radiosOf(groups[current]);
    const target = radios.find((r) => r.checked) || radios[0];
    if (target) target.focus({ preventScroll: false });
  }
}

function groupIndexOf(element) {
  return groups.findIndex((g) => g.contains(element));
}

function score(key) {
  const radio = radiosOf(groups[current]).find((r) => r.dataset.key === key);
  if (!radio) return;
  radio.checked = true;
  radio.dispatchEvent(new Event("change", { bubbles: true }));
  if (current < groups.length - 1) {
    setCurrent(current + 1);
  } else {
    groups.forEach((g) => g.classList.remove("is-current"));
    document.getElementById("submit-button").focus();
  }
  say(allSet() ? DONE_TEXT : "");
}

function submitIfComplete() {
  if (!allSet()) {
    const missing = firstUnset();
    say(msg("msgMissing", "Give every criterion a value first."));
    setCurrent(missing);
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
      event.preventDefault(); // a double press; the server would also ignore it (same key)
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
    const index = groupIndexOf(event.target);
    if (index >= 0) setCurrent(index, { focus: false });
  });

  form.addEventListener("change", () => {
    say(allSet() ? DONE_TEXT : "");
  });

  const start = firstUnset();
  setCurrent(start === -1 ? 0 : start);
}

document.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const tag = event.target && event.target.tagName;
  const onSlider = tag === "INPUT" && event.target.type === "range";
  if (tag === "TEXTAREA" || (tag === "INPUT" && event.target.type !== "radio" && !onSlider)) return;
  const key = event.key;
  if (form && /^[0-9]$/.test(key) && !onSlider) {
    const index = groupIndexOf(document.activeElement);
    if (index >= 0) current = index;
    if (radiosOf(groups[current]).some((r) => r.dataset.key === key)) {
      event.preventDefault();
      score(key);
    }
  } else if (form && key === "Enter") {
    if (event.target && event.target.tagName === "A") return; // follow links normally
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
