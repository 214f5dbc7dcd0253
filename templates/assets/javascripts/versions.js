// Keeps the reader's place when the version selector switches releases. Material's
// selector keeps the address's #anchor, but a result anchor (#r-2027.01-0524) names the
// old release's ID, absent from the other; so this carries the cell's anchor (#c-..., the
// same in every release) and scrolls to it where the other version measured the cell.
(function () {
  var KEY = "dlbench-version-anchor";
  var FROM = "dlbench-version-from";
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
    if (!anchor) return;
    window.sessionStorage.setItem(KEY, anchor);
    var cell = document.getElementById(anchor);
    var current = document.querySelector(".md-version__current");
    window.sessionStorage.setItem(FROM, JSON.stringify({
      machine: (cell && cell.dataset.machine) || "", config: (cell && cell.dataset.config) || "",
      release: current ? current.textContent.trim() : "the other release"}));
  }, true);
  function restore() {
    var anchor = window.sessionStorage.getItem(KEY);
    if (!anchor) return;
    window.sessionStorage.removeItem(KEY);
    // Material keeps the old hash, which names the other release's result ID: replace it
    // by the cell's anchor when this page has the cell, and leave the page alone otherwise.
    var current = decodeURIComponent(window.location.hash.slice(1));
    if ((!current || !document.getElementById(current)) && document.getElementById(anchor)) {
      pending = {anchor: anchor, path: window.location.pathname,
                 from: JSON.parse(window.sessionStorage.getItem(FROM) || "null")};
      window.sessionStorage.removeItem(FROM);
      window.location.replace("#" + anchor);
    }
  }
  // Said once the page is in place: the hash change may redraw the content after this.
  var pending = null;
  function showPending() {
    if (!pending || pending.path !== window.location.pathname) return;
    var cell = document.getElementById(pending.anchor);
    if (cell && !document.querySelector(".dlbench-unlike")) sayWhenUnlike(cell, pending.from);
  }
  // A cell of the same name measured on another machine or with another configuration is
  // not the same measurement: say so above its table, in words.
  function sayWhenUnlike(cell, from) {
    if (!from || !cell.dataset) return;
    var machine = from.machine && cell.dataset.machine && from.machine !== cell.dataset.machine;
    var config = from.config && cell.dataset.config && from.config !== cell.dataset.config;
    if (!machine && !config) return;
    var note = document.createElement("p");
    note.className = "dlbench-unlike";
    note.textContent = "This cell was measured " + (machine ? "on another machine (" +
      cell.dataset.machine + ", against " + from.machine + ")" : "") +
      (machine && config ? " and " : "") + (config ? "with another configuration" : "") +
      " than in " + from.release + ": its numbers are not comparable with those.";
    var table = cell.closest("table");
    var place = (table && table.closest(".md-typeset__scrollwrap")) || table;
    if (place) place.parentNode.insertBefore(note, place);
  }
  function onPage() {
    restore();
    showPending();
    window.setTimeout(showPending, 1000);
  }
  if (window.document$) { window.document$.subscribe(onPage); }
  else { document.addEventListener("DOMContentLoaded", onPage); }
})();
