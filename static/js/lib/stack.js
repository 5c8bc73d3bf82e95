// Heatmap panels side by side (faulty | correct | difference, a grid of heads) squeezed into
// a phone's width overlap: their captions, tick labels and colour bars run into each other.
// Under NARROW pixels of width the panels are restacked one above the other, full width,
// each annotation and colour bar moved with its panel.

export const NARROW = 560; // px: a plot narrower than this stacks its panels
const PANEL_GAP = 44; // px between panels: room for the caption of the next one
const MARGIN = { t: 8, b: 70 };
const X_DOMAIN = [0, 0.8]; // the colour bars to the right

/** The layout key of a trace's axis: "x2" -> "xaxis2" (as lib/figures.js's axisName). */
function axisKey(ref, letter) {
  return `${letter}axis${(ref || letter).slice(1)}`;
}

function domainOf(layout, name) {
  const domain = layout[name]?.domain;
  return Array.isArray(domain) ? domain : [0, 1];
}

/** The panels (heatmap traces on their own axes), top row first, left to right. */
function panelsOf(layout, data) {
  const panels = [];
  data.forEach((trace, index) => {
    if (trace.type !== "heatmap") return;
    const xname = axisKey(trace.xaxis, "x");
    const yname = axisKey(trace.yaxis, "y");
    panels.push({ index, trace, xname, yname, x: domainOf(layout, xname), y: domainOf(layout, yname) });
  });
  return panels.sort((a, b) => b.y[1] - a.y[1] || a.x[0] - b.x[0]);
}

/** A paper coordinate inside (or on the edge of) an old domain, mapped into the new one. */
function remap(value, from, to) {
  const span = from[1] - from[0] || 1;
  return to[0] + ((value - from[0]) / span) * (to[1] - to[0]);
}

function within(value, [low, high], slack = 0.06) {
  return value >= low - slack && value <= high + slack;
}

/** The panel an annotation in paper coordinates belongs to (its caption above it counts). */
function ownerOf(annotation, panels) {
  if (annotation.xref !== "paper" || annotation.yref !== "paper") return null;
  return panels.find((p) => within(annotation.x, p.x, 0.01) && within(annotation.y, p.y)) || null;
}

function moveColourBars(out, data, panels) {
  const bars = new Map(); // colour axis (or trace) -> new y domains of its panels
  for (const panel of panels) {
    const key = panel.trace.coloraxis || `trace:${panel.index}`;
    bars.set(key, [...(bars.get(key) || []), panel.newY]);
  }
  const place = (spans) => {
    const low = Math.min(...spans.map((s) => s[0]));
    const high = Math.max(...spans.map((s) => s[1]));
    return { x: X_DOMAIN[1] + 0.04, xanchor: "left", y: (low + high) / 2, yanchor: "middle", len: high - low };
  };
  const traces = [...data];
  for (const [key, spans] of bars) {
    if (key.startsWith("trace:")) {
      const index = Number(key.slice(6));
      const trace = traces[index];
      traces[index] = { ...trace, colorbar: { ...(trace.colorbar || {}), ...place(spans) } };
    } else {
      out[key] = { ...(out[key] || {}), colorbar: { ...(out[key]?.colorbar || {}), ...place(spans) } };
    }
  }
  return traces;
}

/** {layout, data} with the panels stacked, or null when the figure has fewer than two panels
 * or is wide enough as it is. */
export function stackPanels(layout, data, width) {
  const panels = panelsOf(layout, data);
  if (width >= NARROW || panels.length < 2) return null;
  const panelHeight = Math.round(Math.min(320, Math.max(150, (width - 90) * 0.7)));
  const plotHeight = panels.length * (panelHeight + PANEL_GAP);
  const out = { ...layout, height: plotHeight + MARGIN.t + MARGIN.b, margin: { ...(layout.margin || {}), ...MARGIN } };
  panels.forEach((panel, i) => {
    const top = 1 - (i * (panelHeight + PANEL_GAP) + PANEL_GAP) / plotHeight;
    panel.newY = [Math.max(0, top - panelHeight / plotHeight), top];
    const last = i === panels.length - 1;
    out[panel.xname] = { ...out[panel.xname], domain: X_DOMAIN, showticklabels: last };
    if (!last) out[panel.xname].title = undefined;
    out[panel.yname] = { ...out[panel.yname], domain: panel.newY, showticklabels: true };
  });
  out.annotations = (layout.annotations || []).map((annotation) => {
    const panel = ownerOf(annotation, panels);
    if (!panel) return annotation;
    return { ...annotation, x: remap(annotation.x, panel.x, X_DOMAIN), y: remap(annotation.y, panel.y, panel.newY) };
  });
  return { layout: out, data: moveColourBars(out, data, panels) };
}
