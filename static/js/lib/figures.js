// Figures: Plotly JSON from the server drawn with Plotly.newPlot, each with a "numbers"
// table (the same data, readable by a screen reader); the helpers the step views share.

import { figureBench } from "./bench.js";
import { clear, formatNumber, h } from "./dom.js";
import { downloadLinks } from "./download.js";
import { NARROW, stackPanels } from "./stack.js";
import { t } from "./words.js";

// The app works offline: the toolbar keeps only what works without a network (PNG download,
// zoom, reset); no "Share chart…" to Plotly Cloud, no logo, no link out.
const PLOT_CONFIG = {
  responsive: true,
  displaylogo: false,
  showSendToCloud: false,
  showEditInChartStudio: false,
  showLink: false,
  plotlyServerURL: "",
  modeBarButtons: [["toImage", "zoom2d", "resetScale2d"]],
  toImageButtonOptions: { format: "png", scale: 2 },
};
// Plotly's own words (its mode bar) in the page's language: walk.html loads the vendored locale
// (app/vendor/plotly/plotly-locale-<lang>.js) for a language other than English.
const PAGE_LANG = document.documentElement.lang || "en";
if (PAGE_LANG !== "en") PLOT_CONFIG.locale = PAGE_LANG;
const DEFAULT_FONT = 14;
const MIN_FONT = 14; // no figure text smaller than this (a projector at the back of a room)
const DEFAULT_HEIGHT = 420;

function fontScale() {
  return document.documentElement.classList.contains("large-type") ? 1.3 : 1;
}

/** A font object with its size raised to at least `min` (absent sizes inherit the layout's). */
function atLeast(font, min) {
  return font && typeof font.size === "number" && font.size < min ? { ...font, size: min } : font;
}

/** Every explicit font size of the layout (annotations, axes, legend, colour bars) >= `min`. */
function raiseFonts(layout, min) {
  const out = { ...layout, hoverlabel: { ...(layout.hoverlabel || {}), font: { size: Math.max(min, 15) } } };
  if (Array.isArray(layout.annotations))
    out.annotations = layout.annotations.map((a) => (a.font ? { ...a, font: atLeast(a.font, min) } : a));
  for (const key of Object.keys(out)) {
    const part = out[key];
    if (!part || typeof part !== "object" || Array.isArray(part)) continue;
    if (/^([xy]axis\d*|legend|coloraxis\d*)$/.test(key)) {
      const raised = { ...part, tickfont: atLeast(part.tickfont, min), font: atLeast(part.font, min) };
      if (part.colorbar) raised.colorbar = { ...part.colorbar, tickfont: atLeast(part.colorbar.tickfont, min) };
      out[key] = raised;
    }
  }
  return out;
}

/** Plotly's toolbar buttons stay out of the tab order (8 stops per figure otherwise); the
 * page's own controls and the "Numbers" tables carry what a keyboard user needs. */
function untab(div) {
  for (const button of div.querySelectorAll(".modebar-btn")) button.setAttribute("tabindex", "-1");
}

/** The server's layout, fitted to its container and to the chosen type size. A legend
 * placed under the plot collides with the x-axis title: it goes above the plot instead. */
function pageLayout(layout, baseFont) {
  const { width, ...rest } = layout || {}; // the card decides the width
  const size = Math.max(MIN_FONT, Math.round(baseFont * fontScale()));
  const out = raiseFonts(
    { ...rest, autosize: true, height: rest.height || DEFAULT_HEIGHT, font: { ...(rest.font || {}), size } },
    MIN_FONT,
  );
  // Rotated tick labels must not run into the axis title: let plotly grow the margins.
  for (const key of new Set(["xaxis", "yaxis", ...Object.keys(out)])) {
    if (/^[xy]axis\d*$/.test(key) && out[key]?.automargin === undefined) out[key] = { ...out[key], automargin: true };
  }
  if (rest.legend && typeof rest.legend.y === "number" && rest.legend.y < 0) {
    out.legend = { ...rest.legend, x: 0, xanchor: "left", y: 1.02, yanchor: "bottom" };
    out.margin = { ...(rest.margin || {}), t: Math.max(44, rest.margin?.t || 0) };
  }
  return out;
}

