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
  const seqLen = Number(form.querySelector("[data-config=seq_len]")?.value);
  let message = `${n} token${n === 1 ? "" : "s"} → ${Math.max(0, n - 1)} positions (inputs = tokens[:-1], targets = tokens[1:])`;
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

function addGroup(label, options) {
  if (!options.length) return;
  const group = document.createElement("optgroup");
  group.label = label;
  for (const { value, text: optionText } of options) {
    const option = document.createElement("option");
    option.value = value;
    option.textContent = optionText;
    group.append(option);
  }
  modelSelect.append(group);
}

async function loadModels() {
  const wanted = modelSelect.dataset.selected || "";
  const response = await fetch("/api/models", { headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`GET /api/models answered ${response.status}`);
  const { models = [], presets = [] } = await response.json();
  const presetsByValue = new Map(presets.map((p) => [PRESET + p.name, p]));
  // Keep only the "random init" option; the server may have added the selected checkpoint.
  for (const option of Array.from(modelSelect.options).slice(1)) option.remove();
  addGroup("Random init: presets", presets.map((p) => ({ value: PRESET + p.name, text: p.label || p.name })));
  addGroup("Checkpoints", models.map((m) => {
    const name = typeof m === "string" ? m : m.name;
    return { value: name, text: (typeof m === "object" && m.label) || name };
  }));
  const matching = presets.find((p) => sameConfig(p.config || {}) && (!p.tokenizer || p.tokenizer === tokenizer.value));
  modelSelect.value = wanted || (matching ? PRESET + matching.name : "");
  if (!models.length) document.getElementById("model-help").textContent =
    "No trained checkpoints installed: random weights from the seed. Presets fill in the sizes.";
  modelSelect.addEventListener("change", () => onModelChange(presetsByValue));
  onModelChange(presetsByValue, false);
}

function onModelChange(presetsByValue, apply = true) {
  const value = modelSelect.value;
  const isCheckpoint = value !== "" && !value.startsWith(PRESET);
  // A checkpoint brings its own sizes; disabled fields are not submitted.
  configFields.disabled = isCheckpoint;
  const preset = presetsByValue.get(value);
  if (preset && preset.description) document.getElementById("model-help").textContent = preset.description;
  if (apply && preset) applyPreset(preset);
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
