// "Find a step": a search box over every step's title, tensor name and phase (a real model has
// ~1,100 steps: 30 layers × 18 ops, forward and backward). Typing "20 probs backward" or a step
// number and pressing Enter (or picking a suggestion) goes there. Built into the step controls
// by walk.js; the page works without it.

import { h } from "../lib/dom.js";

function stepText(step) {
  return `${step.index + 1}: ${step.title} · ${step.name} · ${step.phase}`;
}

/** The first step (from `from` on, wrapping) whose text holds every word of `query`; a bare
 * number is a step number. null when nothing matches. */
export function findStep(steps, query, from = 0) {
  const text = query.trim().toLowerCase();
  if (!text) return null;
  const number = /^(\d+)(?::|$)/.exec(text);
  if (number && !text.includes(" ")) {
    const index = Number(number[1]) - 1;
    return index >= 0 && index < steps.length ? index : null;
  }
  const words = text.split(/\s+/);
  for (let k = 0; k < steps.length; k++) {
    const step = steps[(from + k) % steps.length];
    const haystack = stepText(step).toLowerCase();
    if (words.every((word) => haystack.includes(word))) return step.index;
  }
  return null;
}

/** Adds the search box to the page's details (what presenter mode tucks away, so the step
 * controls keep one row); `current()` is the step shown, `go(index)` moves. */
export function wireStepFinder(trace, go, current) {
  const controls = document.getElementById("walk-context") || document.querySelector("nav.controls");
  if (!controls) return;
  const options = h("datalist", { id: "step-names" }, ...trace.steps.map((s) => h("option", { value: stepText(s) })));
  const input = h("input", {
    type: "search",
    id: "find-step",
    list: "step-names",
    placeholder: "e.g. 20 probs backward",
    autocomplete: "off",
    spellcheck: "false",
  });
  const status = h("span", { className: "visually-hidden", "aria-live": "polite" });
  const search = () => {
    // Enter again finds the next match: the search starts after the step shown
    const index = findStep(trace.steps, input.value, current() + 1);
    status.textContent = index === null ? `no step matches “${input.value}”` : "";
    if (index !== null) go(index);
  };
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      search();
    }
  });
  input.addEventListener("change", search); // a suggestion picked from the list
  controls.append(h("label", { className: "control find-step" }, "Find a step ", input, options, status));
}
