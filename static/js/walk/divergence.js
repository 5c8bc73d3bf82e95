// The divergence banner (templates/_diverged_banner.html): the trace holds NaN/inf (a diverged
// run). Say from which step on, mark that step on the timeline, and offer a jump to it. Every
// later step is computed from it.

import { stepNumber } from "../lib/numbering.js";
import { t } from "../lib/words.js";
import { phaseName } from "./timeline.js";

export function showDivergence(trace, go) {
  const first = trace.first_nonfinite;
  if (!first) return;
  const values = {
    number: stepNumber(first.index),
    name: first.name,
    phase: phaseName(first.phase),
    advice: first.advice,
    tensor: first.tensor,
    count: first.count,
  };
  document.getElementById("diverged-text").textContent = first.unit
    ? t("js-diverged", { ...values, unit: first.unit })
    : t("js-diverged-values", values);
  const button = document.getElementById("diverged-go");
  button.textContent = t("js-diverged-go", { number: stepNumber(first.index) });
  button.addEventListener("click", () => go(first.index));
  document.getElementById("diverged-banner").hidden = false;
  const cell = document.querySelector(`#timeline .cell[data-index="${first.index}"]`);
  if (cell) {
    cell.classList.add("nonfinite-first");
    const label = t("js-diverged-cell", { step: cell.getAttribute("aria-label") });
    cell.setAttribute("aria-label", label);
    cell.title = label;
  }
}
