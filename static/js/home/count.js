// The home form's live token count: too short a text, too many positions, characters a
// checkpoint's alphabet lacks. Char and byte tokens are counted here; a checkpoint's own
// tokenizer of another kind (SmolLM2's BPE) only by the server (home/preview.js), which also
// says how many training steps it would run for the model and the text.

import { createPreview } from "./preview.js";

const LOCAL_TOKENIZERS = ["char", "byte"]; // counted here; any other only by the server
const PIECES_SHOWN = 12;

function countMessage(n, seqLen) {
  const positions = Math.max(0, n - 1);
  let message = `${n} token${n === 1 ? "" : "s"} → ${positions} position${positions === 1 ? "" : "s"} (inputs = tokens[:-1], targets = tokens[1:])`;
  if (n < 2) message += " · need at least two tokens";
  else if (seqLen && n - 1 > seqLen) message += ` · more than Max positions = ${seqLen}`;
  return message;
}

/** Characters a checkpoint's char tokenizer does not know (the server refuses them too). */
function unknownCharacters(checkpoint, value) {
  if (checkpoint?.tokenizer !== "char" || !checkpoint.alphabet) return [];
  const known = new Set(Array.from(checkpoint.alphabet));
  return Array.from(new Set(Array.from(value).filter((c) => !known.has(c))));
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
    out.textContent = `${countMessage(answer.count, answer.seq_len)} · counted by ${by}: ${pieces}`;
  }

  const preview = createPreview(showServerCount, (error, asked) => {
    if (asked.model !== checkpointOf()?.name) return;
    onLimit(undefined);
    if (countedByServer(asked.model)) out.textContent = `Cannot count the tokens: ${error.message}`;
  });

  return function updateCount() {
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
      out.textContent = `Counting the tokens with ${checkpoint.tokenizer_label || checkpoint.tokenizer} (on the server)…`;
      return;
    }
    const seqLen = checkpoint ? checkpoint.config.seq_len : Number(form.querySelector("[data-config=seq_len]")?.value);
    const bytes = tokenizer.value === "byte";
    const n = bytes ? new TextEncoder().encode(value).length : Array.from(value).length;
    let message = countMessage(n, seqLen);
    const unknown = unknownCharacters(checkpoint, value);
    if (unknown.length)
      message += ` · not in this model's alphabet: ${unknown.map((c) => JSON.stringify(c)).join(" ")}`;
    out.textContent = message;
  };
}
