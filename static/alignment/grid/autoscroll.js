// Auto-scroll while a drag is near an edge of the grid's visible area, or beyond it:
// the grid's scroll container scrolls, or the window when the grid is cut off by it.

var EDGE = 36, MAX_SPEED = 1400; // px from the edge where scrolling starts; px/s at full speed

// Speed (px/s, signed) for a pointer at p between edges lo and hi: it grows as the
// pointer nears an edge, and is fastest EDGE px beyond it.
export function speed(p, lo, hi) {
  var depth = p < lo + EDGE ? -(lo + EDGE - p) : p > hi - EDGE ? p - (hi - EDGE) : 0;
  if (!depth) return 0;
  return Math.max(-1, Math.min(1, depth / (2 * EDGE))) * MAX_SPEED;
}

// hooks: pointer() → the drag in progress ({x, y}) or null; area() → the visible area
// (see visibleArea in grid.js); track() → follow the pointer after a scroll.
export function makeAutoScroll(scroller, hooks) {
  var scrollFrame = 0, lastFrame = 0, carry = { x: 0, y: 0 };
  function start() {
    if (!scroller || scrollFrame) return;
    lastFrame = 0;
    carry.x = carry.y = 0;
    scrollFrame = window.requestAnimationFrame(frame);
  }
  function stop() {
    if (scrollFrame) window.cancelAnimationFrame(scrollFrame);
    scrollFrame = 0;
  }
  // One axis: scroll the window if the grid is cut off by the window on that side and
  // the window can move, else the grid's own scroll container.
  function scrollAxis(axis, v, dt, a) {
    var px = v * dt / 1000 + carry[axis];
    var step = px < 0 ? Math.ceil(px) : Math.floor(px);
    carry[axis] = px - step;
    if (!step) return false;
    var y = axis === "y";
    var cutOff = step > 0 ? (y ? a.bottom > a.vh : a.right > a.vw) : (y ? a.top < 0 : a.left < 0);
    if (cutOff) {
      var before = y ? window.scrollY : window.scrollX;
      window.scrollBy(y ? 0 : step, y ? step : 0);
      if ((y ? window.scrollY : window.scrollX) !== before) return true;
    }
    var prop = y ? "scrollTop" : "scrollLeft", was = scroller[prop];
    scroller[prop] = was + step;
    return scroller[prop] !== was;
  }
  function frame(now) {
    scrollFrame = 0;
    var drag = hooks.pointer();
    if (!drag) return;
    var dt = lastFrame ? Math.min(now - lastFrame, 100) : 16;
    lastFrame = now;
    var a = hooks.area();
    var moved = scrollAxis("x", speed(drag.x, a.vLeft, a.vRight), dt, a);
    moved = scrollAxis("y", speed(drag.y, a.vTop, a.vBottom), dt, a) || moved;
    if (moved) hooks.track();
    scrollFrame = window.requestAnimationFrame(frame);
  }
  return { start: start, stop: stop };
}
