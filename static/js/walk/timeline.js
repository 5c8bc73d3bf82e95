// The timeline: one cell per step, in runs of one phase (forward, loss, backward, update), and
// within a run in the groups the server names (trace.groups: the embedding, each layer, the
// output and loss, the update). A short walkthrough shows every cell. A long one (a real model:
// 30 layers, ~1,100 steps) is "dense": the forward and backward runs are two rows, each layer a
// compact numbered group, and only the current step's group is open, its cells side by side;
// a folded group opens (goes to its first step) on a click. Every cell stays in the page
// (folded ones hidden), so the bug lab and the divergence banner can mark any step.

import { clear, h } from "../lib/dom.js";
import { stepNumber } from "../lib/numbering.js";
import { t } from "../lib/words.js";

const PHASE_NAMES = {
  forward: "js-phase-forward",
  loss: "js-phase-loss",
  backward: "js-phase-backward",
  update: "js-phase-update",
};
export const PHASES = Object.keys(PHASE_NAMES);

/** The phase as the page names it ("forward"), in the page's language. */
export function phaseName(phase) {
  return PHASE_NAMES[phase] ? t(PHASE_NAMES[phase]) : phase;
}
const DENSE_STEPS = 120; // more steps than this: fold the layers

export function stepLabel(step) {
  return t("js-timeline-step", { number: stepNumber(step.index), title: step.title, phase: phaseName(step.phase) });
}

/** Contiguous runs of one key: [{key, steps}]. */
function runsOf(steps, keyOf) {
  const runs = [];
  for (const step of steps) {
    const last = runs[runs.length - 1];
    if (last && last.key === keyOf(step)) last.steps.push(step);
    else runs.push({ key: keyOf(step), steps: [step] });
  }
  return runs;
}

function buildCells(groupSteps, go, cells) {
  const row = h("ol", { className: "timeline-cells" });
  for (const step of groupSteps) {
    // A small gap where the block changes (attention, feed-forward): the timeline groups like the diagram.
    const blockStart = row.childElementCount > 0 && cells[cells.length - 1].dataset.block !== step.block;
    const cell = h("button", {
      type: "button",
      className: `cell phase-${step.phase}`,
      title: stepLabel(step),
      "aria-label": stepLabel(step),
      tabindex: "-1",
      dataset: { index: String(step.index), block: step.block },
      onclick: () => go(step.index, { focusTimeline: true }),
    });
    cells.push(cell);
    row.append(h("li", { className: blockStart ? "block-start" : "" }, cell));
  }
  return row;
}

/** A layer's button: its number while folded, "Layer 20" when open; a click goes to its first step. */
function groupButton(group, phase, groupSteps, go) {
  const words = t("js-timeline-group", { group: group.label, phase: phaseName(phase), steps: groupSteps.length });
  return h("button", {
    type: "button",
    className: `group-button phase-${phase}`,
    title: t("js-timeline-group-open", { group: words }),
    "aria-label": words,
    tabindex: "-1",
    onclick: () => go(groupSteps[0].index, { focusTimeline: true }),
    text: String(group.layer),
  });
}

function buildGroups(run, groupsById, dense, go, cells, groupItems, groupStarts) {
  const list = h("ol", { className: "timeline-groups" });
  for (const part of runsOf(run.steps, (s) => s.group)) {
    const group = groupsById.get(part.key) || { id: part.key, label: part.key, layer: null };
    const foldable = dense && group.layer !== null && group.layer !== undefined;
    const item = h("li", {
      className: `timeline-group${foldable ? " foldable" : ""}`,
      style: dense ? null : `flex-grow: ${part.steps.length}`,
      dataset: { group: group.id },
    });
    if (foldable) item.append(groupButton(group, run.key, part.steps, go));
    item.append(buildCells(part.steps, go, cells));
    for (const step of part.steps) groupItems[step.index] = item;
    groupStarts.push(part.steps[0].index);
    list.append(item);
  }
  return list;
}

/** The first step of the group `delta` groups after (before, when negative) the one holding
 * `index`, within the walkthrough (the keyboard's Page Down and Page Up in the timeline). */
function neighbourGroup(groupStarts, index, delta) {
  let k = 0;
  while (k + 1 < groupStarts.length && groupStarts[k + 1] <= index) k++;
  return groupStarts[Math.max(0, Math.min(groupStarts.length - 1, k + delta))];
}

/** Draws the timeline into `list`; returns {show(index, focus): called on each move,
 * groupStep(index, delta): the first step of a neighbouring group}. */
export function createTimeline(list, trace, go) {
  clear(list);
  const dense = trace.steps.length > DENSE_STEPS;
  list.classList.toggle("dense", dense);
  const groupsById = new Map((trace.groups || []).map((g) => [g.id, g]));
  const cells = [];
  const groupItems = [];
  const groupStarts = [];
  for (const run of runsOf(trace.steps, (s) => s.phase)) {
    // "forward · 543" (a dense timeline puts the count under the phase: the row keeps its width)
    const caption = h(
      "span",
      { className: "run-caption" },
      h("span", { text: phaseName(run.key) }),
      h("span", {
        className: "run-count",
        text: String(run.steps.length),
        dataset: { unit: ` ${t("js-timeline-steps-unit", { steps: run.steps.length })}` },
      }),
    );
    list.append(
      h(
        "li",
        { className: `timeline-run run-${run.key}`, style: dense ? null : `flex-grow: ${run.steps.length}` },
        caption,
        buildGroups(run, groupsById, dense, go, cells, groupItems, groupStarts),
      ),
    );
  }
  let current = 0;
  const show = (index, focus) => {
    const old = cells[current];
    old.classList.remove("current");
    old.removeAttribute("aria-current");
    old.tabIndex = -1;
    groupItems[current].classList.remove("open");
    current = index;
    const cell = cells[index];
    cell.classList.add("current");
    cell.setAttribute("aria-current", "step");
    cell.tabIndex = 0;
    groupItems[index].classList.add("open");
    if (dense) keepInView(cell);
    if (focus) cell.focus({ preventScroll: true });
  };
  // A phone turned sideways (or Large type) re-lays the rows out: the current step stays in view.
  if (dense && window.ResizeObserver) new ResizeObserver(() => keepInView(cells[current])).observe(list);
  return { show, groupStep: (index, delta) => neighbourGroup(groupStarts, index, delta) };
}

/** A run wider than the screen (a phone) scrolls sideways: keep the current cell in its view. */
function keepInView(cell) {
  const row = cell.closest(".timeline-groups");
  if (!row || row.scrollWidth <= row.clientWidth) return;
  const box = cell.getBoundingClientRect();
  const view = row.getBoundingClientRect();
  const margin = Math.min(48, view.width / 4);
  if (box.left < view.left + margin) row.scrollLeft -= view.left + margin - box.left;
  else if (box.right > view.right - margin) row.scrollLeft += box.right - (view.right - margin);
}
