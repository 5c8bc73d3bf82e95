// The home form's model list, from GET /api/models: demo checkpoints, uploads, a random init
// and its presets. A checkpoint fixes the sizes and the tokenizer (their fields are disabled,
// so not submitted); a preset fills the sizes in. The form works without this script.

import { getModels } from "../lib/api.js";
import { fixed, t } from "../lib/words.js";
import { fillConfig, sameConfig } from "./sizes.js";
import { optimizerLabels } from "./training.js";

const PRESET = "preset:";

/** `lang`: the language of a label that is not the page's (a model's name: "en"). */
function option(value, optionText, lang = "") {
  const node = document.createElement("option");
  node.value = value;
  node.textContent = optionText;
  if (lang) node.lang = lang;
  return node;
}

/** Options under `label`; `lang` "en" for models' names, "" for labels in the page's language (presets'). */
function group(label, options, lang = "en") {
  const node = document.createElement("optgroup");
  node.label = label;
  for (const { value, text: optionText } of options) node.append(option(value, optionText, lang));
  return node;
}

/** The most positions this server takes for a checkpoint (GET /api/models' max_positions: its
 * seq_len, or fewer where a trace would pass max_trace_bytes), by precision and training first
 * (by optimizer: AdamW holds its m and v too). */
function describePositions(model, labels) {
  const limits = model.max_positions;
  if (!limits) return t("home-positions-seq-len", { count: model.config?.seq_len });
  const none = t("home-positions-none");
  const one = ({ step, training }) => {
    if (!step) return none;
    const counts = Object.values(training);
    if (counts.every((n) => n === step)) return t("home-positions", { count: step });
    if (counts.every((n) => n === counts[0]))
      return t("home-positions-training-same", { count: step, training: counts[0] || none });
    const each = Object.entries(training).map(([name, n]) =>
      t("home-positions-with", { count: n || none, optimizer: labels[name] || name }),
    );
    return t("home-positions-training-each", { count: step, each: each.join(", ") });
  };
  const [f32, f64] = [one(limits.float32), one(limits.float64)];
  if (f32 === f64) return f32 === none ? t("home-positions-no-text") : t("home-positions-up-to", { positions: f32 });
  return t("home-positions-by-dtype", { float32: f32, float64: f64 });
}

function describeCheckpoint(model) {
  const c = model.config || {};
  const description = model.description ? `${model.description[0].toUpperCase() + model.description.slice(1)}. ` : "";
  const positions = describePositions(model, optimizerLabels());
  // A real model's description already names its layers, heads, width, vocabulary and tokenizer.
  if (model.kind === "real")
    return t("home-checkpoint-real", { description, positions: positions[0].toUpperCase() + positions.slice(1) });
  const sizes = t("home-checkpoint-sizes", {
    layers: c.n_layer,
    heads: c.n_head,
    width: c.n_embd,
    vocab: c.vocab_size,
    positions,
  });
  const tokens = model.tokenizer
    ? t("home-checkpoint-tokenizer", { tokenizer: model.tokenizer })
    : t("home-checkpoint-no-tokenizer");
  return t("home-checkpoint", { description, sizes, tokens, measured: describeMeasured(model.measured || {}) });
}

/** The Tokenizer select shows a checkpoint's own tokenizer; one that is neither char nor byte
 * (SmolLM2's BPE) gets an option of its own while that model is chosen (the field is disabled:
 * never sent). */
function showTokenizer(select, checkpoint) {
  for (const own of select.querySelectorAll("option[data-model-tokenizer]")) own.remove();
  if (!checkpoint?.tokenizer) return;
  if (!Array.from(select.options).some((o) => o.value === checkpoint.tokenizer)) {
    const own = option(
      checkpoint.tokenizer,
      checkpoint.tokenizer_label || t("home-tokenizer-from-file", { tokenizer: checkpoint.tokenizer }),
    );
    own.dataset.modelTokenizer = "";
    select.append(own);
  }
  select.value = checkpoint.tokenizer;
}

/** What training measured on data it did not train on (GET /api/models' `measured`). */
function describeMeasured(m) {
  const parts = [];
  if (m.induction_layer !== undefined) {
    const [layer, head, score] = [m.induction_layer, m.induction_head, fixed(m.induction_score, 2)];
    parts.push(t("home-measured-induction", { layer, head, score }));
  }
  if (m.heldout_loss !== undefined) {
    parts.push(t("home-measured-loss", { heldout: fixed(m.heldout_loss, 2), train: fixed(m.train_loss, 2) }));
  }
  if (m.sample) parts.push(t("home-measured-sample", { sample: m.sample }));
  return parts.length ? ` ${parts.join(" ")}` : "";
}

/** `checkpoints` (name -> listing entry) is filled here and shared with the token count;
 * `text` is the text field (home/text.js). */
