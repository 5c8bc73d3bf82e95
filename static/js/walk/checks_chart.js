// The bug lab's chart of every step's gradient check (in #checks-panel, above the timeline),
// polled while the server computes it; red timeline cells where a step's gradient is wrong.

import { sleep } from "../lib/api.js";
import { plot, withoutTitle } from "../lib/figures.js";
import { stepNumber } from "../lib/numbering.js";
import { t } from "../lib/words.js";

const POLL_MS = 600;

export function stepName(step) {
  return t("js-check-step-name", { number: stepNumber(step.index), title: step.title });
}

function cell(index) {
  return document.querySelector(`#timeline .cell[data-index="${index}"]`);
}

/** Red timeline cells where the gradient check fails; the first failing backward step marked. */
export function markCell(index, passed, first = false) {
  const node = cell(index);
  if (!node) return;
  node.classList.toggle("check-failed", !passed);
  if (first) node.classList.add("first-failing");
  const failed = t("js-check-cell-failed");
  if (!passed && !node.title.endsWith(failed)) {
    node.title += ` · ${failed}`;
    node.setAttribute("aria-label", node.title);
  }
}

/** `load()` starts the polling once (again after a failure); it resolves with the final checks. */
export function createChecksChart({ client, trace, go }) {
  const progress = document.getElementById("checks-progress");
  const plotDiv = document.getElementById("checks-plot");
  let checking = null;

  async function drawChecks(checks) {
    const first = checks.first_failing;
    for (const step of checks.steps) {
      markCell(step.index, step.passed, step.index === first && checks.first_failing_final);
    }
    if (!checks.complete) {
      progress.textContent = t("js-check-progress", { done: checks.done, total: checks.total });
    } else if (first === null) {
      progress.textContent = t("js-check-all-pass", { total: checks.total });
    } else {
      const failing = checks.steps.filter((s) => !s.passed).length;
      const values = { failing, total: checks.total, first: stepName(trace.steps[first]) };
      progress.textContent = t("js-check-some-fail", values);
    }
    // The summary above the chart already names it: drop the plot's own title.
    const figure = { ...checks.figure, layout: withoutTitle(checks.figure.layout) };
    await plot(plotDiv, figure, (point) => go(Number(point.x))); // x: the step's index
  }

  // The server answers 503 + Retry-After while checks of other traces hold its memory: the
  // chart says so and waits as long as it takes (it is polled until complete anyway).
  const onBusy = () => {
    progress.textContent = t("js-check-busy");
  };

  function load() {
    if (!checking) {
      checking = (async () => {
        for (;;) {
          const checks = await client.checks({ onBusy, busyRetries: Number.POSITIVE_INFINITY });
          await drawChecks(checks);
          if (checks.complete) return checks;
          await sleep(POLL_MS);
        }
      })().catch((error) => {
        checking = null;
        progress.textContent = t("js-check-failed", { error: error.message });
      });
    }
    return checking;
  }

  return { load };
}
