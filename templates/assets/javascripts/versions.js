// The version selector between releases: it keeps the reader's place, says what differs,
// and is in the navigation drawer too (on a phone the header has little room).
//
// Material's selector keeps the page and its #anchor, but a result anchor (#r-2027.01-0524)
// names the old release's ID, absent from the other; so this carries the cell's anchor
// (#c-..., the same in every release) and lands on it where the other release measured the
// cell. Where it did not, the page says so at its top instead of keeping a dead anchor. A
// row measured on another machine kind, another machine or with another configuration says
// so above its table (or just above the row where both do not fit on one screen, as on a
// phone), in view; a switch from no row says when the releases' machines differ. The
// release's name and machines come from the page's head (report/site/mkdocs_release.py).
(function () {
  var KEY = "dlbench-version-from";
  var LINKS = ".md-version__link, .dlbench-version-link";
  var FRESH_MS = 120000;  // a stored switch older than this was not followed by a landing

  function meta(name) {
    var tag = document.querySelector('meta[name="' + name + '"]');
    return tag ? tag.getAttribute("content") : "";
  }
  function machines() {
    try { return JSON.parse(meta("dlbench-machines") || "[]"); } catch (error) { return []; }
  }
  // A version's title as the selector shows it, without its alias ("latest").
  function titleOf(element) {
    var copy = element.cloneNode(true);
    copy.querySelectorAll(".md-version__alias").forEach(function (n) { n.remove(); });
    return copy.textContent.replace(/\s+/g, " ").trim();
  }
  function releaseName() {
    var current = document.querySelector(".md-version__current");
    return meta("dlbench-release") || (current ? titleOf(current) : "");
  }

  // What the reader is looking at: the release, its machines, and the row or section the
  // address names (its stable anchor and words, and for a row its machine and configuration).
  function whatIsHere() {
    var here = {release: releaseName(), machines: machines(), at: Date.now()};
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target) return here;
    var row = target.closest("tr");
    var cell = row && row.querySelector(".dlbench-cell");
    if (cell) {
      here.anchor = cell.dataset.anchor;
      here.row = {words: cell.dataset.words || "", kind: cell.dataset.kind || "",
                  machine: cell.dataset.machine || "", config: cell.dataset.config || ""};
    } else {
      here.anchor = id;
      here.section = (target.closest("h1, h2, h3, h4") || target).textContent
        .replace(/[¶#]\s*$/, "").trim();
    }
    return here;
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest(LINKS);
    if (!link || link.getAttribute("aria-current")) return;
    window.sessionStorage.setItem(KEY, JSON.stringify(whatIsHere()));
  }, true);

  // The switch the reader made to this page, once: null when none (or a stale one).
  function arrival() {
    var raw = window.sessionStorage.getItem(KEY);
    if (!raw) return null;
    window.sessionStorage.removeItem(KEY);
    var from;
    try { from = JSON.parse(raw); } catch (error) { return null; }
    if (!from || !from.release || from.release === releaseName() ||
        Date.now() - (from.at || 0) > FRESH_MS) return null;
    from.path = window.location.pathname;
    if (from.anchor) {
      if (document.getElementById(from.anchor)) {
        if (decodeURIComponent(window.location.hash.slice(1)) !== from.anchor) {
          window.location.replace("#" + from.anchor);
        }
      } else {  // not on this page in this release: no dead anchor, the page's top
        from.missing = true;
        window.history.replaceState(window.history.state, "",
                                    window.location.pathname + window.location.search);
        window.scrollTo(0, 0);
      }
    }
    return from;
  }

  function note(className, text) {
    var p = document.createElement("p");
    p.className = "dlbench-switch-note " + className;
    p.setAttribute("role", "note");
    p.textContent = text;
    return p;
  }
  function atTop(element) {
    var article = document.querySelector("article");
    if (!article) return;
    var title = article.querySelector("h1");
    if (title) title.insertAdjacentElement("afterend", element);
    else article.insertBefore(element, article.firstChild);
  }
  function rowWords(here, from) {
    var row = from.row || {};
    var kind = row.kind && here.kind && row.kind !== here.kind;
    var machine = !kind && row.machine && here.machine && row.machine !== here.machine;
    var config = row.config && here.config && row.config !== here.config;
    var said = [];
    if (kind || machine) said.push(kind ? "on another machine" : "on another machine of the same kind");
    if (config) said.push("with another configuration");
    if (!said.length) return "";
    var where = kind ? " (here on " + here.kind + ", there on " + row.kind + ")"
      : machine ? " (here on " + here.machine + ", there on " + row.machine + ")" : "";
    return "This row was measured " + said.join(" and ") + " than in release " + from.release +
      ", which you came from" + where + ": its numbers are not comparable with those.";
  }
  function machineWords(from) {
    var here = machines();
    if (!here.length || !(from.machines || []).length) return "";
    if (here.slice().sort().join("\n") === from.machines.slice().sort().join("\n")) return "";
    return "Release " + releaseName() + " was measured on " + here.join("; ") +
      "; release " + from.release + ", which you came from, on " + from.machines.join("; ") +
      ": numbers are not comparable between the two.";
  }

  // The note and the row it is about, both in view below the sticky header: the note
  // stays above the table where the two fit on one screen; where they do not (a long
  // table, or a phone's table of cards), the note moves into the table as a row of its
  // own just above the reader's row. Again on each call: a later scroll to the anchor
  // may have moved them.
  function reveal(said, row) {
    var header = document.querySelector(".md-header");
    var top = header ? Math.max(0, header.getBoundingClientRect().bottom) : 0;
    var room = window.innerHeight - top - 16;
    var box = said.getBoundingClientRect(), rowBox = row.getBoundingClientRect();
    if (box.top >= top && box.bottom <= window.innerHeight && rowBox.top < window.innerHeight &&
        rowBox.bottom > top) return;  // both in view already
    if (rowBox.bottom - box.top > room && !said.closest("tr")) {
      var line = document.createElement("tr");
      var cell = document.createElement("td");
      line.className = "dlbench-note-row";
      cell.colSpan = row.children.length || 1;
      cell.appendChild(said);
      line.appendChild(cell);
      row.parentNode.insertBefore(line, row);
    }
    var first = said.closest("tr") || said;
    window.scrollBy(0, first.getBoundingClientRect().top - top - 9);
    // then a last pixel down: after a scroll up, Material shows its back-to-top button
    // over the top of the page, where the note now is
    window.setTimeout(function () { window.scrollBy(0, 1); }, 100);
  }

  // Said once the page is in place (the hash change may redraw the content after this).
  function say(from) {
    if (!from || from.path !== window.location.pathname) return;
    var cell = from.anchor && !from.missing && document.getElementById(from.anchor);
    if (from.missing && !document.querySelector(".dlbench-unmeasured")) {
      var what = from.row ? "The row you came from (" + from.row.words + ")"
        : "The section you came from (" + (from.section || from.anchor) + ")";
      atTop(note("dlbench-unmeasured", what + " was not measured in release " +
                 releaseName() + "; this is the top of the same page."));
    }
    if (cell && from.row && cell.closest("tr")) {
      var text = rowWords(cell.dataset, from);
      if (text && !document.querySelector(".dlbench-unlike")) {
        var table = cell.closest("table");
        var place = (table && table.closest(".md-typeset__scrollwrap")) || table;
        if (place) place.parentNode.insertBefore(note("dlbench-unlike", text), place);
      }
      var said = document.querySelector(".dlbench-unlike");
      if (said) reveal(said, cell.closest("tr"));
      return;
    }
    var machineText = machineWords(from);
    if (machineText && !document.querySelector(".dlbench-other-machines")) {
      var other = note("dlbench-other-machines", machineText);
      var unmeasured = document.querySelector(".dlbench-unmeasured");
      if (unmeasured) unmeasured.insertAdjacentElement("afterend", other);
      else atTop(other);
    }
  }

  // The releases in the navigation drawer: the header's list, as links of the drawer.
  function drawerVersions() {
    var list = document.querySelector(".md-version__list");
    var nav = document.querySelector(".md-sidebar--primary .md-nav--primary");
    if (!list || !nav) return false;
    if (nav.parentNode.querySelector(".dlbench-drawer-versions")) return true;
    var current = document.querySelector(".md-version__current");
    var currentTitle = current ? titleOf(current) : "";
    var box = document.createElement("div");
    box.className = "dlbench-drawer-versions";
    var heading = document.createElement("span");
    heading.className = "dlbench-drawer-versions__title";
    heading.textContent = "Releases";
    var items = document.createElement("ul");
    list.querySelectorAll(".md-version__link").forEach(function (link) {
      var copy = link.cloneNode(true);
      copy.className = "md-nav__link dlbench-version-link";
      if (titleOf(link) === currentTitle) copy.setAttribute("aria-current", "page");
      var item = document.createElement("li");
      item.appendChild(copy);
      items.appendChild(item);
    });
    box.appendChild(heading);
    box.appendChild(items);
    // above the navigation, not inside it: a section's page opens the drawer on that
    // section's panel, which covers the navigation's top level
    nav.parentNode.insertBefore(box, nav);
    nav.parentNode.style.setProperty("--dlbench-drawer-versions", box.offsetHeight + "px");
    return true;
  }
  function drawerWhenReady(tries) {
    if (!drawerVersions() && tries > 0 && document.querySelector("meta[name=dlbench-release]")) {
      window.setTimeout(function () { drawerWhenReady(tries - 1); }, 250);
    }
  }

  var from;  // undefined until the first page of this load
  function onPage() {
    if (from === undefined) from = arrival();
    else if (from && from.path !== window.location.pathname) from = null;  // read on, moved
    say(from);
    window.setTimeout(function () { say(from); }, 1000);
    drawerWhenReady(40);
  }
  if (window.document$) { window.document$.subscribe(onPage); }
  else { document.addEventListener("DOMContentLoaded", onPage); }
})();
