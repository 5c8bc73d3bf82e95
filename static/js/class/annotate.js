// A lesson's annotations drawn on the step's figures as Plotly shapes and labels. The server
// sends each mark as polygons in tensor units (cell (r, c) covers x in [c − ½, c + ½], y in
// [r − ½, r + ½]: app/lessons/geometry.py); here they are mapped onto the drawn heatmap, whose
// axes are categories (labels) or numbers, and whose cells may be pooled blocks.

import { axisName } from "../lib/figures.js";
import { shownFigureCard } from "./hooks.js";

const MARK = "lesson-mark";
const COLOUR = "#ff6f00";
const LABEL_ROOM = 260; // px right of its arrow a label needs (about 24 characters at 15 px, Large type)
const LABEL_RISE = 70; // px above its arrow a label takes
// A mark's outline is 3 px where cells are large; on small cells (a grid of heads, a phone) it
// is a quarter of a cell, at least 1 px, and the band unfilled: the narration asks the learner to
// read the very cells the mark outlines, so neither its line nor its tint may hide their colours.
const LINE_PX = 3;
const SMALL_CELL_PX = 12;

/** Resolves once the plot div has been drawn by Plotly (cards below the fold draw when scrolled
 * near, maybe minutes later: a student scrolls down when they do); gives up after ten minutes. */
function whenDrawn(plot) {
  if (plot.calcdata) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish(false), 600_000);
    const observer = new MutationObserver(() => plot.calcdata && finish(true));
    const finish = (drawn) => {
      clearTimeout(timer);
      observer.disconnect();
      resolve(drawn);
    };
    observer.observe(plot, { attributes: true, childList: true });
  });
}

/** A tensor coordinate on one axis -> the axis' coordinate: `step` tensor cells per drawn cell. */
function mapper(isCategory, step) {
  return isCategory ? (u) => (u + 0.5) / step - 0.5 : (u) => u + 0.5 - step / 2;
}

function panelsOf(plot, note) {
  const panels = [];
  plot.data.forEach((trace, i) => {
    if (trace.type !== "heatmap" && trace.type !== "bar") return;
    const head = Number.isInteger(trace.meta?.head) ? trace.meta.head : null;
    if (note.head !== null && note.head !== undefined && head !== note.head) return;
    panels.push(i);
  });
  return note.bars ? panels.slice(0, 1) : panels;
}

function axesOf(plot, index, note) {
  const trace = plot.data[index];
  const xref = trace.xaxis || "x";
  const yref = trace.yaxis || "y";
  const full = plot._fullLayout;
  const z = plot.calcdata[index]?.[0]?.z;
  const [rows, cols] = note.shape;
  const shownRows = Array.isArray(z) ? z.length : rows;
  const shownCols = Array.isArray(z) && Array.isArray(z[0]) ? z[0].length : cols;
  const x = mapper(full[axisName(xref, "x")]?.type === "category", Math.max(1, Math.ceil(cols / shownCols)));
  const y = mapper(full[axisName(yref, "y")]?.type === "category", Math.max(1, Math.ceil(rows / shownRows)));
  const cellPx = Math.min(
    (full[axisName(xref, "x")]?._length || Infinity) / shownCols,
    note.bars ? Infinity : (full[axisName(yref, "y")]?._length || Infinity) / shownRows,
  );
  return { xref, yref, x, y, cellPx };
}

/** The outline and tint of a mark over cells `cellPx` wide on screen. */
function markStyle(cellPx) {
  if (!(cellPx < SMALL_CELL_PX))
    return { line: { color: COLOUR, width: LINE_PX }, fillcolor: "rgba(255, 111, 0, 0.12)" };
  return { line: { color: COLOUR, width: Math.max(1, cellPx / 4) }, fillcolor: "rgba(0, 0, 0, 0)" };
}

/** A data coordinate as a fraction of its axis' domain: labels placed this way leave the
 * axis' autorange alone (a data-placed label would widen it to fit). */
function domainFraction(plot, ref, letter, value) {
  const range = plot._fullLayout[axisName(ref, letter)]?.range;
  if (!range || range[1] === range[0]) return 0.5;
  return (value - range[0]) / (range[1] - range[0]);
}

/** Where a mark's label goes from the point it points at: up and to the right, unless the label
 * would then leave the figure (a mark at the right edge or the top; Large type's larger label):
 * then to the left, or below; centred over the figure where neither side has the room (a phone).
 * Plotly clips what leaves the figure. */