/** A plot title as plain text (plotly titles may hold <br> and <b>). */
export function titleText(layout) {
  const title = layout?.title;
  const text = typeof title === "string" ? title : title?.text || "";
  return text.replace(/<br\s*\/?>/gi, " ").replace(/<[^>]*>/g, "");
}

/** The page shows titles as headings (they scale with the page's type): drop the plot's
 * own copy, when it is `title` (or any, when no title is given), and the top margin it
 * needed, keeping room for subplot captions. */
export function withoutTitle(layout, title) {
  if (!layout?.title || (title !== undefined && titleText(layout) !== title)) return layout;
  const { title: _, ...rest } = layout;
  const margin = { ...(rest.margin || {}), t: (rest.annotations || []).length ? 34 : 16 };
  const saved = (layout.margin?.t ?? 60) - margin.t;
  return { ...rest, margin, height: rest.height ? Math.max(220, rest.height - saved) : rest.height };
}

/** Heatmaps side by side (a grid of heads) show the same rows and columns: label the rows
 * once, on the left column, and the columns once, under the bottom row, instead of letting
 * each panel's labels run into its neighbour (or into the head titles of the row below). */
function labelRowsOnce(layout, data) {
  const heatmaps = data.filter((trace) => trace.type === "heatmap");
  if (heatmaps.length < 2) return layout;
  const out = { ...layout };
  const domain = (name) => (layout[name] && Array.isArray(layout[name].domain) ? layout[name].domain : null);
  const panels = heatmaps.map((trace) => {
    const [xname, yname] = [axisName(trace.xaxis, "x"), axisName(trace.yaxis, "y")];
    return { xname, yname, x: domain(xname), y: domain(yname) };
  });
  // a panel with another one below it in the same column leaves the column labels to that one
  // (a partial last row keeps the labels of the columns it does not fill)
  const hasPanelBelow = (p) =>
    panels.some((q) => q !== p && q.x && q.y && Math.abs(q.x[0] - p.x[0]) < 0.01 && q.y[1] <= p.y[0]);
  for (const p of panels) {
    if (!p.x || !p.y) continue;
    if (p.x[0] > 0.01) out[p.yname] = { ...out[p.yname], showticklabels: false };
    if (hasPanelBelow(p)) out[p.xname] = { ...out[p.xname], showticklabels: false };
  }
  return out;
}

/** On a phone a colour bar's title ("dL/dtok_embeddings") reads upwards beside its bar, not
 * across above it: a long title would take the heatmap's width. */
function sideTitles(layout, data) {
  const turn = (bar) => {
    if (!bar?.title) return bar;
    const title = typeof bar.title === "string" ? { text: bar.title } : bar.title;
    return { ...bar, title: { ...title, side: "right" } };
  };
  const out = { ...layout };
  for (const key of Object.keys(out))
    if (/^coloraxis\d*$/.test(key) && out[key]?.colorbar) out[key] = { ...out[key], colorbar: turn(out[key].colorbar) };
  return {
    layout: out,
    data: data.map((trace) => (trace.colorbar ? { ...trace, colorbar: turn(trace.colorbar) } : trace)),
  };
}

/** Draws `figure` ({data, layout}) into `div`; resolves once drawn. */
// A drawn plot whose box changed width (presenter mode, the lesson panel beside it, Large type)
// is laid out again at its new width: Plotly's own `responsive` follows the window only, and a
// stale width draws a colour bar past the card's edge. Next frame: no ResizeObserver loop.
const widthWatcher = new ResizeObserver((entries) => {
  const stale = entries.map((entry) => entry.target).filter((div) => div._fullLayout);
  requestAnimationFrame(() => {
    for (const div of stale)
      if (div.isConnected && Math.abs(div._fullLayout.width - div.clientWidth) > 1) window.Plotly.Plots.resize(div);
  });
});

