// The grid's model, without the DOM: link kinds, the state array, labels, the link lists.
// The state is one Uint8Array of n1 × n2 cells (row-major), holding NONE, SURE or POSSIBLE.

export var NONE = 0, SURE = 1, POSSIBLE = 2;
export var STATE_TEXT = ["no link", "sure link", "possible link"];

// Fill target (n1 × n2) from {sure: [[i, j], ...], possible: [...]}; sure wins over possible.
export function load(target, links, n2) {
  target.fill(NONE);
  (links.possible || []).forEach(function (l) { target[l[0] * n2 + l[1]] = POSSIBLE; });
  (links.sure || []).forEach(function (l) { target[l[0] * n2 + l[1]] = SURE; });
}

// A repeated word gets its occurrence number, so that every cell's name is unique.
export function labels(tokens) {
  var count = {}, seen = {};
  tokens.forEach(function (t) { count[t] = (count[t] || 0) + 1; });
  return tokens.map(function (t) {
    if (count[t] === 1) return t;
    seen[t] = (seen[t] || 0) + 1;
    return t + " (" + seen[t] + ")";
  });
}

// The state as the two link lists the API takes.
export function linkLists(state, n2) {
  var sure = [], possible = [];
  for (var idx = 0; idx < state.length; idx++) {
    if (state[idx] === SURE) sure.push([(idx / n2) | 0, idx % n2]);
    else if (state[idx] === POSSIBLE) possible.push([(idx / n2) | 0, idx % n2]);
  }
  return { sure: sure, possible: possible };
}
