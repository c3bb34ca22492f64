// The grid's messages in the page's language. The template (alignment/_grid.html) puts each
// one, translated, in a data-msg-* attribute of #grid-messages (the CSP allows no inline
// script); the English text here is the fallback when the attribute is missing.
// Placeholders ({name}, {kind}, {size}, {detail}, {status}, …) are filled from `values`.

var box = typeof document === "undefined" ? null : document.getElementById("grid-messages");

export function msg(name, fallback, values) {
  var text = (box && box.dataset[name]) || fallback;
  if (!values) return text;
  return text.replace(/\{(\w+)\}/g, function (whole, key) {
    return Object.prototype.hasOwnProperty.call(values, key) ? String(values[key]) : whole;
  });
}
