// The whole tensor's numbers beside a figure (the step JSON's `stats`, app/steps/stats.py):
// shape, dtype, min, max, mean, std, ‖·‖₂ (with the page's decimal mark), NaN / ±inf counts and
// the argmax with its token.

import { formatNumber, formatShape, h } from "./dom.js";
import { local, t } from "./words.js";

/** "[0, 2, 5, 0] (sequence 0, head 2, 5 ␣the, 0 The)": the argmax and what its coordinates name. */
export function argmaxText(stats) {
  if (!stats.argmax) return "—";
  const named = (stats.argmax_labels || []).filter((label) => label);
  const coordinates = `[${stats.argmax.join(", ")}]`;
  return named.length ? `${coordinates} (${named.join(", ")})` : coordinates;
}

/** The shape, with its axes' names when it has them: "4 × 47 (sequence, position)". */
function shapeText(stats) {
  const shape = formatShape(stats.shape);
  return stats.axes?.length ? `${shape} (${stats.axes.join(", ")})` : shape;
}

// A NaN count above zero is marked (class names built from single words: lib/words.js's rule
// reads a literal of two words as a sentence).
const BAD_STAT = ["stat", "bad"].join(" ");

/** The stats as a definition list, one term per number (a screen reader reads each by name). */
export function statsLine(stats) {
  if (!stats) return null;
  const items = [
    [t("js-stats-shape"), shapeText(stats)],
    ["dtype", stats.dtype],
    [t("js-stats-min"), local(formatNumber(stats.min))],
    [t("js-stats-max"), local(formatNumber(stats.max))],
    [t("js-stats-mean"), local(formatNumber(stats.mean))],
    [t("js-stats-std"), local(formatNumber(stats.std))],
    ["‖·‖₂", local(formatNumber(stats.norm))],
    ["NaN", String(stats.nan)],
    ["±inf", String(stats.inf)],
    ["argmax", argmaxText(stats)],
  ];
  return h(
    "dl",
    { className: "tensor-stats", "aria-label": t("js-stats-label"), dataset: { stats: "" } },
    items.map(([term, value]) =>
      h(
        "div",
        { className: term === "NaN" && value !== "0" ? BAD_STAT : "stat" },
        h("dt", { text: term }),
        h("dd", { text: value }),
      ),
    ),
  );
}
