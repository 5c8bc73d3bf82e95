// The whole tensor's numbers beside a figure (the step JSON's `stats`, app/steps/stats.py):
// shape, dtype, min, max, mean, std, ‖·‖₂, NaN / ±inf counts and the argmax with its token.

import { formatNumber, formatShape, h } from "./dom.js";

/** "[0, 2, 5, 0] (sequence 0, head 2, 5 ␣the, 0 The)": the argmax and what its coordinates name. */
export function argmaxText(stats) {
  if (!stats.argmax) return "—";
  const named = (stats.argmax_labels || []).filter((label) => label);
  return `[${stats.argmax.join(", ")}]${named.length ? ` (${named.join(", ")})` : ""}`;
}

/** The stats as a definition list, one term per number (a screen reader reads each by name). */
export function statsLine(stats) {
  if (!stats) return null;
  const items = [
    ["shape", `${formatShape(stats.shape)}${stats.axes?.length ? ` (${stats.axes.join(", ")})` : ""}`],
    ["dtype", stats.dtype],
    ["min", formatNumber(stats.min)],
    ["max", formatNumber(stats.max)],
    ["mean", formatNumber(stats.mean)],
    ["std", formatNumber(stats.std)],
    ["‖·‖₂", formatNumber(stats.norm)],
    ["NaN", String(stats.nan)],
    ["±inf", String(stats.inf)],
    ["argmax", argmaxText(stats)],
  ];
  return h(
    "dl",
    { className: "tensor-stats", "aria-label": "the whole tensor's numbers", dataset: { stats: "" } },
    items.map(([term, value]) =>
      h(
        "div",
        { className: term === "NaN" && value !== "0" ? "stat bad" : "stat" },
        h("dt", { text: term }),
        h("dd", { text: value }),
      ),
    ),
  );
}
