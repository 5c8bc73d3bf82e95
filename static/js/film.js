// The film page (templates/film.html, docs/film.md): a recorded run's loss and head scores over
// its steps (GET /api/runs/{name}), a scrubber moved by the keyboard (←/→ a step, PageDown/PageUp
// a twentieth of the run, Home/End its ends) or by a click on the figure, and "open this step" in
// the walkthrough (/walk?run=&run_step=). The scrubbed step stays in the address (?step=). While it
// moves, the chosen heads' attention on the probe sequence follows (film/frames.js); which gradients
// build the head (film/composition.js) and the comparison with another step are one click away.

import { wireAttention } from "./film/attention.js";
import { wireComposition } from "./film/composition.js";
import { filmExported, openingStep, pointOpen } from "./film/exported.js";
import { filmFigure, stepLine } from "./film/figure.js";
import { createFrames, firstHeads, loadFrames, wireHeads } from "./film/frames.js";
import { request } from "./lib/api.js";
import { formatNumber, isTyping } from "./lib/dom.js";
import { local, plotLocale, t } from "./lib/words.js";

const film = document.getElementById("film");
const scrub = document.getElementById("film-scrub");
const readout = document.getElementById("film-readout");
const openLink = document.getElementById("film-open");
const plotDiv = document.getElementById("film-plot");
const compareStep = document.getElementById("film-compare-step");
const compareLink = document.getElementById("film-compare");
const name = film.dataset.run;
const last = Number(scrub.max);
let frames = null; // the attention frames' painter, once the run's frames are read (none: null)

/** The head with the highest of one step's scores (by layer, by head): {layer, head, score}. */
function bestHead(scores) {
  let best = { layer: 0, head: 0, score: -1 };
  for (const [layer, heads] of scores.entries())
    for (const [head, score] of heads.entries()) if (score > best.score) best = { layer, head, score };
  return best;
}

function describe(run, step) {
  const i = Math.min(run.step.length - 1, Math.round((step - run.shown.start) / run.shown.stride));
  const induction = bestHead(run.induction[i]);
  const previous = bestHead(run.previous[i]);
  // "a checkpoint: it opens at once" is the server's rebuild; an export says itself which steps open
  const checkpoint = !filmExported && run.checkpoints.includes(step);
  return t(checkpoint ? "js-film-readout-checkpoint" : "js-film-readout", {
    step,
    loss: local(formatNumber(run.loss[i])),
    induction: local(formatNumber(induction.score)),
    inductionLayer: induction.layer,
    inductionHead: induction.head,
    previous: local(formatNumber(previous.score)),
    previousLayer: previous.layer,
    previousHead: previous.head,
  });
}

// A drag sends an input event per frame; browsers refuse more than about 100 history changes in a few
// seconds (Firefox throws), so a dragged step reaches the address once the drag rests.
const ADDRESS_REST_MS = 250;
let addressTimer = null;

function remember(step) {
  clearTimeout(addressTimer);
  addressTimer = null;
  const url = new URL(window.location.href);
  url.searchParams.set("step", String(step));
  window.history.replaceState(null, "", url);
}

/** Shows `step` everywhere; `dragged`: its address waits until the drag rests. */
function show(run, step, dragged = false) {
  const chosen = Math.max(0, Math.min(last, Math.round(step)));
  scrub.value = String(chosen);
  film.dataset.step = String(chosen);
  readout.textContent = describe(run, chosen);
  pointOpen(openLink, name, chosen); // the server's walkthrough, or an export's page (film/exported.js)
  compareLink.href = compareHref(chosen);
  if (dragged) {
    clearTimeout(addressTimer);
    addressTimer = setTimeout(() => remember(chosen), ADDRESS_REST_MS);
  } else remember(chosen);
  if (plotDiv._fullLayout) window.Plotly.relayout(plotDiv, { shapes: stepLine(chosen) });
  frames?.draw(chosen);
}

/** The walkthrough of `step` compared with the step of the "compare with" field at every op
 * (static/js/walk/compare.js reads B's spec from the fragment). */
function compareHref(step) {
  const other = Math.max(0, Math.min(last, Math.round(Number(compareStep.value) || 0)));
  const b = JSON.stringify({ run: name, run_step: other });
  return `/walk?run=${encodeURIComponent(name)}&run_step=${step}#compare=${encodeURIComponent(b)}`;
}

/** The frames panel: the probe's help, the heads' checkboxes and the painter (null: no frames). */
function startFrames(run, answer, step) {
  const help = document.getElementById("film-frames-help");
  const panel = document.getElementById("film-frames");
  if (answer === null) {
    help.textContent = t("film-view-no-frames");
    return null;
  }
  help.textContent = t("film-view-frames-help", { period: answer.probe.period, frames: answer.step.length });
  const painter = createFrames(answer, panel, document.getElementById("film-frame-status"));
  const heads = firstHeads(run);
  wireHeads(document.getElementById("film-heads"), answer, painter, heads, () => Number(scrub.value));
  painter.choose(heads, step);
  return painter;
}

/** The step a key moves to, or null for a key the film does not take. */
function keyedStep(key, step) {
  const page = Math.max(1, Math.round((last + 1) / 20));
  // PageDown is a presenter's clicker's "next": later in the run (a native range input goes the other way)
  const moves = { ArrowLeft: step - 1, ArrowRight: step + 1, PageDown: step + page, PageUp: step - page };
  if (key in moves) return moves[key];
  if (key === "Home") return 0;
  if (key === "End") return last;
  return null;
}

function wireKeys(run) {
  scrub.addEventListener("input", () => show(run, Number(scrub.value), true));
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (isTyping(event.target) && event.target !== scrub) return;
    if (event.target.closest?.("a, button") && event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    const next = keyedStep(event.key, Number(scrub.value));
    if (next === null) return;
    event.preventDefault();
    show(run, next);
  });
}

/** A step on the other side of the steepest fall from `step`: the comparison's first offer. */
function otherSide(run, step) {
  const { step: fall, window } = run.steepest;
  return Math.max(0, Math.min(last, step < fall ? fall + 2 * window : fall - 2 * window));
}

async function start() {
  let run;
  let answer;
  try {
    [run, answer] = await Promise.all([request(`/api/runs/${encodeURIComponent(name)}`), loadFrames(name)]);
  } catch (error) {
    readout.textContent = t("js-film-failed", { error: error.message });
    return;
  }
  const step = openingStep(Number(film.dataset.step));
  if (window.Plotly) {
    const figure = filmFigure(run, step, plotDiv.clientWidth || window.innerWidth);
    await window.Plotly.newPlot(plotDiv, figure.data, figure.layout, {
      responsive: true,
      displaylogo: false,
      ...plotLocale,
    });
    plotDiv.on("plotly_click", (event) => event?.points?.length && show(run, event.points[0].x));
  }
  scrub.disabled = false;
  wireKeys(run);
  const replayed = (at) => at - Math.max(...run.checkpoints.filter((c) => c <= at)); // dense ones among them
  if (!filmExported) {
    // a replay on the server: an export has none (static/css/export.css hides these sections)
    wireAttention(name, () => Number(scrub.value), replayed);
    wireComposition(name, () => Number(scrub.value), replayed);
  }
  compareStep.value = String(otherSide(run, step));
  compareStep.addEventListener("input", () => {
    compareLink.href = compareHref(Number(scrub.value));
  });
  frames = startFrames(run, answer, step);
  show(run, step);
  film.dataset.ready = "1";
}

start();
