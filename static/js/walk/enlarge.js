// One head of an attention grid, enlarged in the page's <dialog id="enlarge">: first the
// overview's (possibly downsampled) copy, then, when the grid was pooled, every value.

import { axisName, plot, traceTitle } from "../lib/figures.js";
import { t } from "../lib/words.js";

/** One heatmap of a grid, alone, on full axes (its subplot's axis settings kept). */
function singleTraceFigure(figure, curveNumber) {
  const trace = figure.data[curveNumber];
  const layout = figure.layout || {};
  const xaxis = { ...(layout[axisName(trace.xaxis, "x")] || {}), domain: [0, 1], anchor: "y" };
  const yaxis = { ...(layout[axisName(trace.yaxis, "y")] || {}), domain: [0, 1], anchor: "x", scaleanchor: undefined };
  const single = { ...trace, xaxis: "x", yaxis: "y", showscale: !trace.coloraxis };
  const { annotations, ...rest } = layout;
  const out = { ...rest, xaxis, yaxis, title: { text: traceTitle(figure, curveNumber) }, height: undefined };
  for (const key of Object.keys(out)) if (/^[xy]axis\d+$/.test(key)) delete out[key];
  return { data: [single], layout: out };
}

let enlargeTicket = 0; // the latest enlarge: a slower, older load must not replace it

async function drawEnlarged(target, single, onClick) {
  window.Plotly.purge(target);
  single.layout.height = Math.max(360, Math.min(window.innerHeight * 0.78, window.innerWidth * 0.7));
  await plot(target, single, onClick && ((point) => onClick(point, single)));
}

/** Opens the enlarge dialog on one head; `onClick(point, shownFigure)` gets clicks inside it.
 * `load()` is given when the grid is a downsampled overview: it resolves to the head's
 * full-resolution entry (the head route), drawn in place of the overview's copy, which
 * shows meanwhile. `#enlarge[data-resolution]` says which one is on screen. */
export async function enlarge(figure, curveNumber, { hint = "", onClick = null, load = null } = {}) {
  const ticket = ++enlargeTicket;
  const dialog = document.getElementById("enlarge");
  const target = document.getElementById("enlarge-plot");
  const status = document.getElementById("enlarge-status");
  document.getElementById("enlarge-title").textContent =
    `${figure.layout.title?.text || ""} — ${traceTitle(figure, curveNumber)}`.replace(/^ — /, "");
  document.getElementById("enlarge-hint").textContent = hint;
  status.textContent = load ? t("js-enlarge-loading") : "";
  dialog.dataset.resolution = load ? "loading" : "full";
  if (!dialog.open) dialog.showModal();
  const full = load?.(); // starts now, while the overview's copy is drawn
  await drawEnlarged(target, singleTraceFigure(figure, curveNumber), onClick);
  if (!full) return;
  let entry;
  try {
    entry = await full;
  } catch (error) {
    if (ticket !== enlargeTicket) return;
    dialog.dataset.resolution = "pooled";
    status.textContent = t("js-enlarge-failed", { error: error.message });
    return;
  }
  if (ticket !== enlargeTicket || !dialog.open) return;
  await drawEnlarged(
    target,
    { data: entry.figure.data, layout: { ...entry.figure.layout, title: { text: traceTitle(figure, curveNumber) } } },
    onClick,
  );
  const [rows, cols] = entry.heads.shape;
  dialog.dataset.resolution = "full";
  status.textContent = t("js-enlarge-full", { rows, cols });
}

export function wireEnlargeDialog() {
  const dialog = document.getElementById("enlarge");
  document.getElementById("enlarge-close").addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    enlargeTicket += 1; // a load still under way draws nothing
    window.Plotly.purge(document.getElementById("enlarge-plot"));
  });
  // A click on the backdrop (outside the dialog box) closes it too.
  dialog.addEventListener("click", (event) => event.target === dialog && dialog.close());
}
