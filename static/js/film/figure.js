// The film's one figure (film.js): the loss over the run's steps above, every head's induction
// score in the middle, every head's previous-token score below, one shared step axis, and the
// scrubbed step as a vertical line across all three.

import { t } from "../lib/words.js";

// Layer 0's heads dashed, layer 1's solid, and so on alternating: a head keeps its colour in both
// score panels, so a previous-token head below and the induction head it feeds above read apart.
const HEAD_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];
const PANELS = [
  { axis: "y", domain: [0.7, 1] },
  { axis: "y2", domain: [0.36, 0.64] },
  { axis: "y3", domain: [0, 0.3] },
];

function headTraces(run, key, axis, showLegend) {
  const traces = [];
  const layers = run[key][0].length;
  const heads = run[key][0][0].length;
  for (let layer = 0; layer < layers; layer++)
    for (let head = 0; head < heads; head++)
      traces.push({
        type: "scatter",
        mode: "lines",
        x: run.step,
        y: run[key].map((byLayer) => byLayer[layer][head]),
        yaxis: axis,
        name: t("js-film-head", { layer, head }),
        legendgroup: `${layer}-${head}`,
        showlegend: showLegend,
        line: { width: 1.5, color: HEAD_COLOURS[head % HEAD_COLOURS.length], dash: layer % 2 ? "solid" : "dot" },
      });
  return traces;
}

/** The vertical line at `step` across every panel. */
export function stepLine(step) {
  return [
    { type: "line", xref: "x", yref: "paper", x0: step, x1: step, y0: 0, y1: 1, line: { color: "#222", width: 2 } },
  ];
}

/** The figure ({data, layout}) of a run's answer (GET /api/runs/{name}), the line at `step`,
 * `width` pixels wide: on a phone the legend's rows need room under the step axis. */
export function filmFigure(run, step, width) {
  const narrow = width < 600;
  const loss = { type: "scatter", mode: "lines", x: run.step, y: run.loss, yaxis: "y", name: t("js-film-loss") };
  loss.line = { color: "#111", width: 2 };
  const data = [loss, ...headTraces(run, "induction", "y2", true), ...headTraces(run, "previous", "y3", false)];
  const titles = ["js-film-loss", "js-film-induction", "js-film-previous"];
  const layout = {
    height: narrow ? 760 : 560,
    margin: { l: 56, r: 16, t: 24, b: narrow ? 200 : 44 },
    hovermode: "x unified",
    xaxis: { title: { text: t("js-film-step") }, anchor: "y3" },
    legend: { orientation: "h", y: narrow ? -0.12 : -0.14, yanchor: "top" },
    shapes: stepLine(step),
  };
  PANELS.forEach((panel, index) => {
    const name = index ? `yaxis${index + 1}` : "yaxis";
    layout[name] = {
      domain: panel.domain,
      title: { text: t(titles[index]), font: { size: narrow ? 11 : 14 } },
      zeroline: false,
    };
    if (index) layout[name].range = [0, 1];
  });
  return { data, layout };
}
