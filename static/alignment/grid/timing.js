// Active time: seconds while the page is visible and was used in the last minute.
// Returns a function that reads the count (starting from `initial`, e.g. a draft's).

export function trackActiveTime(initial, readonly) {
  var active = +initial || 0, lastActivity = Date.now();
  ["pointermove", "pointerdown", "keydown", "wheel"].forEach(function (type) {
    document.addEventListener(type, function () { lastActivity = Date.now(); }, { passive: true });
  });
  if (!readonly) {
    window.setInterval(function () {
      if (document.visibilityState === "visible" && Date.now() - lastActivity < 60000) active += 1;
    }, 1000);
  }
  return function () { return active; };
}
