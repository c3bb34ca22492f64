// What the rating page (rate.js) and the side-by-side page (judging/side_by_side/side_by_side.js) share: the judge's
// answer form (#rating-form) driven by the keyboard, active-time measurement and
// double-submit protection. Each page stays usable without its script (plain form).
//
// The form holds one group per criterion or question ([data-criterion]); the current
// group is outlined (.is-current). Answering it moves on to the next one; Enter submits
// once every group has an answer (else says what is missing and goes there); B or
// Backspace (or the previous link's data-keys) goes back to the previous item; ? opens
// the instructions. The page's own
// answer keys come in through options.onKey.
//
// Messages are in the page's language: the template puts each one, translated, in a
// data-msg-* attribute of the form (msgDone, msgMissing, msgSaving).

// How the focus got where it is: by a pointer (a click or a tap, and whatever the page focused
// after it) or by the keyboard (Tab). A key press cannot tell: it makes the focused element
// :focus-visible before any handler runs.
let pointerLast = false;
document.addEventListener("pointerdown", () => { pointerLast = true; }, true);
document.addEventListener("keydown", (event) => { if (event.key === "Tab") pointerLast = false; }, true);

// Whether Enter on ``target`` should press it: a plain button the judge reached by keyboard
// (a card's "Move up", a span's "Delete"). One that a click or tap left focused does not take
// Enter, which still submits, as the page says (a click on "Accept" then Enter must not delete
// the next span).
export function keyboardButton(target) {
  return Boolean(target) && target.tagName === "BUTTON" && target.type === "button" && !pointerLast;
}

export function radiosOf(group) {
  return Array.from(group.querySelectorAll('input[type="radio"]'));
}

function checkedRadioSet(group) {
  return group.querySelector('input[type="radio"]:checked') !== null;
}

function checkedOrFirstRadio(group) {
  const radios = radiosOf(group);
  return radios.find((r) => r.checked) || radios[0];
}

// options:
//   doneText, missingText: the English fallbacks of msgDone and msgMissing;
//   isSet(group): whether the group has an answer (default: one of its radios is checked);
//   focusTarget(group): what to focus when the group becomes current (default: its checked
//     radio, else its first one);
//   onKey(event, key, page): the page's own keys, before the shared ones; called for a key
//     without Alt, Ctrl or Meta, outside text fields (a slider is not a text field). Return
//     true when the key is the page's, handled or not: the shared keys then leave it alone.
// Returns the page: {form, groups, current(), setCurrent(index, {focus}), followFocus(),
// answer(match)}; the listeners are in place, also when the page has no form (B and ?
// still work).
export function judgeForm({ doneText, missingText, isSet = checkedRadioSet, focusTarget = checkedOrFirstRadio, onKey }) {
  const form = document.getElementById("rating-form");
  const groups = form ? Array.from(form.querySelectorAll("[data-criterion]")) : [];
  const statusLine = document.getElementById("rate-status");
  const previousLink = document.getElementById("previous-link");
  const instructionsLink = document.getElementById("instructions-link");
  // The way back: the page's own keys (data-keys on the link: a protocol whose answers
  // use B goes back with Backspace only), else B or Backspace.
  const backKeys = previousLink && previousLink.dataset.keys ? previousLink.dataset.keys.split(" ")
    : ["b", "B", "Backspace"];
  const msg = (name, fallback) => (form && form.dataset[name]) || fallback;
  const DONE_TEXT = msg("msgDone", doneText);
  let current = 0;

  function firstUnset() {
    return groups.findIndex((g) => !isSet(g));
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
      const target = focusTarget(groups[current]);
      if (target) target.focus({ preventScroll: false });
    }
  }

  function groupIndexOf(element) {
    return groups.findIndex((g) => g.contains(element));
  }

  // The group that holds the focus becomes the current one (without moving the focus).
  function followFocus() {
    const index = groupIndexOf(document.activeElement);
    if (index >= 0) current = index;
  }

  // Check the current group's radio that match(radio) picks, then move on to the next
  // group (or to the submit button after the last). False if no radio matches.
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
      const missing = firstUnset();
      say(msg("msgMissing", missingText));
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

  const page = { form, groups, current: () => current, setCurrent, followFocus, answer };

  // --- keys ---------------------------------------------------------------------------
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const tag = event.target && event.target.tagName;
    const onSlider = tag === "INPUT" && event.target.type === "range";
    if (tag === "TEXTAREA" || (tag === "INPUT" && event.target.type !== "radio" && !onSlider)) return;
    const key = event.key;
    if (onKey && onKey(event, key, page)) return;
    if (form && key === "Enter") {
      if (tag === "A") return; // follow links normally
      if (keyboardButton(event.target)) return; // the button takes it: see keyboardButton
      event.preventDefault();
      submitIfComplete();
    } else if (backKeys.includes(key)) {
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
  // The keys work from here on: a test (or a script) waits for this mark before pressing one on
  // a page whose only script is this one (the end page: Backspace to the last item).
  document.documentElement.dataset.keysReady = "";

  return page;
}