export function wireModelList(form, { checkpoints, text }) {
  const modelSelect = document.getElementById("f-model");
  const tokenizer = document.getElementById("f-tokenizer");
  const configFields = document.getElementById("config-fields");
  const help = document.getElementById("model-help");

  function setConfig(config) {
    fillConfig(form, config);
    text.updateCount();
  }

  /** A preset may bring a tokenizer and a text; the text replaces only an untouched one. */
  function applyPreset(preset) {
    setConfig(preset.config || {});
    if (preset.tokenizer) tokenizer.value = preset.tokenizer;
    if (preset.text && text.isUntouched()) text.set(preset.text);
    text.updateCount();
  }

  /** The model list: demo checkpoints, uploads, random init, random-init presets. */
  function rebuildModelList(models, presets, wanted) {
    for (const m of models) checkpoints.set(m.name, m);
    const all = Array.from(checkpoints.values());
    const entry = (m) => ({ value: m.name, text: m.label || m.name });
    const shipped = all.filter((m) => m.shipped).map(entry);
    const real = all.filter((m) => m.kind === "real").map(entry);
    const served = all.filter((m) => m.kind === "served").map(entry);
    const uploaded = all.filter((m) => !m.shipped && m.kind !== "real" && m.kind !== "served").map(entry);
    modelSelect.replaceChildren();
    if (shipped.length) modelSelect.append(group(t("home-models-shipped"), shipped));
    if (real.length) modelSelect.append(group(t("home-models-real"), real));
    if (served.length) modelSelect.append(group(t("home-models-served"), served));
    if (uploaded.length) modelSelect.append(group(t("home-models-uploaded"), uploaded));
    modelSelect.append(option("", t("home-models-random")));
    if (presets.length)
      modelSelect.append(
        group(
          t("home-models-presets"),
          presets.map((p) => ({ value: PRESET + p.name, text: p.label || p.name })),
          "", // GET /api/models answers the presets' labels in the page's language
        ),
      );
    // A name the server does not know (a stale link) stays selected: its error sits beside it.
    if (wanted && !wanted.startsWith(PRESET) && !checkpoints.has(wanted)) modelSelect.append(option(wanted, wanted));
    modelSelect.value = wanted;
  }

  function onModelChange(presetsByValue, apply = true) {
    const value = modelSelect.value;
    const checkpoint = checkpoints.get(value);
    // A checkpoint brings its own sizes and tokenizer; disabled fields are not submitted.
    configFields.disabled = Boolean(checkpoint) || (value !== "" && !value.startsWith(PRESET));
    tokenizer.disabled = Boolean(checkpoint);
    document.getElementById("f-seed").disabled = Boolean(checkpoint);
    showTokenizer(tokenizer, checkpoint);
    if (checkpoint) {
      setConfig({ ...checkpoint.config, vocab_size: undefined }); // shown (disabled): the model's own sizes
      help.textContent = describeCheckpoint(checkpoint);
      const untouched = text.isUntouched();
      text.setExamples(checkpoint.examples);
      if (apply && untouched && checkpoint.examples?.length) text.set(checkpoint.examples[0]);
      text.updateCount();
      return;
    }
    text.setExamples(null);
    const preset = presetsByValue.get(value);
    // A preset's description comes from GET /api/models in the page's language.
    help.textContent = preset?.description ? preset.description : t("home-model-help");
    help.removeAttribute("lang");
    if (apply && preset) applyPreset(preset);
  }

  async function loadModels() {
    const wanted = modelSelect.value; // the server's choice, or the person's if they were quicker
    const { models = [], presets = [] } = await getModels();
    const presetsByValue = new Map(presets.map((p) => [PRESET + p.name, p]));
    const matching = presets.find(
      (p) => sameConfig(form, p.config || {}) && (!p.tokenizer || p.tokenizer === tokenizer.value),
    );
    rebuildModelList(models, presets, wanted || (matching ? PRESET + matching.name : ""));
    modelSelect.addEventListener("change", () => onModelChange(presetsByValue));
    // home/upload.js announces a checkpoint it added: it joins the list, selected.
    document.addEventListener("xt:model-uploaded", (event) => {
      rebuildModelList([event.detail], presets, event.detail.name);
      onModelChange(presetsByValue);
    });
    onModelChange(presetsByValue, false);
    form.dataset.modelsLoaded = "true"; // the model list is complete (the browser tests wait on it)
  }

  form.addEventListener("input", (event) => {
    // Editing a size by hand means the config is no longer the preset's.
    if (event.target.dataset.config && modelSelect.value.startsWith(PRESET)) modelSelect.value = "";
  });
  loadModels().catch((error) => {
    help.textContent = t("home-models-unavailable", { error: error.message });
  });
}
