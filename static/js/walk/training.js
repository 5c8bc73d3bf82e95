// Training from the walk page: while the POST that builds a training trace runs, show how far
// the training has got (GET /api/traces/{id}/progress); then the loss it reached; and the
// "train N steps" links keep the step you are looking at.

import { formatNumber, plural } from "../lib/dom.js";

const POLL_MS = 300;

function loadingLine() {
  return document.getElementById("loading");
}

/** Polls the progress until the trace arrives (or the loading line is gone). */
function watchProgress(client, total) {
  if (!total || !client.id) return () => {};
  let stopped = false;
  const line = loadingLine();
  if (line)
    line.textContent = `Training ${total} ${plural(total, "step")} on this batch, then running the recorded step…`;
  async function poll() {
    if (stopped || !loadingLine()) return;
    try {
      const progress = await client.progress();
      const current = loadingLine();
      if (current && progress.state === "training") {
        const loss = progress.loss === null ? "" : `, loss ${formatNumber(progress.loss)}`;
        current.textContent = `Training ${progress.done} of ${progress.total} steps${loss} (${progress.seconds} s)…`;
        current.dataset.progress = String(progress.done);
      }
      if (progress.state === "done" || progress.state === "failed") return;
    } catch {
      // the POST reports real failures; progress is only a courtesy
    }
    if (!stopped) window.setTimeout(poll, POLL_MS);
  }
  window.setTimeout(poll, POLL_MS);
  return () => {
    stopped = true;
  };
}

/** A loss sent as null is NaN or infinite (JSON has neither): say so rather than "—". */
function lossText(loss) {
  return loss === null ? "NaN/inf (the run diverged)" : formatNumber(loss);
}

function showTraining(trace) {
  const summary = document.getElementById("training-summary");
  const training = trace.training;
  if (!summary || !training) return;
  const after =
    training.loss_after === null ? "" : `; this step's update takes it to ${formatNumber(training.loss_after)}`;
  summary.textContent = training.steps
    ? `trained ${training.steps} ${plural(training.steps, "step")} on this batch first: loss ${formatNumber(training.first_loss)} → ${lossText(trace.loss)}${after}`
    : `no training before this step${after}`;
}

/** The links carry step=1 (the first step) for readers without JS: keep the step being looked at instead. */
function wireTrainLinks() {
  for (const link of document.querySelectorAll("#training-bar a[data-train-steps]")) {
    link.addEventListener("click", () => {
      const step = new URL(window.location.href).searchParams.get("step");
      const url = new URL(link.href);
      if (step !== null) url.searchParams.set("step", step);
      link.href = url.toString();
      link.classList.add("busy");
      link.textContent = Number(link.dataset.trainSteps) ? `training ${link.dataset.trainSteps} steps…` : "loading…";
    });
  }
}

/** Starts on the page's load, before the trace's POST returns: progress while a spec with
 * `train_steps` trains, and the links. Call `arrived(trace)` once the POST has answered. */
export function startTraining(client, spec) {
  const stop = watchProgress(client, spec.train_steps || 0);
  wireTrainLinks();
  return {
    arrived(trace) {
      stop();
      showTraining(trace);
    },
  };
}
