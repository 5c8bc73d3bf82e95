// The bug lab's chart of every step's gradient check (in #checks-panel, above the timeline),
// polled while the server computes it; red timeline cells where a step's gradient is wrong.

import { sleep } from "../lib/api.js";
import { plural } from "../lib/dom.js";
import { plot, withoutTitle } from "../lib/figures.js";
import { stepNumber } from "../lib/numbering.js";

const POLL_MS = 600;

export function stepName(step) {
  return `step ${stepNumber(step.index)}: ${step.title}`;
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
  if (!passed && !node.title.endsWith("gradient check FAILED")) {
    node.title += " · gradient check FAILED";
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
      progress.textContent = `Checking every step's gradient… ${checks.done} of ${checks.total} done.`;
    } else if (first === null) {
      progress.textContent = `All ${checks.total} steps pass: every gradient agrees with finite differences of the loss.`;
    } else {
      const failing = checks.steps.filter((s) => !s.passed).length;
      progress.textContent =
        `${failing} of ${checks.total} steps ${plural(failing, "fails", "fail")}; the first failing backward step is ` +
        `${stepName(trace.steps[first])}.`;
    }
    // The summary above the chart already names it: drop the plot's own title.
    const figure = { ...checks.figure, layout: withoutTitle(checks.figure.layout) };
    await plot(plotDiv, figure, (point) => go(Number(point.x))); // x: the step's index
  }

  // The server answers 503 + Retry-After while checks of other traces hold its memory: the
  // chart says so and waits as long as it takes (it is polled until complete anyway).
  const onBusy = () => {
    progress.textContent = "The server is busy checking other traces; trying again in a few seconds…";
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
        progress.textContent = `The checks could not be computed: ${error.message}`;
      });
    }
    return checking;
  }

  return { load };
}
