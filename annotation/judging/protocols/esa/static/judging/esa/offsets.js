// Offsets of the error span page. The server stores spans in code points of the text,
// end exclusive (metrics/core/spans/offsets.py); a browser's selections and strings count
// UTF-16 code units, where a character above U+FFFF (most emoji) is two units. These
// functions convert between the two and keep a span on whole characters (grapheme
// clusters: a letter with its combining marks, an emoji sequence), as the server checks.

const isHigh = (c) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c) => c >= 0xdc00 && c <= 0xdfff;

// The code point offset of UTF-16 offset `u` of `text` (an offset inside a surrogate pair
// counts the pair as one code point not yet passed).
export function utf16ToCodePoint(text, u) {
  let cp = 0;
  let i = 0;
  while (i < u && i < text.length) {
    i += isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
    if (i <= u) cp += 1;
  }
  return cp;
}

// The UTF-16 offset of code point offset `cp` of `text`.
export function codePointToUtf16(text, cp) {
  let i = 0;
  for (let k = 0; k < cp && i < text.length; k += 1) {
    i += isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
  }
  return i;
}

// The UTF-16 offsets between grapheme clusters of `text`, 0 and text.length included.
export function graphemeBounds(text) {
  const out = [0];
  if (typeof Intl !== "undefined" && Intl.Segmenter) {
    for (const s of new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(text)) {
      if (s.index > 0) out.push(s.index);
    }
  } else {
    for (let i = 0; i < text.length; ) {
      i += isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
      out.push(i);
    }
    out.pop();
  }
  if (out[out.length - 1] !== text.length) out.push(text.length);
  return out;
}

// [start, end) in UTF-16 units widened to whole characters and trimmed of spaces at
// either end; null when nothing but spaces is left.
export function snapSelection(text, start, end) {
  const bounds = graphemeBounds(text);
  let s = Math.max(...bounds.filter((b) => b <= start));
  let e = Math.min(...bounds.filter((b) => b >= end));
  while (s < e && /\s/.test(text[s])) s = bounds.find((b) => b > s);
  while (e > s && /\s/.test(text[e - 1])) e = Math.max(...bounds.filter((b) => b < e));
  return s < e ? [s, e] : null;
}

// The words of `text` as [start, end) UTF-16 offsets: every run that is not white space
// (a word with its combining marks, or a punctuation mark), in reading order.
export function wordOffsets(text) {
  const out = [];
  if (typeof Intl !== "undefined" && Intl.Segmenter) {
    for (const s of new Intl.Segmenter(undefined, { granularity: "word" }).segment(text)) {
      if (!/^\s+$/.test(s.segment)) out.push([s.index, s.index + s.segment.length]);
    }
  } else {
    for (const m of text.matchAll(/\S+/gu)) out.push([m.index, m.index + m[0].length]);
  }
  return out;
}

// A span of the server (code points) as UTF-16 offsets of `text`, and back.
export function spanToUtf16(text, start, end) {
  return [codePointToUtf16(text, start), codePointToUtf16(text, end)];
}

export function spanFromUtf16(text, start, end) {
  return [utf16ToCodePoint(text, start), utf16ToCodePoint(text, end)];
}
