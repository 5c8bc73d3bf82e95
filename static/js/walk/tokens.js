// The token strip (positions, inputs, targets of the sequence shown) and, for a batch of
// several sequences, the select that picks which one the figures show.

import { clear, h, setOptions } from "../lib/dom.js";
import { t } from "../lib/words.js";

export function drawTokenStrip(trace, seq) {
  const strip = clear(document.getElementById("tokens"));
  const inputs = trace.tokens.input_labels[seq] || [];
  const targets = trace.tokens.target_labels[seq] || [];
  const row = (label, items) =>
    h(
      "div",
      { className: "token-row" },
      h("span", { className: "token-row-label", text: label }),
      items.map((text, pos) => h("span", { className: "token", title: t("js-tokens-position", { pos }) }, text)),
    );
  const positions = h(
    "div",
    { className: "token-row positions", "aria-hidden": "true" },
    h("span", { className: "token-row-label", text: t("js-tokens-pos") }),
    inputs.map((_, pos) => h("span", { className: "token", text: String(pos) })),
  );
  strip.append(positions, row(t("js-tokens-input"), inputs), row(t("js-tokens-target"), targets));
}

/** Shows the sequence select when the batch has several; `onChange(seq)` after a new choice. */
export function setupSequences(trace, seq, onChange) {
  if (!(trace.n_seq > 1)) return;
  const control = document.getElementById("seq-control");
  const selectNode = document.getElementById("seq-select");
  const options = Array.from({ length: trace.n_seq }, (_, i) => ({
    value: i,
    text: `${i}: ${(trace.tokens.input_labels[i] || []).slice(0, 12).join("")}`,
  }));
  setOptions(selectNode, options, seq);
  control.hidden = false;
  selectNode.addEventListener("change", () => onChange(Number(selectNode.value)));
}
