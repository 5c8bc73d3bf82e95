// The home form's text: the example buttons (the generic ones, or a checkpoint's own) and a
// live token count that warns about too short a text, too many positions, or characters a
// checkpoint's alphabet lacks.

/** `checkpointOf()` is the chosen checkpoint's listing entry (undefined for a random init). */
export function createTextField(form, checkpointOf) {
  const text = document.getElementById("f-text");
  const tokenizer = document.getElementById("f-tokenizer");
  const box = document.getElementById("examples");
  let genericExamples = null;

  function exampleTexts() {
    return Array.from(document.querySelectorAll("#examples [data-text]"), (b) => b.dataset.text);
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

  function updateCount() {
    const out = document.getElementById("text-count");
    const n = tokenCount(text.value.replace(/\r\n/g, "\n"));
    const checkpoint = checkpointOf();
    const seqLen = checkpoint ? checkpoint.config.seq_len : Number(form.querySelector("[data-config=seq_len]")?.value);
    let message = `${n} token${n === 1 ? "" : "s"} → ${Math.max(0, n - 1)} positions (inputs = tokens[:-1], targets = tokens[1:])`;
    const unknown = unknownCharacters(text.value);
    if (unknown.length)
      message += ` · not in this model's alphabet: ${unknown.map((c) => JSON.stringify(c)).join(" ")}`;
    if (n < 2) message += " · type at least two characters";
    else if (seqLen && n - 1 > seqLen) message += ` · more than Max positions = ${seqLen}`;
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
