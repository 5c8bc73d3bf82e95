// The step-through page (the entry module of templates/walk.html; its parts live in walk/):
// POST the spec, then show one step at a time. The URL always carries the spec and the
// current step (and sequence), so a reload or a copied link lands on the same view. The URL's
// step= is the number people read (the first step is step 1); state.index is 0-based.
// The page's data blocks (#xt-spec in walk/trace_client.js, #xt-buglab here) are read once.

import { startClassroom } from "./class/classroom.js";
import { errorBox, formatNumber, readJsonBlock, replaceUrl } from "./lib/dom.js";
import { clearPlots } from "./lib/figures.js";
import { stepNumber } from "./lib/numbering.js";
import { local, t } from "./lib/words.js";
import { createBugLab } from "./walk/buglab.js";
import { wireClicker } from "./walk/clicker.js";
import { createCompare } from "./walk/compare.js";
import { showDivergence } from "./walk/divergence.js";
import { wireEnlargeDialog } from "./walk/enlarge.js";
import { wireStepFinder } from "./walk/find.js";
import { createNavigation } from "./walk/navigation.js";
import { createPrecision } from "./walk/precision.js";
import { firstFigureHeight, revealTitle, showFirstFigure, wirePresenter } from "./walk/present.js";
import { renderStep } from "./walk/step_view.js";
import { drawTokenStrip, setupSequences } from "./walk/tokens.js";
import { client, opened, spec } from "./walk/trace_client.js";
import { startTraining } from "./walk/training.js";

const root = document.getElementById("walk");
const stepView = document.getElementById("step");
const state = {
  index: Number(root.dataset.step) || 0,
  seq: Number(root.dataset.seq) || 0,
  trace: null,
  update: null,
  moved: false, // once the reader has moved, every new step starts at its title
};
let renderToken = 0;
const buglab = createBugLab({
  client,
  info: readJsonBlock("xt-buglab"),
  go: (index) => go(index),
  seq: () => state.seq,
  rerender: () => show(state.index),
});
const training = startTraining(client, spec);
const compare = createCompare({ client, spec, seq: () => state.seq });
const precision = createPrecision({ client, spec }); // a bfloat16 or float16 step's numbers' health

function rememberInUrl() {
  const url = new URL(window.location.href);
  url.searchParams.set("step", String(stepNumber(state.index))); // as people count: from 1
  if (state.seq > 0) url.searchParams.set("seq", String(state.seq));
  else url.searchParams.delete("seq");
  replaceUrl(url);
}

async function show(index) {
  const mine = ++renderToken;
  const isCurrent = () => mine === renderToken;
  stepView.setAttribute("aria-busy", "true");
  delete stepView.dataset.rendered;
  delete stepView.dataset.shown;
  try {
    const step = await client.step(index, state.seq);
    if (!isCurrent()) return;
    const onLaidOut = () => {
      buglab.decorateStep(stepView, step);
      if (state.moved) revealTitle(); // a page opens at its top; a move starts at the step's title
      showFirstFigure(); // and on a wide screen, as far down as its first figure needs
      stepView.dataset.shown = String(index); // text and formulas in place (figures may still be drawing)
    };
    await renderStep(stepView, step, {
      client,
      trace: state.trace,
      seq: state.seq,
      isCurrent,
      onLaidOut,
      onChecked: () => buglab.decorateStep(stepView, step), // a large model's check comes after its view
      firstHeight: firstFigureHeight,
    });
    if (!isCurrent()) return;
    precision.decorateStep(stepView, step, isCurrent); // drawn as its answer comes
    compare.decorateStep(stepView, index); // "Compare with…" (and the comparison the URL names)
    stepView.dataset.rendered = String(index); // "this step is fully drawn" (the browser tests wait on it)
    client.prefetch(index + 1, state.seq);
    client.prefetch(index - 1, state.seq);
  } catch (error) {
    if (!isCurrent()) return;
    clearPlots(stepView);
    stepView.append(
      errorBox(t("js-walk-step-failed", { number: stepNumber(index), error: error.message }), () => show(index)),
    );
  } finally {
    if (isCurrent()) stepView.removeAttribute("aria-busy");
  }
}

function go(index, options = {}) {
  const count = state.trace.steps.length;
  state.moved = index !== state.index || state.moved;
  state.index = Math.max(0, Math.min(count - 1, index));
  rememberInUrl();
  state.update(state.index, options);
  return show(state.index);
}

function fail(message) {
  clearPlots(stepView);
  stepView.append(errorBox(message, () => window.location.reload()));
}

async function start() {
  if (!window.Plotly) {
    fail(t("js-walk-no-plotly"));
    return;
  }
  wireEnlargeDialog();
  wirePresenter();
  wireClicker();
  try {
    state.trace = await opened; // sent before Plotly.js ran (walk/trace_client.js)
  } catch (error) {
    fail(t("js-walk-trace-failed", { error: error.message }));
    return;
  }
  training.arrived(state.trace);
  const trace = state.trace;
  document.getElementById("loss").textContent =
    trace.loss === null ? t("js-walk-loss-infinite") : t("js-walk-loss", { loss: local(formatNumber(trace.loss)) });
  if (!(state.seq < trace.n_seq)) state.seq = 0;
  drawTokenStrip(trace, state.seq);
  setupSequences(trace, state.seq, (seq) => {
    state.seq = seq;
    drawTokenStrip(trace, seq);
    go(state.index);
  });
  state.update = createNavigation(trace, go);
  precision.start(trace).catch(() => {}); // the timeline's marks (each step's panel says a failure)
  wireStepFinder(trace, go, () => state.index);
  showDivergence(trace, go);
  buglab.start(trace);
  startClassroom({ trace, go, state });
  await go(state.index);
}

window.xt = state; // for the browser tests and the curious: the current step and trace
start().catch((error) => fail(t("js-walk-start-failed", { error: error.message })));
