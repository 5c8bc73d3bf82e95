// Everything the classroom knows about the walk page, in one place: which step is shown, when
// it is drawn, the figure cards, the Jacobian panel and the enlarge dialog. The walk page's
// own modules know nothing of the classroom; when their markup changes, this file follows.
//
//   #step[aria-busy]           set while a step loads (walk.js show())
//   #step[data-rendered=N]     step N fully drawn
//   figure.figure-card[data-figure=ID] .plot   a step's figures (lib/figures.js figureCard, findFigureCard)
//   #jacobian .jacobian-controls select|button, #jacobian-heading   (walk/jacobian.js)
//   #enlarge (dialog), #enlarge-title, .head-buttons button          (walk/enlarge.js, lib/figures.js)
//   .navbar .present-tools     the sticky bar's Details and presenter-mode buttons (templates/walk.html)

import { findFigureCard } from "../lib/figures.js";

const stepView = () => document.getElementById("step");

/** callback(index) whenever the page moves to another step (before it is drawn). */
export function onStepChange(state, callback) {
  let last = state.index;
  new MutationObserver(() => {
    if (state.index !== last) {
      last = state.index;
      callback(last);
    }
  }).observe(stepView(), { attributes: true, attributeFilter: ["aria-busy", "data-rendered"] });
}

/** Resolves once step `index` is drawn; false if the page moved elsewhere first. */
export function whenRendered(state, index) {
  const view = stepView();
  return new Promise((resolve) => {
    const check = () => {
      if (view.dataset.rendered === String(index)) return finish(true);
      if (state.index !== index) return finish(false);
      return null;
    };
    const observer = new MutationObserver(check);
    const finish = (result) => {
      observer.disconnect();
      resolve(result);
    };
    observer.observe(view, { attributes: true, attributeFilter: ["data-rendered", "aria-busy"] });
    check();
  });
}

/** The card and plot div of a figure of the shown step. */
export function shownFigureCard(id) {
  return findFigureCard(stepView(), id);
}

// ---- the softmax Jacobian panel (softmax-backward steps)

function jacobianControls() {
  const panel = document.getElementById("jacobian");
  if (!panel) return null;
  const selects = [...panel.querySelectorAll(".jacobian-controls select")];
  const button = panel.querySelector(".jacobian-controls button");
  if (!selects.length || !button) return null;
  return { head: selects.length > 1 ? selects[0] : null, pos: selects[selects.length - 1], button };
}

/** The row the panel shows: {layer, head, pos} (layer "output": the output softmax's), or null
 * when the step has no Jacobian panel. */
export function jacobianShown() {
  const controls = jacobianControls();
  if (!controls) return null;
  const { layer } = document.getElementById("jacobian").dataset;
  return {
    layer: layer === "output" ? layer : Number(layer),
    head: controls.head ? Number(controls.head.value) : 0,
    pos: Number(controls.pos.value),
  };
}

/** Shows row {head, pos} in the panel (as if chosen and "Show Jacobian" pressed). */
export function showJacobian({ head, pos }) {
  const controls = jacobianControls();
  if (!controls) return;
  if (controls.head) controls.head.value = String(head);
  controls.pos.value = String(pos);
  controls.button.click();
}

/** Scrolls the Jacobian panel's heading to the top of the screen. */
export function revealJacobian() {
  document.getElementById("jacobian")?.scrollIntoView({ behavior: "instant", block: "start" });
}

/** callback(row) each time the panel loads a row (its heading changes as it starts). */
export function onJacobian(callback) {
  let watched = null;
  const heading = new MutationObserver(() => callback(jacobianShown()));
  new MutationObserver(() => {
    const node = document.getElementById("jacobian-heading");
    if (!node || node === watched) return;
    heading.disconnect();
    watched = node;
    heading.observe(node, { childList: true, characterData: true, subtree: true });
    callback(jacobianShown());
  }).observe(stepView(), { attributes: true, attributeFilter: ["data-rendered"] });
}

// ---- the enlarged head

let clickedHead = null; // the head button pressed last: the dialog opens right after

document.addEventListener(
  "click",
  (event) => {
    const button = event.target.closest?.(".head-buttons button");
    const card = button?.closest("figure.figure-card");
    if (!button || !card) return;
    const buttons = [...button.parentElement.querySelectorAll("button")];
    clickedHead = { figure: card.dataset.figure, head: buttons.indexOf(button) };
  },
  true,
);

/** The head the dialog shows: the button pressed, else the card and button named by the title. */
function enlargedHead() {
  if (clickedHead) return clickedHead;
  const title = document.getElementById("enlarge-title")?.textContent || "";
  const suffix = title.split(" — ").pop();
  for (const card of stepView().querySelectorAll("figure.figure-card")) {
    const buttons = [...card.querySelectorAll(".head-buttons button")];
    const index = buttons.findIndex((b) => b.textContent === suffix);
    if (index >= 0 && title.startsWith(card.querySelector("h3")?.textContent || "\u0000"))
      return { figure: card.dataset.figure, head: index };
  }
  return null;
}

/** callback({figure, head}) when a head is enlarged, callback(null) when the dialog closes. */
export function onHead(callback) {
  const dialog = document.getElementById("enlarge");
  if (!dialog) return;
  new MutationObserver(() => {
    if (dialog.open) callback(enlargedHead());
    else callback(null);
    clickedHead = null;
  }).observe(dialog, { attributes: true, attributeFilter: ["open"] });
}

/** Opens the dialog on {figure, head} (null: closes it). */
export function showHead(ref) {
  const dialog = document.getElementById("enlarge");
  if (!dialog) return;
  if (!ref) {
    if (dialog.open) dialog.close();
    return;
  }
  const found = shownFigureCard(ref.figure);
  const button = found?.card.querySelectorAll(".head-buttons button")[ref.head];
  if (button) button.click();
}

/** The navigation bar's presenter tools (Details, the presenter-mode button): it sticks to the top. */
export function presentToolsSlot() {
  return document.querySelector(".navbar .present-tools");
}

/** Where the lesson panel goes: beside the step, in the diagram's column. */
export function lessonSlot() {
  return { walk: document.getElementById("walk"), body: document.querySelector(".walk-body") };
}

/** Sets (or, value null, deletes) one key of the page's #fragment without a history entry. */
export function setFragment(key, value) {
  const url = new URL(window.location.href);
  const hash = new URLSearchParams(url.hash.slice(1));
  if (value === null) hash.delete(key);
  else hash.set(key, value);
  url.hash = hash.toString();
  window.history.replaceState(null, "", url);
}