export async function plot(div, figure, onClick) {
  const baseFont = figure.layout?.font?.size || DEFAULT_FONT;
  div.dataset.baseFont = String(baseFont);
  const fitted = pageLayout(figure.layout, baseFont);
  // Panels side by side on a phone: one above the other instead (lib/stack.js).
  const width = div.clientWidth || window.innerWidth;
  const stacked = stackPanels(fitted, figure.data || [], width);
  let layout = stacked ? stacked.layout : labelRowsOnce(fitted, figure.data || []);
  let data = stacked ? stacked.data : figure.data || [];
  if (width < NARROW) ({ layout, data } = sideTitles(layout, data));
  if (stacked) div.style.minHeight = `${layout.height}px`;
  await window.Plotly.newPlot(div, data, layout, PLOT_CONFIG);
  widthWatcher.observe(div);
  untab(div);
  div.on("plotly_afterplot", () => untab(div)); // a redraw may build the toolbar anew
  if (onClick) div.on("plotly_click", (event) => event?.points?.length && onClick(event.points[0]));
  return div;
}

/** A drawn plot at another height (presenter mode fits the first figure to the screen). */
export function setPlotHeight(div, height) {
  div.style.minHeight = `${height}px`;
  if (div.classList.contains("js-plotly-plot") && div._fullLayout?.height !== height)
    return window.Plotly.relayout(div, { height });
  return Promise.resolve();
}

export function purgeWithin(node) {
  for (const div of node.querySelectorAll(".js-plotly-plot")) window.Plotly.purge(div);
}

// Large type on/off: re-size every drawn figure's text.
document.addEventListener("xt:typesize", () => {
  for (const div of document.querySelectorAll(".js-plotly-plot[data-base-font]")) {
    const size = Math.max(MIN_FONT, Math.round(Number(div.dataset.baseFont) * fontScale()));
    window.Plotly.relayout(div, { "font.size": size });
  }
});

/** Indices of the heatmap traces: one per head in an attention grid. */
export function heatmapTraces(figure) {
  return (figure.data || []).flatMap((trace, i) => (trace.type === "heatmap" ? [i] : []));
}

/** The head a heatmap trace draws: `meta.head` when the server says, else its order. */
export function headOfTrace(figure, curveNumber) {
  const trace = figure.data[curveNumber];
  if (trace?.meta && Number.isInteger(trace.meta.head)) return trace.meta.head;
  return heatmapTraces(figure).indexOf(curveNumber);
}

/** A clicked heatmap cell's row (query position): pointNumber is [row, col]. */
export function rowOfPoint(point) {
  if (Array.isArray(point.pointNumber)) return point.pointNumber[0];
  if (Array.isArray(point.pointIndex)) return point.pointIndex[0];
  return null;
}

/** The layout key of a trace's axis: "x2" -> "xaxis2" ("x" or none -> "xaxis"). */
export function axisName(ref, letter) {
  const suffix = (ref || letter).slice(1);
  return `${letter}axis${suffix}`;
}

/** A heatmap trace's title: its name, else its subplot's caption, else its head. */
export function traceTitle(figure, curveNumber) {
  const trace = figure.data[curveNumber];
  const position = heatmapTraces(figure).indexOf(curveNumber);
  const annotation = (figure.layout.annotations || [])[position];
  return trace.name || annotation?.text || `head ${headOfTrace(figure, curveNumber)}`;
}

/** The figure's `table` as an HTML table: row labels in <th scope=row>. */
export function numbersTable(table, caption) {
  const head = h(
    "tr",
    {},
    h("th", { scope: "col", text: "" }),
    table.columns.map((c) => h("th", { scope: "col", text: c })),
  );
  const body = table.rows.map((row, i) =>
    h(
      "tr",
      {},
      h("th", { scope: "row", text: table.index ? table.index[i] : String(i) }),
      row.map((value) => h("td", { text: formatNumber(value) })),
    ),
  );
  return h(
    "div",
    { className: "table-scroll", tabindex: "0", role: "region", "aria-label": t("js-figure-numbers-of", { caption }) },
    h("table", { className: "numbers" }, h("caption", { text: caption }), h("thead", {}, head), h("tbody", {}, body)),
  );
}

