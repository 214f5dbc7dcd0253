// Keeps the reader's place when the version selector switches releases. Material's
// selector keeps the address's #anchor, but a result anchor (#r-2027.01-0524) names the
// old release's ID, absent from the other; so this carries the cell's anchor (#c-..., the
// same in every release) and scrolls to it where the other version measured the cell.
(function () {
  var KEY = "dlbench-version-anchor";
  function stableAnchor() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target) return "";
    var row = target.closest("tr");
    var cell = row && row.querySelector(".dlbench-cell[id]");
    return cell ? cell.id : id;
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest(".md-version__link");
    var anchor = link && stableAnchor();
    if (anchor) window.sessionStorage.setItem(KEY, anchor);
  }, true);
  function restore() {
    var anchor = window.sessionStorage.getItem(KEY);
    if (!anchor) return;
    window.sessionStorage.removeItem(KEY);
    // Material keeps the old hash, which names the other release's result ID: replace it
    // by the cell's anchor when this page has the cell, and leave the page alone otherwise.
    var current = decodeURIComponent(window.location.hash.slice(1));
    if ((!current || !document.getElementById(current)) && document.getElementById(anchor)) {
      window.location.replace("#" + anchor);
    }
  }
  if (window.document$) { window.document$.subscribe(restore); }
  else { document.addEventListener("DOMContentLoaded", restore); }
})();
