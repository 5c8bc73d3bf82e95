// The home form: example texts, the model list from /api/models (presets fill in the sizes),
// and a live token count. The form works without this script; it only adds conveniences.

const form = document.getElementById("start-form");
const text = document.getElementById("f-text");
const modelSelect = document.getElementById("f-model");
const tokenizer = document.getElementById("f-tokenizer");
const configFields = document.getElementById("config-fields");
const PRESET = "preset:";

function configInputs() {
  return Array.from(form.querySelectorAll("[data-config]"));
}

function showExamples() {
  const box = document.getElementById("examples");
  box.hidden = false;
  box.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-text]");
    if (!button) return;
    text.value = button.dataset.text;
    text.focus();
    updateCount();
  });
}

function tokenCount(value) {
  return tokenizer.value === "byte" ? new TextEncoder().encode(value).length : Array.from(value).length;
}

function updateCount() {
  const out = document.getElementById("text-count");
  const n = tokenCount(text.value.replace(/\r\n/g, "\n"));
  const checkpoint = checkpoints.get(modelSelect.value);
  const seqLen = checkpoint ? checkpoint.config.seq_len : Number(form.querySelector("[data-config=seq_len]")?.value);
  let message = `${n} token${n === 1 ? "" : "s"} → ${Math.max(0, n - 1)} positions (inputs = tokens[:-1], targets = tokens[1:])`;
  const unknown = unknownCharacters(text.value);
  if (unknown.length) message += ` · not in this model's alphabet: ${unknown.map((c) => JSON.stringify(c)).join(" ")}`;
  if (n < 2) message += " · type at least two characters";
  else if (seqLen && n - 1 > seqLen) message += ` · more than Max positions = ${seqLen}`;
  out.textContent = message;
}

function fillConfig(config) {
  for (const input of configInputs()) {
    const value = config[input.dataset.config];
    if (value === undefined) continue;
    input.value = value === null ? "" : String(value); // null vocab_size: automatic
  }
  updateCount();
}

/** Numbers compare as numbers: "10000.0" in a field is the preset's 10000. */
function sameValue(value, text) {
  if (typeof value === "number") return text.trim() !== "" && Number(text) === value;
  return String(value) === text;
}

function sameConfig(config) {
  return configInputs().every((input) => {
    const value = config[input.dataset.config];
    return value === undefined || value === null || input.dataset.config === "vocab_size" || sameValue(value, input.value);
  });
}

/** A preset may bring a tokenizer and a text; the text replaces only an untouched one. */
function applyPreset(preset) {
  fillConfig(preset.config || {});
  if (preset.tokenizer) tokenizer.value = preset.tokenizer;
  const untouched = text.value === text.defaultValue || exampleTexts().includes(text.value);
  if (preset.text && untouched) text.value = preset.text;
  updateCount();
}

function exampleTexts() {
  return Array.from(document.querySelectorAll("#examples [data-text]"), (b) => b.dataset.text);
}

function option(value, optionText) {
  const node = document.createElement("option");
  node.value = value;
  node.textContent = optionText;
  return node;
}

function group(label, options) {
  const node = document.createElement("optgroup");
  node.label = label;
  for (const { value, text: optionText } of options) node.append(option(value, optionText));
  return node;
}

// Checkpoints by name (filled from /api/models; an upload adds itself).
const checkpoints = new Map();
let genericExamples = null;

/** The model list: demo checkpoints, uploads, random init, random-init presets. */
function rebuildModelList(models, presets, wanted) {
  for (const m of models) checkpoints.set(m.name, m);
  const all = Array.from(checkpoints.values());
  const shipped = all.filter((m) => m.shipped).map((m) => ({ value: m.name, text: m.label || m.name }));
  const uploaded = all.filter((m) => !m.shipped).map((m) => ({ value: m.name, text: m.label || m.name }));
  modelSelect.replaceChildren();
  if (shipped.length) modelSelect.append(group("Demo models (trained)", shipped));
  if (uploaded.length) modelSelect.append(group("Uploaded checkpoints", uploaded));
  modelSelect.append(option("", "Random init (sizes below)"));
  if (presets.length) modelSelect.append(group("Random init: presets", presets.map((p) => ({ value: PRESET + p.name, text: p.label || p.name }))));
  // A name the server does not know (a stale link) stays selected: its error sits beside it.
  if (wanted && !wanted.startsWith(PRESET) && !checkpoints.has(wanted)) modelSelect.append(option(wanted, wanted));
  modelSelect.value = wanted;
}