/** The "numbers" disclosure; the table is built when first opened (tables can be large). */
function numbersDisclosure(figure) {
  const details = h("details", { className: "numbers-toggle" }, h("summary", { text: t("js-figure-numbers") }));
  details.addEventListener(
    "toggle",
    () => {
      if (details.open && !details.querySelector("table")) details.append(numbersTable(figure.table, figure.title));
    },
    { once: false },
  );
  return details;
}

function headButtons(plotly, onEnlarge) {
  const indices = heatmapTraces(plotly);
  if (indices.length < 2) return null;
  return h(
    "div",
    { className: "head-buttons" },
    h("span", { text: `${t("js-figure-enlarge")} ` }),
    indices.map((curve) =>
      h("button", {
        type: "button",
        className: "button-quiet",
        text: traceTitle(plotly, curve),
        onclick: () => onEnlarge(curve),
      }),
    ),
  );
}

/** How many rows of heatmap panels a figure has (a grid of 9 heads: 2), 1 for any other figure. */
function panelRows(figure) {
  const tops = new Set();
  for (const trace of figure.data || []) {
    if (trace.type !== "heatmap") continue;
    const domain = figure.layout?.[axisName(trace.yaxis, "y")]?.domain;
    tops.add(Array.isArray(domain) ? domain[1].toFixed(3) : "1");
  }
  return Math.max(1, tops.size);
}

/** A figure card: title, note, plot, head buttons, numbers. Call .draw() once attached;
 * .draw({height}) draws the plot at another height than the server's. */
export function figureCard(figure, { onPlotClick = null, onEnlarge = null } = {}) {
  // The plot's height is reserved before it is drawn, so drawing later does not move the page.
  const drawn = { ...figure.figure, layout: withoutTitle(figure.figure.layout, figure.title) };
  const height = drawn.layout?.height || DEFAULT_HEIGHT;
  // Not role=img: the plot holds the toolbar's buttons. A named group; the numbers are in the table.
  const plotDiv = h("div", {
    className: "plot",
    role: "group",
    "aria-label": t("js-figure-plot", { title: figure.title }),
    style: `min-height: ${height}px`,
    dataset: { naturalHeight: String(height), panelRows: String(panelRows(drawn)) },
  });
  let drawnAt = {}; // the last draw's options: a change of colour scale redraws with them
  const bench = figureBench(figure, drawn, () => {
    window.Plotly.purge(plotDiv);
    return draw(drawnAt);
  });
  const card = h(
    "figure",
    { className: "figure-card", dataset: { figure: figure.id, role: figure.role || "" } },
    h(
      "figcaption",
      {},
      h("h2", { className: "figure-title", text: figure.title }),
      figure.note ? h("p", { className: "note", text: figure.note }) : null,
    ),
    plotDiv,
    bench.element,
    onEnlarge ? headButtons(figure.figure, onEnlarge) : null,
    figure.table ? numbersDisclosure(figure) : null,
    downloadLinks(figure),
  );
  const draw = ({ height: fitted = null } = {}) => {
    drawnAt = { height: fitted };
    const shown = bench.shown();
    if (!fitted) return plot(plotDiv, shown, onPlotClick);
    plotDiv.style.minHeight = `${fitted}px`;
    return plot(plotDiv, { ...shown, layout: { ...shown.layout, height: fitted } }, onPlotClick);
  };
  return { element: card, plot: plotDiv, draw };
}

/** The card figureCard made for figure `id` within `root`, and its plot div; null if none. */
export function findFigureCard(root, id) {
  const card = root.querySelector(`figure.figure-card[data-figure="${CSS.escape(id)}"]`);
  return card ? { card, plot: card.querySelector(".plot") } : null;
}

export function clearPlots(node) {
  purgeWithin(node);
  clear(node);
}
