// "Find a step": a search box over every step's title, tensor name and phase (a real model has
// ~1,100 steps: 30 layers × 18 ops, forward and backward). Typing "layer 20 probs backward", or
// a step's number as the counter and the URL count it (from 1), and pressing Enter (or picking
// a suggestion) goes there. Built into the page's details by walk.js; the page works without it.

import { h } from "../lib/dom.js";
import { stepIndexOf, stepNumber } from "../lib/numbering.js";
import { t } from "../lib/words.js";
import { phaseName } from "./timeline.js";

/** A suggestion's text: it starts with the step's number, so picking it goes to that step. */
function suggestion(step) {
  return `${stepNumber(step.index)}: ${step.title} · ${step.name} · ${step.phase}`;
}

/** Lower-case words of a text: runs of letters and digits ("layers.20.attention.probs" is
 * four words), so a query word never matches inside a longer number. */
function wordsOf(text) {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) || [];
}

/** Whether `step` holds query word `word`: a number is the step's layer (the number in
 * "layer 20"; never a digit of the step's index or of another number); other words match the
 * start of a word of its title, tensor name or phase ("prob" finds "probs"). */
function holds(step, stepWords, word) {
  if (/^\d+$/.test(word)) return step.layer === Number(word);
  return stepWords.some((own) => own.startsWith(word));
}

/** The step a query names: a bare number (or a picked suggestion, "207: …") is the step of that
 * number, counted from 1 as the counter and the URL count; otherwise the first step, from `from`
 * on and wrapping, that holds every word. null when nothing matches. */
export function findStep(steps, query, from = 0) {
  const text = query.trim();
  const number = /^(\d+)(?::|$)/.exec(text);
  if (number) {
    const index = stepIndexOf(Number(number[1]));
    return index >= 0 && index < steps.length ? index : null;
  }
  const words = wordsOf(text);
  if (!words.length) return null;
  for (let k = 0; k < steps.length; k++) {
    const step = steps[(from + k) % steps.length];
    const stepWords = wordsOf(`${step.title} ${step.name} ${step.phase} ${phaseName(step.phase)}`);
    if (words.every((word) => holds(step, stepWords, word))) return step.index;
  }
  return null;
}

/** What the box says when a query finds nothing. */
function noMatchText(query, count) {
  if (/^\d+$/.test(query)) return t("js-find-no-number", { query, count });
  return t("js-find-no-match", { query });
}

/** Adds the search box to the page's details (what presenter mode tucks away, so the step
 * controls keep one row); `current()` is the step shown, `go(index)` moves. */
export function wireStepFinder(trace, go, current) {
  const controls = document.getElementById("walk-context") || document.querySelector("nav.controls");
  if (!controls) return;
  const options = h("datalist", { id: "step-names" }, ...trace.steps.map((s) => h("option", { value: suggestion(s) })));
  const input = h("input", {
    type: "search",
    id: "find-step",
    list: "step-names",
    placeholder: t("js-find-placeholder"),
    autocomplete: "off",
    spellcheck: "false",
    "aria-describedby": "find-status",
  });
  const status = h("span", { className: "find-status", id: "find-status", role: "status", "aria-live": "polite" });
  let searched = null; // the query Enter last searched: its "change" event must not search again
  const search = () => {
    const query = input.value.trim();
    searched = input.value;
    if (!query) return;
    // Enter again finds the next match: the search starts after the step shown
    const index = findStep(trace.steps, query, current() + 1);
    status.textContent = index === null ? noMatchText(query, trace.steps.length) : "";
    if (index !== null) go(index);
  };
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      search();
    }
  });
  input.addEventListener("change", () => input.value !== searched && search()); // a suggestion picked
  input.addEventListener("input", (event) => {
    status.textContent = ""; // the message was about the previous query
    if (event.inputType === "insertReplacementText") search(); // a suggestion picked (Chrome)
  });
  const label = h("label", { className: "control" }, `${t("js-find-label")} `, input);
  const finder = h("div", { className: "find-step" }, label, options, status);
  const toggle = document.getElementById("context-more"); // drawn after it: in the page's order too
  if (toggle?.parentElement === controls) toggle.before(finder);
  else controls.append(finder);
}
