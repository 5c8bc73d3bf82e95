// The film's attention while scrubbing (film.js; docs/film.md, "Attention while scrubbing"): every
// head's attention on the run's probe sequence at the steps the run recorded it
// (GET /api/runs/{name}/attention), held in memory and drawn on one canvas per chosen head at the
// recorded step nearest the scrubbed one. A frame is a few thousand bytes painted as pixels and
// scaled: no request and no Plotly per frame, so it keeps up with a drag.

import { ApiError, request } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { StaticError } from "../lib/static_source.js";
import { t } from "../lib/words.js";

const CELL = 8; // pixels per query × key cell
const MARGIN = 12; // room for the token labels left of the rows and above the columns
const EMPTY = [240, 240, 240]; // above the diagonal: keys a query cannot see
const FULL = [8, 48, 107]; // a probability of 1 (0 is white)
const FAMILY = "monospace"; // the token labels' font

/** The run's frames, or null when it keeps none (404) — then the film offers only the step's own. */
export async function loadFrames(name) {
  try {
    return await request(`/api/runs/${encodeURIComponent(name)}/attention`);
  } catch (error) {
    // a run that keeps no frames: the server's 404, or an export's (lib/static_source.js StaticError)
    if ((error instanceof ApiError || error instanceof StaticError) && error.status === 404) return null;
    throw error;
  }
}

/** The index of the recorded step nearest `step` (the earlier of two as near). */
export function nearestFrame(steps, step) {
  let low = 0;
  let high = steps.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (steps[mid] < step) low = mid + 1;
    else high = mid;
  }
  if (low > 0 && step - steps[low - 1] <= steps[low] - step) return low - 1;
  return low;
}

/** The RGBA pixels of one head's packed lower triangle (row q: keys 0..q), T × T. */
export function framePixels(packed, T, levels) {
  const pixels = new Uint8ClampedArray(T * T * 4);
  let at = 0;
  for (let q = 0; q < T; q++)
    for (let k = 0; k < T; k++) {
      const i = (q * T + k) * 4;
      const colour = k <= q ? FULL.map((c) => 255 + ((c - 255) * packed[at + k]) / levels) : EMPTY;
      pixels.set(colour, i);
      pixels[i + 3] = 255;
      if (k === q) at += q + 1;
    }
  return pixels;
}

function headCanvas(answer, layer, head) {
  const T = answer.seq_len;
  const canvas = h("canvas", { width: MARGIN + T * CELL, height: MARGIN + T * CELL, role: "img" });
  const context = canvas.getContext("2d");
  context.font = `${CELL + 1}px ${FAMILY}`;
  context.textAlign = "center";
  context.textBaseline = "middle";
  context.fillStyle = "#333";
  answer.probe.labels.forEach((label, i) => {
    const middle = MARGIN + (i + 0.5) * CELL;
    if (i % 2 === 0) context.fillText(label, middle, MARGIN / 2); // every other key: the labels touch
    context.fillText(label, MARGIN / 2, middle);
  });
  const cells = document.createElement("canvas");
  cells.width = T;
  cells.height = T;
  const caption = h("figcaption", { text: t("js-film-head", { layer, head }) });
  const element = h("figure", { className: "film-frame" }, canvas, caption);
  return { element, canvas, context, cells, layer, head };
}

/** The frames of `answer` drawn into `panel`, one canvas per head of `heads()` ([layer, head] pairs);
 * draw(step) paints the recorded step nearest it (nothing when it is the one painted last). */
export function createFrames(answer, panel, status) {
  const T = answer.seq_len;
  let shown = [];
  let painted = null;

  function paint(view, frame) {
    const pixels = framePixels(answer.probs[frame][view.layer][view.head], T, answer.levels);
    view.cells.getContext("2d").putImageData(new ImageData(pixels, T, T), 0, 0);
    view.context.imageSmoothingEnabled = false;
    view.context.drawImage(view.cells, MARGIN, MARGIN, T * CELL, T * CELL);
    const values = { layer: view.layer, head: view.head, frame: answer.step[frame] };
    view.canvas.setAttribute("aria-label", t("film-view-js-head", values));
  }

  function draw(step) {
    const frame = nearestFrame(answer.step, step);
    const recorded = answer.step[frame];
    status.textContent =
      recorded === step ? t("film-view-js-frame-same", { step }) : t("film-view-js-frame", { frame: recorded, step });
    if (painted === frame) return;
    for (const view of shown) paint(view, frame);
    painted = frame;
    panel.dataset.frame = String(recorded);
    panel.dataset.painted = String(Number(panel.dataset.painted || 0) + 1);
  }

  function choose(heads, step) {
    shown = heads.map(([layer, head]) => headCanvas(answer, layer, head));
    panel.replaceChildren(...shown.map((view) => view.element));
    painted = null;
    draw(step);
  }

  return { draw, choose };
}

/** The heads drawn at first: layer 0's best previous-token head and the last layer's best induction
 * head, at the run's last step shown (run: GET /api/runs/{name}'s answer). */
export function firstHeads(run) {
  const lastAt = run.step.length - 1;
  const best = (scores) => scores.reduce((top, score, head) => (score > scores[top] ? head : top), 0);
  const layers = run.previous[lastAt].length;
  const heads = [[0, best(run.previous[lastAt][0])]];
  if (layers > 1) heads.push([layers - 1, best(run.induction[lastAt][layers - 1])]);
  return heads;
}

/** A checkbox per head in `fieldset`; ticking one redraws the chosen heads at `step()`. */
export function wireHeads(fieldset, answer, frames, chosen, step) {
  const boxes = [];
  for (let layer = 0; layer < answer.n_layer; layer++)
    for (let head = 0; head < answer.n_head; head++) {
      const checked = chosen.some(([l, hd]) => l === layer && hd === head);
      const box = h("input", { type: "checkbox", checked, value: `${layer}.${head}` });
      box.addEventListener("change", () => {
        const picked = boxes.filter((b) => b.checked).map((b) => b.value.split(".").map(Number));
        frames.choose(picked, step());
      });
      boxes.push(box);
      fieldset.append(h("label", {}, box, ` ${t("js-film-head", { layer, head })}`));
    }
  fieldset.hidden = false;
}
