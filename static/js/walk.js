// The step-through page: POST the spec, then show one step at a time. The URL always
// carries the spec and the current step (and sequence), so a reload or a copied link
// lands on the same view.

import { TraceClient } from "./api.js";
import { createBugLab } from "./buglab.js";
import { clear, errorBox, formatNumber, h, setOptions } from "./dom.js";
import { clearPlots, wireEnlargeDialog } from "./figures.js";
import { createNavigation } from "./navigation.js";
import { renderStep } from "./step_view.js";

const root = document.getElementById("walk");
const stepView = document.getElementById("step");
const spec = JSON.parse(document.getElementById("xt-spec").textContent);
const client = new TraceClient(spec);
const state = { index: Number(root.dataset.step) || 0, seq: Number(root.dataset.seq) || 0, trace: null, update: null };
let renderToken = 0;
const buglab = createBugLab({ client, go: (index) => go(index), seq: () => state.seq });

function rememberInUrl() {
  const url = new URL(window.location.href);
  url.searchParams.set("step", String(state.index));
  if (state.seq > 0) url.searchParams.set("seq", String(state.seq));
  else url.searchParams.delete("seq");
  window.history.replaceState(null, "", url);
}

function tokenStrip(trace, seq) {
  const strip = clear(document.getElementById("tokens"));
  const inputs = trace.tokens.input_labels[seq] || [];
  const targets = trace.tokens.target_labels[seq] || [];
  const row = (label, items) =>
    h("div", { className: "token-row" }, h("span", { className: "token-row-label", text: label }),
      items.map((text, pos) => h("span", { className: "token", title: `position ${pos}` }, text)));
  const positions = h("div", { className: "token-row positions", "aria-hidden": "true" },
    h("span", { className: "token-row-label", text: "pos" }), inputs.map((_, pos) => h("span", { className: "token", text: String(pos) })));
  strip.append(positions, row("input", inputs), row("target", targets));
}

function setupSequences(trace) {
  if (!(trace.n_seq > 1)) return;
  const control = document.getElementById("seq-control");
  const selectNode = document.getElementById("seq-select");
  const options = Array.from({ length: trace.n_seq }, (_, i) => ({
    value: i,
    text: `${i}: ${(trace.tokens.input_labels[i] || []).slice(0, 12).join("")}`,
  }));
  setOptions(selectNode, options, state.seq);
  control.hidden = false;
  selectNode.addEventListener("change", () => {
    state.seq = Number(selectNode.value);
    tokenStrip(trace, state.seq);
    go(state.index);
  });
}

async function show(index) {
  const mine = ++renderToken;
  const isCurrent = () => mine === renderToken;
  stepView.setAttribute("aria-busy", "true");
  delete stepView.dataset.rendered;
  try {
    const step = await client.step(index, state.seq);
    if (!isCurrent()) return;
    await renderStep(stepView, step, { client, trace: state.trace, seq: state.seq, isCurrent });
    if (!isCurrent()) return;
    buglab.decorateStep(stepView, step);
    stepView.dataset.rendered = String(index); // "this step is fully drawn" (the browser tests wait on it)
    client.prefetch(index + 1, state.seq);
    client.prefetch(index - 1, state.seq);
  } catch (error) {
    if (!isCurrent()) return;
    clearPlots(stepView);
    stepView.append(errorBox(`step ${index + 1} could not be loaded: ${error.message}`, () => show(index)));
  } finally {
    if (isCurrent()) stepView.removeAttribute("aria-busy");
  }
}

function go(index, options = {}) {
  const count = state.trace.steps.length;
  state.index = Math.max(0, Math.min(count - 1, index));
  rememberInUrl();
  state.update(state.index, options);
  return show(state.index);
}

/** The trace holds NaN/inf (a diverged run): say from which step on, mark that step on the
 * timeline, and offer a jump to it. Every later step is computed from it. */
function showDivergence(trace) {
  const first = trace.first_nonfinite;
  if (!first) return;
  const where = `step ${first.index + 1} (${first.name}, ${first.phase})`;
  document.getElementById("diverged-text").textContent =
    `From ${where} on, the values hold NaN/inf: ${first.advice}. First seen in ${first.tensor} (${first.count} ${first.unit || "value(s)"}).`;
  const button = document.getElementById("diverged-go");
  button.textContent = `Go to step ${first.index + 1}`;
  button.addEventListener("click", () => go(first.index));
  document.getElementById("diverged-banner").hidden = false;
  const cell = document.querySelector(`#timeline .cell[data-index="${first.index}"]`);
  if (cell) {
    cell.classList.add("nonfinite-first");
    const label = `${cell.getAttribute("aria-label")} — NaN/inf first appear here`;
    cell.setAttribute("aria-label", label);
    cell.title = label;
  }
}

function fail(message) {
  clearPlots(stepView);
  stepView.append(errorBox(message, () => window.location.reload()));
}

async function start() {
  if (!window.Plotly) {
    fail("the plotting library (Plotly.js) did not load; reload the page");
    return;
  }
  wireEnlargeDialog();
  try {
    state.trace = await client.open();
    document.dispatchEvent(new CustomEvent("xt:trace", { detail: state.trace })); // training.js listens
  } catch (error) {
    fail(`the training step could not be run: ${error.message}`);
    return;
  }
  const trace = state.trace;
  document.getElementById("loss").textContent =
    trace.loss === null ? "NaN or infinite (mean cross-entropy)" : `${formatNumber(trace.loss)} (mean cross-entropy)`;
  if (!(state.seq < trace.n_seq)) state.seq = 0;
  tokenStrip(trace, state.seq);
  setupSequences(trace);
  state.update = createNavigation(trace, go);
  showDivergence(trace);
  buglab.start(trace);
  await go(state.index);
}

window.xt = state; // for the browser tests and the curious: the current step and trace
start().catch((error) => fail(`the page failed to start: ${error.message}`));
