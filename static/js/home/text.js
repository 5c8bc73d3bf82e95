// The home form's text: the example buttons (the generic ones, or a checkpoint's own) and a
// live token count that warns about too short a text, too many positions, or characters a
// checkpoint's alphabet lacks. A checkpoint's own tokenizer other than char or byte (SmolLM2's
// BPE) is counted by the server (home/preview.js), which also says how many training steps it allows.

import { createPreview } from "./preview.js";

const LOCAL_TOKENIZERS = ["char", "byte"]; // counted here; any other only by the server
const PIECES_SHOWN = 12;

/** `checkpointOf()` is the chosen checkpoint's listing entry (undefined for a random init);
 * `onLimit(maxSteps)` gets the server's training limit for it and the text (null: a random init). */
export function createTextField(form, checkpointOf, onLimit = () => {}) {
  const text = document.getElementById("f-text");
  const tokenizer = document.getElementById("f-tokenizer");
  const dtype = document.getElementById("f-dtype");
  const box = document.getElementById("examples");
  const out = document.getElementById("text-count");
  let genericExamples = null;
  const preview = createPreview(showServerCount, (error, asked) => {
    if (asked.model !== checkpointOf()?.name) return;
    onLimit(undefined); // the server refused this text for this model: its limit is unknown
    if (countedByServer(asked.model)) out.textContent = `Cannot count the tokens: ${error.message}`;
  });

  function exampleTexts() {
    return Array.from(document.querySelectorAll("#examples [data-text]"), (b) => b.dataset.text);
  }

  function currentText() {
    return text.value.replace(/\r\n/g, "\n");
  }

  /** Whether the chosen model is `name` and its tokenizer is one only the server can count. */
  function countedByServer(name) {
    const checkpoint = checkpointOf();
    return (
      Boolean(checkpoint?.tokenizer) && checkpoint.name === name && !LOCAL_TOKENIZERS.includes(checkpoint.tokenizer)
    );
  }

  function tokenCount(value) {
    return tokenizer.value === "byte" ? new TextEncoder().encode(value).length : Array.from(value).length;
  }

  /** Characters a checkpoint's char tokenizer does not know (the server refuses them too). */
  function unknownCharacters(value) {
    const checkpoint = checkpointOf();
    if (checkpoint?.tokenizer !== "char" || !checkpoint.alphabet) return [];
    const known = new Set(Array.from(checkpoint.alphabet));
    return Array.from(new Set(Array.from(value).filter((c) => !known.has(c))));
  }

  function countMessage(n, seqLen) {
    let message = `${n} token${n === 1 ? "" : "s"} → ${Math.max(0, n - 1)} position${n === 2 ? "" : "s"} (inputs = tokens[:-1], targets = tokens[1:])`;
    if (n < 2) message += " · type at least two characters";
    else if (seqLen && n - 1 > seqLen) message += ` · more than Max positions = ${seqLen}`;
    return message;
  }

  function showServerCount(answer, asked) {
    if (asked.model !== checkpointOf()?.name) return;
    onLimit(answer.max_train_steps);
    if (!countedByServer(asked.model) || asked.text !== currentText()) return;
    const pieces = answer.pieces.slice(0, PIECES_SHOWN).join(" · ") + (answer.count > PIECES_SHOWN ? " · …" : "");
    const by = answer.tokenizer_label || answer.tokenizer;
    out.textContent = `${countMessage(answer.count, answer.seq_len)} · counted by ${by}: ${pieces}`;
  }

  function updateCount() {
    const checkpoint = checkpointOf();
    const value = currentText();
    const model = document.getElementById("f-model")?.value || "";
    // The model list is not loaded yet (home/model_list.js): the server's count stays.
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
    let message = countMessage(tokenCount(value), seqLen);
    const unknown = unknownCharacters(value);
    if (unknown.length)
      message += ` · not in this model's alphabet: ${unknown.map((c) => JSON.stringify(c)).join(" ")}`;
    out.textContent = message;
  }

  /** Example buttons: the checkpoint's own examples, else the generic ones. */
  function setExamples(texts) {
    genericExamples = genericExamples || exampleTexts();
    const list = texts?.length ? texts : genericExamples;
    for (const button of box.querySelectorAll("button[data-text]")) button.remove();
    for (const example of list) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "button-quiet example";
      button.dataset.text = example;
      button.textContent = example;
      box.append(button);
    }
  }

  box.hidden = false;
  box.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-text]");
    if (!button) return;
    text.value = button.dataset.text;
    text.focus();
    updateCount();
  });
  updateCount();
  text.addEventListener("input", updateCount);
  tokenizer.addEventListener("change", updateCount);
  dtype.addEventListener("change", updateCount); // float64 allows fewer training steps
  form.addEventListener("input", (event) => {
    if (event.target.dataset.config === "seq_len") updateCount();
  });

  return {
    updateCount,
    setExamples,
    /** The text as the page gave it, or one of the examples: a model's or preset's text may replace it. */
    isUntouched: () => text.value === text.defaultValue || exampleTexts().includes(text.value),
    /** Replaces the text (the caller updates the count). */
    set: (value) => {
      text.value = value;
    },
  };
}