async function loadModels() {
  const wanted = modelSelect.value; // the server's choice, or the person's if they were quicker
  const response = await fetch("/api/models", { headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`GET /api/models answered ${response.status}`);
  const { models = [], presets = [] } = await response.json();
  const presetsByValue = new Map(presets.map((p) => [PRESET + p.name, p]));
  const matching = presets.find((p) => sameConfig(p.config || {}) && (!p.tokenizer || p.tokenizer === tokenizer.value));
  rebuildModelList(models, presets, wanted || (matching ? PRESET + matching.name : ""));
  modelSelect.addEventListener("change", () => onModelChange(presetsByValue));
  document.addEventListener("xt:model-uploaded", (event) => {
    rebuildModelList([event.detail], presets, event.detail.name);
    onModelChange(presetsByValue);
  });
  onModelChange(presetsByValue, false);
  form.dataset.modelsLoaded = "true"; // the model list is complete (the browser tests wait on it)
}

/** Example buttons: the checkpoint's own examples, else the generic ones. */
function setExamples(texts) {
  const box = document.getElementById("examples");
  genericExamples = genericExamples || exampleTexts();
  const list = texts && texts.length ? texts : genericExamples;
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

function describeCheckpoint(model) {
  const c = model.config || {};
  const sizes = `${c.n_layer} layer${c.n_layer === 1 ? "" : "s"}, ${c.n_head} heads, width ${c.n_embd}, V = ${c.vocab_size}, up to ${c.seq_len} positions`;
  const tokens = model.tokenizer ? `${model.tokenizer} tokenizer` : "no tokenizer: token ids only";
  const description = model.description ? model.description[0].toUpperCase() + model.description.slice(1) + ". " : "";
  return `${description}${sizes}; ${tokens}. Its sizes are fixed.`;
}

function onModelChange(presetsByValue, apply = true) {
  const value = modelSelect.value;
  const checkpoint = checkpoints.get(value);
  // A checkpoint brings its own sizes and tokenizer; disabled fields are not submitted.
  configFields.disabled = Boolean(checkpoint) || (value !== "" && !value.startsWith(PRESET));
  tokenizer.disabled = Boolean(checkpoint);
  document.getElementById("f-seed").disabled = Boolean(checkpoint);
  const help = document.getElementById("model-help");
  if (checkpoint) {
    if (checkpoint.tokenizer) tokenizer.value = checkpoint.tokenizer;
    fillConfig({ ...checkpoint.config, vocab_size: undefined }); // shown (disabled): the model's own sizes
    help.textContent = describeCheckpoint(checkpoint);
    const untouched = text.value === text.defaultValue || exampleTexts().includes(text.value);
    setExamples(checkpoint.examples);
    if (apply && untouched && checkpoint.examples && checkpoint.examples.length) text.value = checkpoint.examples[0];
    updateCount();
    return;
  }
  setExamples(null);
  const preset = presetsByValue.get(value);
  help.textContent = preset && preset.description ? preset.description : "Random weights from the seed; presets fill in the sizes.";
  if (apply && preset) applyPreset(preset);
}

/** Characters a checkpoint's char tokenizer does not know (the server refuses them too). */
function unknownCharacters(value) {
  const checkpoint = checkpoints.get(modelSelect.value);
  if (!checkpoint || checkpoint.tokenizer !== "char" || !checkpoint.alphabet) return [];
  const known = new Set(Array.from(checkpoint.alphabet));
  return Array.from(new Set(Array.from(value).filter((c) => !known.has(c))));
}

showExamples();
updateCount();
text.addEventListener("input", updateCount);
tokenizer.addEventListener("change", updateCount);
form.addEventListener("input", (event) => {
  // Editing a size by hand means the config is no longer the preset's.
  if (event.target.dataset.config && modelSelect.value.startsWith(PRESET)) modelSelect.value = "";
  if (event.target.dataset.config === "seq_len") updateCount();
});
loadModels().catch((error) => {
  document.getElementById("model-help").textContent = `Model list unavailable (${error.message}); the sizes below still work.`;
});
