// The judge's rating page: keyboard-only rating, active-time measurement and
// double-submit protection (judge_form.js, shared with the comparison page). The page
// works without this script (plain form).
//
// Keys: a number key shown beside a choice (data-key) picks it on the current
// criterion and moves to the next one; on a slider the arrow keys move it (native
// range input) and Tab moves on; Enter submits once every criterion has a value;
// B or Backspace goes back to the previous item; ? opens the instructions.
//
// A slider that was never touched has no value: its name is taken away until the
// judge moves it, so an untouched slider is never sent as its midpoint. (Without
// this script the slider's position is sent as shown.)
import { judgeForm, radiosOf } from "../judge_form.js";

const form = document.getElementById("rating-form");
const groups = form ? Array.from(form.querySelectorAll("[data-criterion]")) : [];

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
  // A click or a tap on the thumb where it rests (50, unset) changes no value, so neither event
  // above comes: the press itself sets it, so that 50 can be given like any other value.
  slider.addEventListener("pointerup", () => sliderTouched(slider));
  // Arrow keys on an untouched slider: the first press counts as setting it.
  slider.addEventListener("keydown", (e) => {
    if (["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "PageUp", "PageDown", "Home", "End"].includes(e.key)) {
      setTimeout(() => sliderTouched(slider), 0);
    }
  });
});

judgeForm({
  doneText: "Every criterion has a value: press Enter to submit.",
  missingText: "Give every criterion a value first.",
  isSet: (group) => valueOf(group) !== null,
  // A slider takes the focus itself; a scale, its checked point or else its first one.
  focusTarget: (group) => {
    const slider = sliderOf(group);
    if (slider) return slider;
    const radios = radiosOf(group);
    return radios.find((r) => r.checked) || radios[0];
  },
  // A number key picks that point of the criterion that has the focus (or the current one).
  onKey: (event, key, page) => {
    const onSlider = event.target.tagName === "INPUT" && event.target.type === "range";
    if (!page.form || !/^[0-9]$/.test(key) || onSlider) return false;
    page.followFocus();
    if (radiosOf(page.groups[page.current()]).some((r) => r.dataset.key === key)) {
      event.preventDefault();
      page.answer((r) => r.dataset.key === key);
    }
    return true;
  },
});
