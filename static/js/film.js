// The film page (templates/film.html, docs/film.md): a recorded run's loss and head scores over
// its steps (GET /api/runs/{name}), a scrubber moved by the keyboard (←/→ a step, PageUp/PageDown
// a twentieth of the run, Home/End its ends) or by a click on the figure, and "open this step" in
// the walkthrough (/walk?run=&run_step=). The scrubbed step stays in the address (?step=).

import { wireAttention } from "./film/attention.js";
import { filmExported, openingStep, pointOpen } from "./film/exported.js";
import { filmFigure, stepLine } from "./film/figure.js";
import { request } from "./lib/api.js";
import { formatNumber, isTyping } from "./lib/dom.js";
import { local, t } from "./lib/words.js";

const film = document.getElementById("film");
const scrub = document.getElementById("film-scrub");
const readout = document.getElementById("film-readout");
const openLink = document.getElementById("film-open");
const plotDiv = document.getElementById("film-plot");
const name = film.dataset.run;
const last = Number(scrub.max);

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
  const checkpoint = run.checkpoints.includes(step);
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

function show(run, step) {
  const chosen = Math.max(0, Math.min(last, Math.round(step)));
  scrub.value = String(chosen);
  film.dataset.step = String(chosen);
  readout.textContent = describe(run, chosen);
  pointOpen(openLink, name, chosen); // the server's walkthrough, or an export's page (film/exported.js)
  const url = new URL(window.location.href);
  url.searchParams.set("step", String(chosen));
  window.history.replaceState(null, "", url);
  if (plotDiv._fullLayout) window.Plotly.relayout(plotDiv, { shapes: stepLine(chosen) });
}

/** The step a key moves to, or null for a key the film does not take. */
function keyedStep(key, step) {
  const page = Math.max(1, Math.round((last + 1) / 20));
  const moves = { ArrowLeft: step - 1, ArrowRight: step + 1, PageUp: step + page, PageDown: step - page };
  if (key in moves) return moves[key];
  if (key === "Home") return 0;
  if (key === "End") return last;
  return null;
}

function wireKeys(run) {
  scrub.addEventListener("input", () => show(run, Number(scrub.value)));
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

async function start() {
  let run;
  try {
    run = await request(`/api/runs/${encodeURIComponent(name)}`);
  } catch (error) {
    readout.textContent = t("js-film-failed", { error: error.message });
    return;
  }
  const step = openingStep(Number(film.dataset.step));
  if (window.Plotly) {
    const figure = filmFigure(run, step, plotDiv.clientWidth || window.innerWidth);
    await window.Plotly.newPlot(plotDiv, figure.data, figure.layout, { responsive: true, displaylogo: false });
    plotDiv.on("plotly_click", (event) => event?.points?.length && show(run, event.points[0].x));
  }
  scrub.disabled = false;
  wireKeys(run);
  const replayed = (at) => at - Math.max(...run.checkpoints.filter((c) => c <= at)); // dense ones among them
  if (!filmExported) wireAttention(name, () => Number(scrub.value), replayed);
  show(run, step);
  film.dataset.ready = "1";
}

start();
