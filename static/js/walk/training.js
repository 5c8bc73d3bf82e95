// Training from the walk page: while the POST that builds a training trace runs, show how far
// the training has got (GET /api/traces/{id}/progress); then the loss it reached; and the
// "train N steps" links keep the step you are looking at.

import { formatNumber } from "../lib/dom.js";
import { local, t } from "../lib/words.js";

const POLL_MS = 300;

function loadingLine() {
  return document.getElementById("loading");
}

/** Polls the progress until the trace arrives (or the loading line is gone). */
function watchProgress(client, total) {
  if (!total || !client.id) return () => {};
  let stopped = false;
  const line = loadingLine();
  if (line) line.textContent = t("js-training-start", { total });
  async function poll() {
    if (stopped || !loadingLine()) return;
    try {
      const progress = await client.progress();
      const current = loadingLine();
      if (current && progress.state === "training") {
        const values = { done: progress.done, total: progress.total, seconds: local(String(progress.seconds)) };
        current.textContent =
          progress.loss === null
            ? t("js-training-progress", values)
            : t("js-training-progress-loss", { ...values, loss: local(formatNumber(progress.loss)) });
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
  return loss === null ? t("js-training-diverged") : local(formatNumber(loss));
}

function showTraining(trace) {
  const summary = document.getElementById("training-summary");
  const training = trace.training;
  if (!summary || !training) return;
  const after = training.loss_after === null ? null : local(formatNumber(training.loss_after));
  const values = { steps: training.steps, first: local(formatNumber(training.first_loss)), loss: lossText(trace.loss) };
  if (training.steps)
    summary.textContent = t(after === null ? "js-training-trained" : "js-training-trained-after", { ...values, after });
  else summary.textContent = after === null ? t("js-training-none") : t("js-training-none-after", { after });
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
      const steps = Number(link.dataset.trainSteps);
      link.textContent = steps ? t("js-training-link", { steps }) : t("js-training-loading");
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
