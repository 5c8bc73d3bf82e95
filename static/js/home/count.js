// The home form's live token count: too short a text, more positions than the model takes (a
// checkpoint's most, by precision and training, from GET /api/models' max_positions; a random
// init's Max positions), characters a checkpoint's alphabet lacks. Char and byte tokens are
// counted here; a checkpoint's own tokenizer of another kind (SmolLM2's BPE) only by the server
// (home/preview.js), which also says how many training steps it would run for the model and the text.

import { t } from "../lib/words.js";
import { createPreview } from "./preview.js";
import { optimizerLabels } from "./training.js";

const LOCAL_TOKENIZERS = ["char", "byte"]; // counted here; any other only by the server
const PIECES_SHOWN = 12;

const SEPARATOR = " · "; // between the count's clauses

/** `limit`: {most, over} (positionLimit), or null when unknown. */
function countMessage(n, limit) {
  const positions = Math.max(0, n - 1);
  let message = t("home-count", { tokens: n, positions });
  if (n < 2) message += SEPARATOR + t("home-count-too-few");
  else if (limit && positions > limit.most) message += SEPARATOR + limit.over;
  return message;
}

/** The most positions the chosen model takes, and the clause saying a text has more: a checkpoint's at this precision, without
 * training first or with it by the chosen optimizer (the server's max_positions: its state is held
 * too); a random init's Max positions field. */
function positionLimit(checkpoint, form, dtype, optimizer) {
  if (!checkpoint) {
    const seqLen = Number(form.querySelector("[data-config=seq_len]")?.value);
    return seqLen ? { most: seqLen, over: t("home-count-over-seq-len", { count: seqLen }) } : null;
  }
  // a bfloat16 or float16 step holds float32 arrays (master weights): float32's limits (app/spec/precision.py)
  const held = dtype === "bfloat16" || dtype === "float16" ? "float32" : dtype;
  const limits = checkpoint.max_positions?.[held];
  if (!limits) return null;
  const most = optimizer ? limits.training[optimizer] : limits.step;
  const when = optimizer
    ? t("home-when-training", { dtype, optimizer: optimizerLabels()[optimizer] || optimizer })
    : t("home-when", { dtype });
  if (!most) return { most, over: t("home-count-over-none", { when }) };
  return { most, over: t("home-count-over-model", { count: most, when }) };
}

/** Characters a checkpoint's char tokenizer does not know (the server refuses them too). */
function unknownCharacters(checkpoint, value) {
  if (checkpoint?.tokenizer !== "char" || !checkpoint.alphabet) return [];
  const known = new Set(Array.from(checkpoint.alphabet));
  return Array.from(new Set(Array.from(value).filter((c) => !known.has(c))));
}

/** The count of a tokenizer counted here (char or byte), and what is wrong with it. */
function localCount(checkpoint, value, tokenizerName, limit) {
  const n = tokenizerName === "byte" ? new TextEncoder().encode(value).length : Array.from(value).length;
  let message = countMessage(n, limit);
  const unknown = unknownCharacters(checkpoint, value);
  if (unknown.length)
    message += SEPARATOR + t("home-count-unknown", { characters: unknown.map((c) => JSON.stringify(c)).join(" ") });
  return message;
}

/** The count's update function. `checkpointOf()`: the chosen checkpoint's listing entry
 * (undefined for a random init); `onLimit(maxSteps)`: the server's training limit for it and the
 * text (null: a random init; undefined: unknown, the server refused the text for this model). */
export function createTokenCount(form, checkpointOf, onLimit) {
  const text = document.getElementById("f-text");
  const tokenizer = document.getElementById("f-tokenizer");
  const dtype = document.getElementById("f-dtype");
  const out = document.getElementById("text-count");
  const currentText = () => text.value.replace(/\r\n/g, "\n");
  const limit = () => positionLimit(checkpointOf(), form, dtype.value, trainingOptimizer());

  /** Whether the chosen model is `name` and its tokenizer is one only the server can count. */
  function countedByServer(name) {
    const checkpoint = checkpointOf();
    return (
      Boolean(checkpoint?.tokenizer) && checkpoint.name === name && !LOCAL_TOKENIZERS.includes(checkpoint.tokenizer)
    );
  }

  function showServerCount(answer, asked) {
    if (asked.model !== checkpointOf()?.name) return;
    onLimit(answer.max_train_steps);
    if (!countedByServer(asked.model) || asked.text !== currentText()) return;
    const pieces = answer.pieces.slice(0, PIECES_SHOWN).join(" · ") + (answer.count > PIECES_SHOWN ? " · …" : "");
    const by = answer.tokenizer_label || answer.tokenizer;
    out.textContent =
      countMessage(answer.count, limit()) + SEPARATOR + t("home-count-by-server", { tokenizer: by, pieces });
  }

  const preview = createPreview(showServerCount, (error, asked) => {
    if (asked.model !== checkpointOf()?.name) return;
    onLimit(undefined);
    if (countedByServer(asked.model)) out.textContent = t("home-count-failed", { error: error.message });
  });

  function updateCount() {
    const checkpoint = checkpointOf();
    const value = currentText();
    const model = document.getElementById("f-model")?.value || "";
    // The model list is not loaded yet (home/model_list.js): the page's own help stays until it is.
    if (!checkpoint && !form.dataset.modelsLoaded && model && !model.startsWith("preset:")) return;
    if (checkpoint) preview.ask({ model: checkpoint.name, text: value, dtype: dtype.value });
    else {
      preview.cancel();
      onLimit(null);
    }
    if (countedByServer(checkpoint?.name)) {
      out.textContent = t("home-counting", { tokenizer: checkpoint.tokenizer_label || checkpoint.tokenizer });
      return;
    }
    out.textContent = localCount(checkpoint, value, tokenizer.value, limit());
  }

  recountWhenTrainingChanges(updateCount);
  return updateCount;
}

/** The optimizer of the training steps first, or null with none (training without an optimizer
 * uses AdamW: app.spec.training's DEFAULT_OPTIMIZER_NAME). */
function trainingOptimizer() {
  const training = Number(document.getElementById("f-train_steps")?.value) > 0;
  return training ? document.getElementById("f-optimizer")?.value || "adamw" : null;
}

/** Training first allows fewer positions (the trace holds weights of its own and the optimizer's
 * state): 0 ↔ more steps, or another optimizer while training, recounts. */
function recountWhenTrainingChanges(updateCount) {
  let was = trainingOptimizer();
  const recount = () => {
    if (trainingOptimizer() === was) return;
    was = trainingOptimizer();
    updateCount();
  };
  document.getElementById("f-train_steps")?.addEventListener("input", recount);
  document.getElementById("f-optimizer")?.addEventListener("change", recount);
}
