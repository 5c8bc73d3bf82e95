// "Jump to: [layer] [op]": two selects over the server's groups (the embedding, each layer, the
// output and loss, the update) and the ops of the chosen group, forward and backward. Choosing
// a layer keeps the op (and direction) shown when that layer has it: from layer 3's attention
// softmax to layer 20's; choosing an op goes to it. Both follow the step shown.

import { clear, h, setOptions } from "../lib/dom.js";
import { t } from "../lib/words.js";

const PHASE_CAPTION = {
  forward: "js-jump-forward",
  loss: "js-jump-loss",
  backward: "js-jump-backward",
  update: "js-jump-update",
};

function direction(step) {
  return step.phase === "backward" ? "backward" : "forward";
}

function opText(step) {
  return step.phase === "backward" ? t("js-jump-op-backward", { op: step.op_title }) : step.op_title;
}

/** Where choosing group `groupId` lands from step `from`: the same op in the same phase, else the
 * group's first step in the same direction, else its first step. */
export function landingStep(steps, groupId, from) {
  const inGroup = steps.filter((s) => s.group === groupId);
  const same = inGroup.find((s) => s.op === from.op && s.phase === from.phase);
  const sameWay = inGroup.find((s) => direction(s) === direction(from));
  return (same || sameWay || inGroup[0] || from).index;
}

function fillOps(select, steps, groupId) {
  clear(select);
  const inGroup = steps.filter((s) => s.group === groupId);
  for (const phase of Object.keys(PHASE_CAPTION)) {
    const ofPhase = inGroup.filter((s) => s.phase === phase);
    if (ofPhase.length === 0) continue;
    const options = ofPhase.map((s) => h("option", { value: String(s.index), text: opText(s) }));
    select.append(h("optgroup", { label: t(PHASE_CAPTION[phase]) }, ...options));
  }
}

/** Wires #jump-group and #jump-op; returns update(index), called on each move. */
export function createJump(trace, go, current) {
  const groupSelect = document.getElementById("jump-group");
  const opSelect = document.getElementById("jump-op");
  const steps = trace.steps;
  setOptions(
    groupSelect,
    (trace.groups || []).map((g) => ({ value: g.id, text: g.label })),
    steps[current()].group,
  );
  let shownGroup = null;
  groupSelect.addEventListener("change", () => go(landingStep(steps, groupSelect.value, steps[current()])));
  opSelect.addEventListener("change", () => go(Number(opSelect.value)));
  groupSelect.disabled = false;
  opSelect.disabled = false;
  return function update(index) {
    const step = steps[index];
    if (step.group !== shownGroup) {
      fillOps(opSelect, steps, step.group);
      shownGroup = step.group;
    }
    groupSelect.value = step.group;
    opSelect.value = String(index);
  };
}
