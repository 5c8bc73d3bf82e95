// Colour scales of a heatmap figure, chosen per figure and kept in the page URL's fragment
// (#scale.<figure id>=log): linear, symmetric about 0 (the default for gradients: the server
// draws them so), log₁₀ |x|, and per-row normalized (each row over its largest |x|: an
// attention sink's bright first column no longer hides every other key). The colour bar's
// title says which; the hover keeps the value itself beside the one drawn.

import { h } from "./dom.js";
import { t } from "./words.js";

export const SCALES = [
  { id: "linear", label: t("js-scale-linear") },
  { id: "symmetric", label: t("js-scale-symmetric") },
  { id: "log", label: "log₁₀ |x|" },
  { id: "row", label: t("js-scale-row") },
];
const SEQUENTIAL = [
  [0, "#440154"],
  [0.111, "#482878"],
  [0.222, "#3e4989"],
  [0.333, "#31688e"],
  [0.444, "#26828e"],
  [0.556, "#1f9e89"],
  [0.667, "#35b779"],
  [0.778, "#6ece58"],
  [0.889, "#b5de2b"],
  [1, "#fde725"],
]; // viridis, as the server draws values
const DIVERGING = [
  [0, "#2166ac"],
  [0.25, "#92c5de"],
  [0.5, "#f7f7f7"],
  [0.75, "#f4a582"],
  [1, "#b2182b"],
]; // blue below 0, red above, as the server draws gradients
const TYPED = { f4: Float32Array, f8: Float64Array, i1: Int8Array, i2: Int16Array, i4: Int32Array, u1: Uint8Array };
const PREFIX = "scale.";

function heatmaps(figure) {
  return (figure.data || []).filter((trace) => trace.type === "heatmap");
}

/** A trace's z as rows of numbers (null where not finite), from a base64 typed array or lists. */
export function zRows(z) {
  if (Array.isArray(z)) return z.map((row) => (Array.isArray(row) ? row : [row]));
  if (!z?.bdata) return [];
  const bytes = Uint8Array.from(atob(z.bdata), (c) => c.charCodeAt(0));
  const values = new (TYPED[z.dtype] || Float32Array)(bytes.buffer);
  const [rows, cols] = String(z.shape || values.length)
    .split(",")
    .map((n) => Number.parseInt(n, 10));
  const width = cols || rows;
  return Array.from({ length: cols ? rows : 1 }, (_, r) =>
    Array.from(values.subarray(r * width, (r + 1) * width), (v) => (Number.isFinite(v) ? v : null)),
  );
}

/** The scale the server drew: symmetric for a gradient (zmid 0), linear otherwise. */
export function defaultScale(figure) {
  const traces = heatmaps(figure);
  if (!traces.length) return null;
  const axis = figure.layout?.coloraxis;
  return traces[0].zmid === 0 || axis?.cmid === 0 ? "symmetric" : "linear";
}

export function chosenScale(id, figure) {
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  const chosen = fragment.get(PREFIX + id);
  return SCALES.some((s) => s.id === chosen) ? chosen : defaultScale(figure);
}

function remember(id, scale, figure) {
  const url = new URL(window.location.href);
  const fragment = new URLSearchParams(url.hash.slice(1));
  if (scale === defaultScale(figure)) fragment.delete(PREFIX + id);
  else fragment.set(PREFIX + id, scale);
  url.hash = fragment.toString();
  window.history.replaceState(window.history.state, "", url);
}

const maxAbs = (rows) => rows.flat().reduce((m, v) => (v === null ? m : Math.max(m, Math.abs(v))), 0);
const anyNegative = (rows) => rows.some((row) => row.some((v) => v !== null && v < 0));

function transformed(rows, scale) {
  if (scale === "log") return rows.map((row) => row.map((v) => (v ? Math.log10(Math.abs(v)) : null)));
  if (scale === "row")
    return rows.map((row) => {
      const peak = maxAbs([row]);
      return row.map((v) => (v === null || !peak ? v : v / peak));
    });
  return rows;
}

/** The colours of `scale` for values `all` (every heatmap's rows after the transform). */
function colours(scale, all, signed) {
  if (scale === "symmetric" || (scale === "row" && signed)) {
    const m = scale === "row" ? 1 : maxAbs(all) || 1;
    return { colorscale: DIVERGING, min: -m, max: m, mid: 0 };
  }
  if (scale === "row") return { colorscale: SEQUENTIAL, min: 0, max: 1, mid: undefined };
  return { colorscale: SEQUENTIAL, min: undefined, max: undefined, mid: undefined };
}

function barTitle(original, scale) {
  const v = original || "x";
  if (scale === "log") return `log₁₀|${v}|`;
  if (scale === "row") return t("js-scale-row-title", { value: v });
  return `${v} · ${SCALES.find((s) => s.id === scale).label}`;
}

/** The figure drawn in `scale` (a new object; the server's is left as it is). */
export function scaledFigure(figure, scale) {
  if (!scale || scale === defaultScale(figure)) return figure;
  const axis = figure.layout?.coloraxis;
  const rowsOf = figure.data.map((trace) => (trace.type === "heatmap" ? zRows(trace.z) : null));
  const shown = rowsOf.map((rows) => (rows ? transformed(rows, scale) : null));
  const signed = rowsOf.some((rows) => rows && anyNegative(rows));
  const c = colours(scale, shown.filter(Boolean).flat(), signed);
  const changesZ = scale === "log" || scale === "row";
  const data = figure.data.map((trace, i) => {
    if (trace.type !== "heatmap") return trace;
    const own = axis
      ? {}
      : { colorscale: c.colorscale, zmin: c.min, zmax: c.max, zmid: c.mid, zauto: c.min === undefined };
    const title = trace.colorbar?.title?.text;
    const bar = axis ? {} : { colorbar: { ...trace.colorbar, title: { text: barTitle(title, scale) } } };
    if (!changesZ) return { ...trace, ...own, ...bar };
    const hover = (trace.hovertemplate || "%{z}")
      .replace(/%\{z/g, "%{customdata")
      .replace("<extra>", `<br>${t("js-scale-drawn")} %{z:.3g}<extra>`);
    return { ...trace, ...own, ...bar, z: shown[i], customdata: rowsOf[i], hovertemplate: hover };
  });
  if (!axis) return { ...figure, data };
  const coloraxis = {
    ...axis,
    colorscale: c.colorscale,
    cmin: c.min,
    cmax: c.max,
    cmid: c.mid,
    cauto: c.min === undefined,
    colorbar: { ...axis.colorbar, title: { text: barTitle(axis.colorbar?.title?.text, scale) } },
  };
  return { ...figure, data, layout: { ...figure.layout, coloraxis } };
}

/** The "Colour scale" select of a heatmap figure (null for any other); onChange(scale) redraws. */
export function scaleControl(id, figure, onChange) {
  const current = defaultScale(figure);
  if (!current) return null;
  const select = h(
    "select",
    { className: "scale-select", "aria-label": t("js-scale-label"), dataset: { scaleFor: id } },
    SCALES.map((s) => h("option", { value: s.id, text: s.label, selected: s.id === chosenScale(id, figure) })),
  );
  select.addEventListener("change", () => {
    remember(id, select.value, figure);
    onChange(select.value);
  });
  return h("label", { className: "scale-control" }, `${t("js-scale-control")} `, select);
}