function labelSide(plot, at, xref, yref) {
  const full = plot._fullLayout;
  const xaxis = full?.[axisName(xref, "x")];
  const yaxis = full?.[axisName(yref, "y")];
  if (!xaxis?._length || !yaxis?._length) return { xanchor: "left", ax: 56, ay: -44 };
  const arrowX = xaxis._offset + at.x * xaxis._length; // px from the figure's left
  const arrowY = yaxis._offset + (1 - at.y) * yaxis._length; // px from its top
  const ay = arrowY < LABEL_RISE ? 44 : -44;
  if (full.width - arrowX >= LABEL_ROOM) return { xanchor: "left", ax: 56, ay };
  if (arrowX >= LABEL_ROOM) return { xanchor: "right", ax: -56, ay };
  return { xanchor: "center", ax: full.width / 2 - arrowX, ay }; // a phone: room on neither side
}

function marks(plot, note) {
  const shapes = [];
  const labels = [];
  for (const [n, index] of panelsOf(plot, note).entries()) {
    const { xref, yref, x, y, cellPx } = axesOf(plot, index, note);
    for (const polygon of note.polygons) {
      const xs = polygon.map(([u]) => x(u));
      const ys = note.bars ? [0, 0, 1, 1] : polygon.map(([, v]) => y(v));
      const path = xs.map((px, i) => `${i ? "L" : "M"}${px},${ys[i]}`).join(" ");
      shapes.push({
        name: MARK,
        type: "path",
        path: `${path} Z`,
        xref,
        yref: note.bars ? `${yref} domain` : yref,
        ...markStyle(cellPx),
      });
    }
    if (n === 0 && note.label && note.polygons.length) {
      // The label beside the mark, not on it: its arrow points at the middle of the mark, the
      // label sits up and to the right (an attention map's masked corner), never on the axis labels.
      const points = note.polygons[0];
      const middle = [0, 1].map((k) => points.reduce((sum, p) => sum + p[k], 0) / points.length);
      const at = {
        x: domainFraction(plot, xref, "x", x(middle[0])),
        y: note.bars ? 1 : domainFraction(plot, yref, "y", y(middle[1])),
      };
      labels.push({
        name: MARK,
        text: note.label,
        ...at,
        xref: `${xref} domain`,
        yref: `${yref} domain`,
        showarrow: true,
        arrowcolor: COLOUR,
        ...labelSide(plot, at, xref, yref),
        bgcolor: "#fff8e1",
        bordercolor: COLOUR,
        borderwidth: 2,
        font: { size: 15, color: "#111" },
      });
    }
  }
  return { shapes, labels };
}

function noteLabel(note) {
  return {
    name: MARK,
    text: note.label,
    xref: "paper",
    yref: "paper",
    x: 0,
    y: 1,
    xanchor: "left",
    yanchor: "bottom",
    showarrow: false,
    bgcolor: "#fff8e1",
    bordercolor: COLOUR,
    borderwidth: 2,
    font: { size: 15, color: "#111" },
  };
}

async function annotate(plot, notes) {
  const shapes = [];
  const labels = [];
  for (const note of notes) {
    if (note.kind === "note") labels.push(noteLabel(note));
    else {
      const found = marks(plot, note);
      shapes.push(...found.shapes);
      labels.push(...found.labels);
    }
  }
  const keep = (items) => (items || []).filter((item) => item.name !== MARK);
  await window.Plotly.relayout(plot, {
    shapes: [...keep(plot.layout.shapes), ...shapes],
    annotations: [...keep(plot.layout.annotations), ...labels],
  });
  plot.dataset.lessonMarks = String(shapes.length + labels.length);
}

/** Removes every lesson mark from the shown step's figures. */
export async function clearAnnotations() {
  const keep = (items) => (items || []).filter((item) => item.name !== MARK);
  for (const plot of document.querySelectorAll("#step .plot[data-lesson-marks]")) {
    delete plot.dataset.lessonMarks;
    await window.Plotly.relayout(plot, {
      shapes: keep(plot.layout.shapes),
      annotations: keep(plot.layout.annotations),
    });
  }
}

/** Draws a lesson step's annotations on the shown step (call once it is rendered); on a wide
 * screen the first annotated figure is scrolled into view if it is not (a phone stays at the
 * step's title: the figure follows it). A figure below the fold is marked once it is drawn,
 * unless `isCurrent()` has turned false by then (the page moved to another lesson stop). */
export async function drawAnnotations(annotations, isCurrent = () => true) {
  const byFigure = new Map();
  for (const note of annotations || []) {
    if (!byFigure.has(note.figure)) byFigure.set(note.figure, []);
    byFigure.get(note.figure).push(note);
  }
  let first = true;
  for (const [id, notes] of byFigure) {
    const found = shownFigureCard(id);
    if (!found?.plot) continue;
    if (first && window.innerWidth > 900) found.card.scrollIntoView({ behavior: "smooth", block: "nearest" });
    first = false;
    if ((await whenDrawn(found.plot)) && isCurrent()) await annotate(found.plot, notes);
  }
}
