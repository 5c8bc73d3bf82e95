// The engineer's bench under a figure: its colour scale (lib/scales.js), the whole tensor's
// numbers (lib/stats.js) and, for a whole recorded tensor, every one of its values a page at a
// time (walk/numbers.js, built when first opened). figureCard (lib/figures.js) draws `shown()`
// and puts `element` under the plot; a change of scale redraws through `redraw`.

import { numbersPager } from "../walk/numbers.js";
import { h } from "./dom.js";
import { chosenScale, scaleControl, scaledFigure } from "./scales.js";
import { statsLine } from "./stats.js";
import { t } from "./words.js";

export function figureBench(figure, drawn, redraw) {
  let scale = chosenScale(figure.id, drawn);
  const control = scaleControl(figure.id, drawn, (chosen) => {
    scale = chosen;
    redraw();
  });
  const stats = statsLine(figure.stats);
  const pager = figure.download && figure.stats ? wholeTensor(figure) : null;
  const element = control || stats ? h("div", { className: "figure-bench" }, control, stats, pager) : null;
  return { element, shown: () => scaledFigure(drawn, scale) };
}

/** "Every value": the numbers pager of the figure's whole tensor, made when first opened. */
function wholeTensor(figure) {
  const details = h("details", { className: "numbers-whole" }, h("summary", { text: t("js-bench-every-value") }));
  details.addEventListener("toggle", () => {
    if (details.open && !details.querySelector(".numbers-pager"))
      details.append(numbersPager(figure.download, figure.stats));
  });
  return details;
}
