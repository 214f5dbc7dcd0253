// On a narrow screen a table wider than its column turns into one card per row (dlbench.css):
// each cell is shown under its column's header, so a phone sees every number without scrolling sideways.
// Runs on every page change (document$) and when the window's width changes.
(function () {
  function label(table) {
    if (!table.tHead || table.dataset.labelled) return;
    var headers = Array.prototype.map.call(table.tHead.rows[0].cells,
      function (th) { return th.textContent.replace(/[▲▼]/g, "").trim(); });
    Array.prototype.forEach.call(table.tBodies, function (body) {
      Array.prototype.forEach.call(body.rows, function (row) {
        Array.prototype.forEach.call(row.cells, function (cell, index) {
          if (headers[index]) cell.setAttribute("data-label", headers[index]);
        });
      });
    });
    table.dataset.labelled = "true";
  }
  // Cards on a phone or a narrow window only: a desktop keeps its tables (sortable by their
  // headers), scrolling sideways where one is wider than the page.
  var narrow = window.matchMedia("(max-width: 59.984375em)");
  function fit() {
    document.querySelectorAll("article table").forEach(function (table) {
      label(table);
      var column = table.closest(".md-typeset__scrollwrap") || table.parentElement;
      table.removeAttribute("data-cards");
      // The column may reach past the screen (Material's negative margins): the table must
      // end within both.
      var right = Math.min(column.getBoundingClientRect().right,
                           document.documentElement.clientWidth);
      if (narrow.matches && table.offsetParent !== null
          && table.getBoundingClientRect().left + table.scrollWidth > right + 1)
        table.setAttribute("data-cards", "true");
    });
  }
  var pending = null;
  window.addEventListener("resize", function () {
    clearTimeout(pending);
    pending = setTimeout(fit, 100);
  });
  // A folded block (details) lays its tables out when it opens.
  document.addEventListener("toggle", fit, true);
  if (window.document$) { window.document$.subscribe(fit); }
  else { document.addEventListener("DOMContentLoaded", fit); }
})();
