// Draws every chart of the page from the Vega-Lite spec kept in its div's data-spec
// attribute. Material's instant navigation swaps pages without reloading scripts, so this
// runs on every page change (document$) and skips charts that are already drawn.
(function () {
  // Charts drawn above a linked row (#r-...) push it down after the browser scrolled to it:
  // once they are drawn, the row the address names is scrolled back into view.
  function keepTargetInView() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (target) target.scrollIntoView();
  }
  function draw() {
    var drawing = [];
    document.querySelectorAll("div.dlbench-chart[data-spec]").forEach(function (div) {
      if (div.querySelector("svg, canvas") || div.dataset.state === "drawing") return;
      div.dataset.state = "drawing";
      var spec = JSON.parse(div.getAttribute("data-spec"));
      drawing.push(window.vegaEmbed(div, spec, { actions: false, renderer: "svg" })
        .then(function () { div.dataset.state = "drawn"; })
        .catch(function (error) {
          div.dataset.state = "failed";
          div.textContent = "This chart could not be drawn: " + error;
          throw error;
        }));
    });
    if (drawing.length) Promise.allSettled(drawing).then(keepTargetInView);
  }
  if (window.document$) { window.document$.subscribe(draw); }
  else { document.addEventListener("DOMContentLoaded", draw); }
})();
