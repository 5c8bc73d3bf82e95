// Getting around the steps: the timeline (every step, coloured by phase), prev/next, the
// slider, the keyboard, "jump to", and the clickable block diagram of the model (on a narrow
// screen a strip that opens on demand). Steps are numbered from 0, as in the URL's `step=`.

import { clear, h, setOptions } from "../lib/dom.js";

const PHASE_LABEL = { forward: "forward", loss: "loss", backward: "backward", update: "update" };
const DIRECTION_TEXT = {
  forward: "↓ forward: activations flow down",
  loss: "↓ loss: how wrong were the predictions?",
  backward: "↑ backward: gradients flow up",
  update: "parameter update: w ← w − step",
};

/** Contiguous runs of one phase: forward ops, the loss, backward ops. */
function phaseRuns(steps) {
  const runs = [];
  for (const step of steps) {
    const last = runs[runs.length - 1];
    if (last && last.phase === step.phase) last.steps.push(step);
    else runs.push({ phase: step.phase, steps: [step] });
  }
  return runs;
}

function stepLabel(step) {
  return `Step ${step.index}: ${step.title} (${PHASE_LABEL[step.phase] || step.phase})`;
}

/** "step 57 of 0–83": the URL's number, and the range it runs over. */
export function counterText(index, count) {
  return `step ${index} of 0–${count - 1}`;
}

function buildTimeline(list, steps, go) {
  clear(list);
  list.classList.toggle("dense", steps.length > 120);
  const cells = [];
  for (const run of phaseRuns(steps)) {
    const row = h("ol", { className: "timeline-cells" });
    for (const step of run.steps) {
      // A small gap where the block changes: the timeline groups like the diagram.
      const blockStart = row.childElementCount > 0 && cells[cells.length - 1].dataset.block !== step.block;
      const cell = h("button", {
        type: "button",
        className: `cell phase-${step.phase}${blockStart ? " block-start" : ""}`,
        title: stepLabel(step),
        "aria-label": stepLabel(step),
        tabindex: "-1",
        dataset: { index: String(step.index), block: step.block },
        onclick: () => go(step.index, { focusTimeline: true }),
      });
      cells.push(cell);
      row.append(h("li", { className: blockStart ? "block-start" : "" }, cell));
    }
    list.append(
      h(
        "li",
        { className: `timeline-run run-${run.phase}`, style: `flex-grow: ${run.steps.length}` },
        h("span", { className: "run-caption", text: `${PHASE_LABEL[run.phase] || run.phase} · ${run.steps.length}` }),
        row,
      ),
    );
  }
  return cells;
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
          h("span", { className: "layer-caption", text: `layer ${block.layer}` }),
          layerGroup,
        ),
      );
    }
    (hasLayer ? layerGroup : list).append(item);
    lastLayer = hasLayer ? block.layer : null;
  }
  return boxes;
}

/** "Jump to": the first step of each layer (and embedding/head/loss), in each direction. */
function jumpTargets(trace) {
  const targets = [];
  const seen = new Set();
  for (const step of trace.steps) {
    const direction = directionOf(step);
    const where = step.layer === null || step.layer === undefined ? step.block : `layer ${step.layer}`;
    const key = `${direction}:${where}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const block = trace.blocks.find((b) => b.id === step.block);
    const name =
      step.layer === null || step.layer === undefined ? (block ? block.label : step.block) : `Layer ${step.layer}`;
    const text = step.phase === "update" ? name : `${name} — ${direction}`; // the update has no direction
    targets.push({ value: step.index, text, key });
  }
  return targets;
}

function targetKey(step) {
  const where = step.layer === null || step.layer === undefined ? step.block : `layer ${step.layer}`;
  return `${directionOf(step)}:${where}`;
}

function isTyping(target) {
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))
  );
}

/** Space presses a focused button, opens a <details>, follows a link: only elsewhere a move. */
function spaceActivates(target) {
  return (
    target instanceof Element && Boolean(target.closest("button, a[href], summary, [role=button], [tabindex='0']"))
  );
}

function bindKeys(getIndex, count, go) {
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (isTyping(event.target) || document.querySelector("dialog[open]")) return;
    const inTimeline = Boolean(event.target.closest?.("#timeline"));
    const moves = { ArrowRight: +1, ArrowLeft: -1 };
    // Presenter mode: Space steps on (Shift+Space back), as in a slide deck.
    const space = event.key === " " && document.body.classList.contains("present") && !spaceActivates(event.target);
    let index = null;
    if (event.key in moves) index = getIndex() + moves[event.key];
    else if (space) index = getIndex() + (event.shiftKey ? -1 : 1);
    else if (event.key === "Home") index = 0;
    else if (event.key === "End") index = count - 1;
    if (index === null) return;
    event.preventDefault();
    go(Math.max(0, Math.min(count - 1, index)), { focusTimeline: inTimeline });
  });
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
  const jump = document.getElementById("jump-layer");
  const direction = document.getElementById("direction");
  const blockList = document.getElementById("blocks");
  const diagramCurrent = document.getElementById("diagram-current");
  wireDiagramToggle();

  const cells = buildTimeline(document.getElementById("timeline"), steps, go);
  const boxes = buildDiagram(blockList, trace.blocks, steps, go, () => directionOf(steps[current]));
  const targets = jumpTargets(trace);
  setOptions(jump, [{ value: "", text: "layer…" }, ...targets], "");

  prev.addEventListener("click", () => go(current - 1));
  next.addEventListener("click", () => go(current + 1));
  slider.max = String(count - 1);
  slider.addEventListener("input", () => go(Number(slider.value)));
  jump.addEventListener("change", () => jump.value !== "" && go(Number(jump.value)));
  for (const control of [prev, next, slider, jump]) control.disabled = false;
  bindKeys(() => current, count, go);

  return function update(index, { focusTimeline = false } = {}) {
    const step = steps[index];
    const old = cells[current];
    old.classList.remove("current");
    old.removeAttribute("aria-current");
    old.tabIndex = -1;
    current = index;
    const cell = cells[index];
    cell.classList.add("current");
    cell.setAttribute("aria-current", "step");
    cell.tabIndex = 0;
    if (focusTimeline) cell.focus({ preventScroll: true });
    prev.disabled = index === 0;
    next.disabled = index === count - 1;
    slider.value = String(index);
    slider.setAttribute("aria-valuetext", stepLabel(step));
    counter.textContent = counterText(index, count);
    document.getElementById("announce").textContent = `${stepLabel(step)}, of ${count}`;
    const match = targets.find((t) => t.key === targetKey(step));
    jump.value = match ? String(match.value) : "";
    for (const [id, box] of boxes) {
      box.classList.toggle("current", id === step.block);
      box.classList.toggle(`phase-${step.phase}`, id === step.block);
      for (const phase of Object.keys(PHASE_LABEL))
        if (id !== step.block || phase !== step.phase) box.classList.remove(`phase-${phase}`);
      if (id === step.block) box.setAttribute("aria-current", "step");
      else box.removeAttribute("aria-current");
    }
    const block = trace.blocks.find((b) => b.id === step.block);
    diagramCurrent.textContent = block ? block.label : step.block;
    const backward = directionOf(step) === "backward";
    blockList.classList.toggle("going-up", backward);
    direction.className = `direction phase-${step.phase}`;
    direction.textContent = DIRECTION_TEXT[step.phase] || step.phase;
  };
}
