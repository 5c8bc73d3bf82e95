// The home form's bug-lab picker: describe the chosen bug, and grey out the bugs the chosen
// sizes rule out (GET /api/faults says which apply, e.g. the GQA bug needs n_kv_head < n_head).

import { getFaults } from "../lib/api.js";
import { t } from "../lib/words.js";

const CONFIG_KEYS = ["n_layer", "n_head", "n_kv_head", "tie_embeddings"];

export function wireBuglabPicker() {
  const select = document.getElementById("f-faults");
  const help = document.getElementById("faults-help");
  const layer = document.getElementById("f-fault_layer");
  if (!select || !help || !layer) return;
  const defaultHelp = help.textContent;

  function describe() {
    const option = select.selectedOptions[0];
    const value = select.value;
    layer.disabled = value === "";
    if (value === "") help.textContent = defaultHelp;
    else if (value === "quiz") help.textContent = t("home-fault-quiz-help");
    else if (option && option.dataset.applies === "false")
      help.textContent = t("home-fault-not-here", { reason: option.dataset.reason });
    else help.textContent = option?.dataset.description || defaultHelp;
  }

  function configQuery() {
    const query = new URLSearchParams();
    const model = document.getElementById("f-model");
    if (model?.value && !model.value.startsWith("preset:")) {
      query.set("model", model.value); // a checkpoint fixes the sizes
      return query;
    }
    for (const key of CONFIG_KEYS) {
      const input = document.querySelector(`[data-config="${key}"]`);
      if (input && input.value.trim() !== "") query.set(key, input.value.trim());
    }
    return query;
  }

  /** A size the server rejects answers 422: the form reports it on submit, the options stay. */
  async function refreshApplicable() {
    const { faults } = await getFaults(configQuery());
    for (const fault of faults) {
      const option = Array.from(select.options).find((o) => o.value === fault.name);
      if (!option) continue;
      option.dataset.label = option.dataset.label || option.textContent;
      option.disabled = !fault.applies && option.value !== select.value; // never disable the current choice
      option.dataset.applies = String(fault.applies);
      option.dataset.reason = fault.reason || "";
      // The reason goes in the help line when chosen: the option stays short enough to show whole.
      const label = option.dataset.label;
      option.textContent = fault.applies ? label : t("home-fault-not-here-short", { fault: label });
    }
    describe();
  }

  let timer = null;
  function refreshSoon() {
    clearTimeout(timer);
    timer = setTimeout(() => refreshApplicable().catch(() => {}), 250);
  }

  select.addEventListener("change", describe);
  document.getElementById("start-form").addEventListener("input", (event) => {
    if (CONFIG_KEYS.includes(event.target.dataset.config)) refreshSoon();
  });
  // A preset (the model select) fills the sizes without input events.
  document.getElementById("start-form").addEventListener("change", (event) => {
    if (CONFIG_KEYS.includes(event.target.dataset.config) || event.target.id === "f-model") refreshSoon();
  });
  // home/model_list.js fills the model list (and picks the model) after its own fetch: refresh then too.
  const modelSelect = document.getElementById("f-model");
  if (modelSelect) new MutationObserver(refreshSoon).observe(modelSelect, { childList: true, subtree: true });
  describe();
  refreshSoon();
}
