// Sortable tables without a third-party library: click a column header to sort by it,
// click again to reverse. Numbers (including "1,234" and "0.41 s") sort numerically.
(function () {
  function key(cell) {
    var text = cell.textContent.trim();
    var number = parseFloat(text.replace(/,/g, ""));
    return isNaN(number) || !/^[-+]?[\d.,]/.test(text) ? text.toLowerCase() : number;
  }
  function compare(a, b) {
    if (typeof a === typeof b) return a < b ? -1 : a > b ? 1 : 0;
    return typeof a === "number" ? -1 : 1;
  }
  function sortBy(table, index, header) {
    var body = table.tBodies[0];
    var descending = header.getAttribute("aria-sort") === "ascending";
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r1, r2) {
      var order = compare(key(r1.cells[index]), key(r2.cells[index]));
      return descending ? -order : order;
    });
    table.querySelectorAll("th").forEach(function (th) { th.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
    rows.forEach(function (row) { body.appendChild(row); });
  }
  function enable() {
    document.querySelectorAll("article table:not([data-sortable])").forEach(function (table) {
      if (!table.tHead || !table.tBodies.length) return;
      table.setAttribute("data-sortable", "true");
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
        th.setAttribute("role", "button");
        th.setAttribute("title", "Sort by this column");
        th.addEventListener("click", function () { sortBy(table, index, th); });
      });
    });
  }
  if (window.document$) { window.document$.subscribe(enable); }
  else { document.addEventListener("DOMContentLoaded", enable); }
})();
