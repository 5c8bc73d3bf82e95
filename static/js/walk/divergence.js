// The divergence banner (templates/_diverged_banner.html): the trace holds NaN/inf (a diverged
// run). Say from which step on, mark that step on the timeline, and offer a jump to it. Every
// later step is computed from it.

import { stepNumber } from "../lib/numbering.js";

export function showDivergence(trace, go) {
  const first = trace.first_nonfinite;
  if (!first) return;
  const where = `step ${stepNumber(first.index)} (${first.name}, ${first.phase})`;
  document.getElementById("diverged-text").textContent =
    `From ${where} on, the values hold NaN/inf: ${first.advice}. First seen in ${first.tensor} (${first.count} ${first.unit || "value(s)"}).`;
  const button = document.getElementById("diverged-go");
  button.textContent = `Go to step ${stepNumber(first.index)}`;
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
