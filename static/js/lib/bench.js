// The engineer's bench under a figure: its colour scale (lib/scales.js) and the whole tensor's
// numbers (lib/stats.js). figureCard (lib/figures.js) draws `shown()` and puts `element` under
// the plot; a change of scale redraws through `redraw`.

import { h } from "./dom.js";
import { chosenScale, scaleControl, scaledFigure } from "./scales.js";
import { statsLine } from "./stats.js";

export function figureBench(figure, drawn, redraw) {
  let scale = chosenScale(figure.id, drawn);
  const control = scaleControl(figure.id, drawn, (chosen) => {
    scale = chosen;
    redraw();
  });
  const stats = statsLine(figure.stats);
  const element = control || stats ? h("div", { className: "figure-bench" }, control, stats) : null;
  return { element, shown: () => scaledFigure(drawn, scale) };
}
