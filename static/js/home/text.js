// The home form's text: the example buttons (the generic ones, or a checkpoint's own) and the
// live token count (home/count.js).

import { createTokenCount } from "./count.js";

/** `checkpointOf()` is the chosen checkpoint's listing entry (undefined for a random init);
 * `onLimit(maxSteps)` gets the server's training limit for it and the text (home/count.js). */
export function createTextField(form, checkpointOf, onLimit = () => {}) {
  const text = document.getElementById("f-text");
  const tokenizer = document.getElementById("f-tokenizer");
  const dtype = document.getElementById("f-dtype");
  const box = document.getElementById("examples");
  const updateCount = createTokenCount(form, checkpointOf, onLimit);
  let genericExamples = null;

  function exampleTexts() {
    return Array.from(document.querySelectorAll("#examples [data-text]"), (b) => b.dataset.text);
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
