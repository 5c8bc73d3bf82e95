// The home form's model sizes (the fields marked data-config): filled in from a preset or a
// checkpoint, and compared with a preset's.

export function configInputs(form) {
  return Array.from(form.querySelectorAll("[data-config]"));
}

/** Sets every field the config names; a null (vocab_size) leaves it blank: automatic. */
export function fillConfig(form, config) {
  for (const input of configInputs(form)) {
    const value = config[input.dataset.config];
    if (value === undefined) continue;
    input.value = value === null ? "" : String(value);
  }
}

/** Numbers compare as numbers: "10000.0" in a field is the preset's 10000. */
function sameValue(value, text) {
  if (typeof value === "number") return text.trim() !== "" && Number(text) === value;
  return String(value) === text;
}

/** Whether the fields hold this config (vocab_size and the config's nulls ignored). */
export function sameConfig(form, config) {
  return configInputs(form).every((input) => {
    const value = config[input.dataset.config];
    return (
      value === undefined || value === null || input.dataset.config === "vocab_size" || sameValue(value, input.value)
    );
  });
}
