// The home form's update-step fields: the learning rate each optimizer gets by default and the
// most training steps the server would run first, both for the chosen model (a real model has
// its own: GET /api/models' default_lr, GET /api/tokenize's max_train_steps); the page's data
// attributes carry the server's values for a random init. Nothing here is a second copy of a limit.

import { t } from "../lib/words.js";

/** Sets a node's text only when it differs: a live region rewritten with the same words is
 * announced again by some screen readers. */
function setText(node, value) {
  if (node.textContent !== value) node.textContent = value;
}

/** {name: label} of each optimizer (app.spec.training), in the order the form offers them. */
export function optimizerLabels() {
  return JSON.parse(document.getElementById("f-lr")?.dataset.optimizerLabels || "{}");
}

/** `checkpointOf()` is the chosen checkpoint's listing entry (undefined for a random init). */
export function wireTrainingFields(checkpointOf) {
  const lr = document.getElementById("f-lr");
  const help = document.getElementById("train-steps-help");
  const limitText = document.getElementById("train-steps-limit"); // the live part: the limit alone
  const optimizerText = document.getElementById("train-steps-optimizer"); // follows the lr field's keystrokes
  const lrHelp = document.getElementById("lr-help");
  const optimizer = document.getElementById("f-optimizer");
  if (!lr || !help || !limitText || !optimizerText || !lrHelp || !optimizer) return { setLimit() {} };
  // {name: label} and {name: lr} from app.spec.training, in the order the form offers them.
  const labels = optimizerLabels();
  const appLrs = Object.fromEntries(Object.entries(JSON.parse(lr.dataset.defaultLrs)).map(([k, v]) => [k, Number(v)]));
  const serverMax = Number(help.dataset.serverMax);
  let limit = Number(help.dataset.maxTrainSteps);

  function lrs() {
    return { ...appLrs, ...(checkpointOf()?.default_lr || {}) };
  }

  function refresh() {
    const defaults = lrs();
    const name = optimizer.value || "adamw"; // training without an optimizer uses AdamW
    lr.placeholder = String(defaults[name]);
    const blanks = Object.entries(labels).map(([key, label]) => `${label} ${defaults[key]}`);
    setText(lrHelp, t("home-lr-blank", { defaults: blanks.join(", ") }));
    // The lr as the field or the server wrote it (a string: "0.003" stays so in every language).
    const chosen = { optimizer: labels[name], lr: lr.value.trim() || String(defaults[name]) };
    if (limit === undefined) {
      setText(limitText, t("home-train-unknown"));
      setText(optimizerText, t("home-train-optimizer", chosen));
    } else if (limit === 0) {
      setText(limitText, t("home-train-none"));
      setText(optimizerText, "");
    } else {
      setText(limitText, t("home-train-steps", { most: limit }));
      setText(optimizerText, t(checkpointOf() ? "home-train-optimizer" : "home-train-optimizer-random", chosen));
    }
  }

  optimizer.addEventListener("change", refresh);
  document.getElementById("f-model")?.addEventListener("change", refresh); // its default lr at once
  lr.addEventListener("input", refresh);
  // The server wrote the help for the model it chose; it is rewritten once the model list is loaded.
  return {
    /** The server's limit for the chosen checkpoint and text; null: a random init's (the server's
     * maximum); undefined: unknown (the server refused the text for this model). */
    setLimit(maxSteps) {
      limit = maxSteps === null ? serverMax : maxSteps;
      refresh();
    },
  };
}
