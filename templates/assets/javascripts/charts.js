// Draws every chart of the page from the Vega-Lite spec kept in its div's data-spec
// attribute. Material's instant navigation swaps pages without reloading scripts, so this
// runs on every page change (document$) and skips charts that are already drawn.
(function () {
  function draw() {
    document.querySelectorAll("div.dlbench-chart[data-spec]").forEach(function (div) {
      if (div.querySelector("svg, canvas") || div.dataset.state === "drawing") return;
      div.dataset.state = "drawing";
      var spec = JSON.parse(div.getAttribute("data-spec"));
      window.vegaEmbed(div, spec, { actions: false, renderer: "svg" })
        .then(function () { div.dataset.state = "drawn"; })
        .catch(function (error) {
          div.dataset.state = "failed";
          div.textContent = "This chart could not be drawn: " + error;
          throw error;
        });
    });
  }
  if (window.document$) { window.document$.subscribe(draw); }
  else { document.addEventListener("DOMContentLoaded", draw); }
})();
