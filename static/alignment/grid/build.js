// Build the grid's table: a header row of sentence 2's words, a header cell of sentence
// 1's word on every row, and one <button> per cell (tabindex -1: the grid's roving
// tabindex gives one of them 0). Text goes in with textContent only: tokens are user data.

export function buildTable(table, t1, t2, lab1, lab2, cornerLabel) {
  var n1 = t1.length, n2 = t2.length;
  var cells = new Array(n1 * n2), rows = [], rowHeads = [], cols = [], colHeads = [];
  var colgroup = document.createElement("colgroup");
  colgroup.appendChild(document.createElement("col"));
  var thead = document.createElement("thead"), htr = document.createElement("tr");
  var corner = document.createElement("th");
  corner.className = "corner";
  corner.scope = "col";
  var cornerText = document.createElement("span");
  cornerText.className = "visually-hidden";
  cornerText.textContent = cornerLabel || "Sentence 1 \\ sentence 2";
  corner.appendChild(cornerText);
  htr.appendChild(corner);
  for (var j = 0; j < n2; j++) {
    var col = document.createElement("col");
    cols.push(col);
    colgroup.appendChild(col);
    var th = document.createElement("th");
    th.scope = "col";
    th.className = "colhead";
    th.dataset.j = j;
    th.title = lab2[j];
    var span = document.createElement("span");
    span.textContent = t2[j];
    th.appendChild(span);
    colHeads.push(th);
    htr.appendChild(th);
  }
  thead.appendChild(htr);
  var tbody = document.createElement("tbody");
  for (var i = 0; i < n1; i++) {
    var tr = document.createElement("tr");
    var rh = document.createElement("th");
    rh.scope = "row";
    rh.className = "rowhead";
    rh.dataset.i = i;
    rh.title = lab1[i];
    rh.textContent = t1[i];
    tr.appendChild(rh);
    rowHeads.push(rh);
    for (var k = 0; k < n2; k++) {
      var td = document.createElement("td");
      var b = document.createElement("button");
      b.type = "button";
      b.tabIndex = -1;
      b.dataset.i = i;
      b.dataset.j = k;
      cells[i * n2 + k] = b;
      td.appendChild(b);
      tr.appendChild(td);
    }
    rows.push(tr);
    tbody.appendChild(tr);
  }
  table.appendChild(colgroup);
  table.appendChild(thead);
  table.appendChild(tbody);
  return { cells: cells, rows: rows, rowHeads: rowHeads, cols: cols, colHeads: colHeads };
}
