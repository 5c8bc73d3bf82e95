// The home form's loss-scale fields (templates/_precision_fields.html): shown and sent for a
// bfloat16 or float16 step only; a float32 or float64 spec may not name them (the server refuses).

const LOW = new Set(["bfloat16", "float16"]);

export function wirePrecisionFields() {
  const dtype = document.getElementById("f-dtype");
  const fields = document.getElementById("precision-fields");
  if (!dtype || !fields) return;
  const refresh = () => {
    // a refused field stays in view with its message until the precision changes
    const low = LOW.has(dtype.value) || (fields.classList.contains("has-error") && !changed);
    fields.hidden = !low;
    fields.disabled = !low; // a disabled field is not sent
  };
  let changed = false;
  dtype.addEventListener("change", () => {
    changed = true;
    refresh();
  });
  refresh();
}
