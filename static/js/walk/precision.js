// A bfloat16 or float16 step on the walk page (GET /api/traces/{id}/precision, docs/precision.md):
// the timeline marks the steps whose tensor loses information (the rule said under every step),
// and each step gains a panel: which precision its op runs in, forward and backward; its tensor's
// and gradient's health against the float64 twin; their exponents beside bfloat16's and float16's
// ranges; on the update step, the share of each parameter's update weights held in the format
// would lose (the float32 master weights keep it). A float32 or float64 page has none of it.

import { formatError, formatNumber, h } from "../lib/dom.js";
import { figureCard } from "../lib/figures.js";
import { local, t } from "../lib/words.js";
import { stepLabel } from "./timeline.js";

const LOW = new Set(["bfloat16", "float16"]);
const SIDE_BY_SIDE = ["float16", "bfloat16"]; // the ranges every histogram marks, narrowest first
const percent = (share) => `${local(formatNumber(100 * share))} %`;

/** The tensor a step shows and its health: a forward (or loss) step's value, a backward step's gradient. */
function healthOf(tensors, step) {
  const tensor = tensors.get(step.name);
  if (!tensor || step.phase === "update") return null;
  return step.phase === "backward" ? { which: "grad", health: tensor.grad } : { which: "value", health: tensor.value };
}

function stepOf(trace, first) {
  if (!first) return null;
  const backward = first.which === "grad";
  return trace.steps.find((s) => s.name === first.name && (s.phase === "backward") === backward) || null;
}

function ruleText(answer, trace) {
  const limit = percent(answer.rule.roundoffs * answer.unit_roundoff);
  const rule = t("js-precision-rule", {
    dtype: answer.dtype,
    roundoffs: answer.rule.roundoffs,
    limit,
    flushed: local(String(100 * answer.rule.flushed)),
  });
  const first = stepOf(trace, answer.first_losing);
  const where = first
    ? t("js-precision-first", { label: stepLabel(first) })
    : t("js-precision-first-none", { dtype: answer.dtype });
  return `${rule} ${where}`;
}

function opText(answer, step) {
  if (step.phase === "update") return t("js-precision-op-update", { dtype: answer.dtype });
  const op = answer.ops.find((o) => o.kind === step.kind);
  if (!op) return "";
  const id = op.precision === "rounded" ? "js-precision-op-rounded" : "js-precision-op-float32";
  return t(id, { kind: step.kind, dtype: answer.dtype });
}

function healthRow(label, health) {
  return h(
    "tr",
    { className: health.loses_information ? "loses" : "" },
    h("th", { scope: "row", translate: "no", text: label }),
    h("td", { translate: "no", text: health.held_in }),
    h("td", { text: local(formatError(health.rel_error)) }),
    [health.flushed, health.subnormal, health.overflowed].map((share) => h("td", { text: percent(share) })),
    h("td", { text: t(health.loses_information ? "js-precision-loses" : "js-precision-keeps") }),
  );
}

function healthTable(rows) {
  const columns = [
    "js-precision-col-tensor",
    "js-precision-col-held",
    "js-precision-col-error",
    "js-precision-col-flushed",
    "js-precision-col-subnormal",
    "js-precision-col-overflowed",
    "js-precision-col-verdict",
  ];
  return h(
    "div",
    { className: "table-scroll", tabindex: "0", role: "region", "aria-label": t("js-precision-table") },
    h(
      "table",
      { className: "numbers precision-health" },
      h("caption", { text: t("js-precision-table") }),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          columns.map((id) => h("th", { scope: "col", text: t(id) })),
        ),
      ),
      h(
        "tbody",
        {},
        rows.map(([label, health]) => healthRow(label, health)),
      ),
    ),
  );
}

/** A format's range as two bars above the histogram: subnormal (light), normal (dark). */
function rangeShapes(range, name, band, [lo, hi]) {
  const clip = (x) => Math.max(lo, Math.min(hi, x));
  const y = { yref: "paper", y0: 0.84 + 0.08 * band, y1: 0.89 + 0.08 * band, line: { width: 0 } };
  return {
    shapes: [
      {
        type: "rect",
        xref: "x",
        x0: clip(range.subnormal - 0.5),
        x1: clip(range.normal - 0.5),
        ...y,
        fillcolor: "#9db7e0",
      },
      {
        type: "rect",
        xref: "x",
        x0: clip(range.normal - 0.5),
        x1: clip(range.largest + 0.5),
        ...y,
        fillcolor: "#0b57d0",
      },
    ],
    annotation: {
      xref: "paper",
      x: 1,
      xanchor: "right",
      yref: "paper",
      y: (y.y0 + y.y1) / 2,
      yanchor: "middle",
      showarrow: false,
      bgcolor: "rgba(255,255,255,0.85)",
      text: t("js-precision-range", {
        dtype: name,
        subnormal: range.subnormal,
        normal: range.normal,
        largest: range.largest,
      }),
    },
  };
}

/** The exponents of a tensor's nonzero finite entries, coloured by where the held format puts
 * them, below bfloat16's and float16's ranges. */
function histogram(answer, label, health, scaled) {
  const { lowest, counts } = health.exponents;
  const exponents = counts.map((_, i) => lowest + i);
  const held = health.range;
  const narrow = answer.formats.float16;
  const span = [Math.min(lowest, narrow.subnormal) - 2, Math.max(lowest + counts.length, narrow.largest) + 2];
  const colour = (e) => (e > held.largest ? "#b3261e" : e < held.normal ? "#7a5200" : "#1a6b21");
  const ranges = SIDE_BY_SIDE.map((name, band) => rangeShapes(answer.formats[name], name, band, span));
  const title = t("js-precision-histogram-title", { name: label, dtype: health.held_in });
  return {
    id: "precision.exponents",
    title,
    note: [
      t("js-precision-histogram-note", { dtype: health.held_in }),
      scaled ? t("js-precision-histogram-scaled", { scale: answer.loss_scale }) : "",
    ].join(" "),
    figure: {
      data: [
        {
          type: "bar",
          x: exponents,
          y: counts,
          marker: { color: exponents.map(colour) },
          name: t("js-precision-axis-count"),
          hovertemplate: `${t("js-precision-histogram-hover", { x: "%{x}", y: "%{y}" })}<extra></extra>`,
        },
      ],
      layout: {
        height: 360,
        margin: { l: 70, r: 20, t: 20, b: 56 },
        showlegend: false,
        bargap: 0.1,
        xaxis: { range: span, title: { text: t("js-precision-axis-exponent") }, dtick: 4 },
        yaxis: { domain: [0, 0.8], title: { text: t("js-precision-axis-count") } },
        shapes: ranges.flatMap((r) => r.shapes),
        annotations: ranges.map((r) => r.annotation),
      },
    },
    table: {
      columns: [t("js-precision-axis-count")],
      index: exponents.map(String),
      rows: counts.map((n) => [n]),
    },
  };
}

/** The update step: per parameter, the share of ‖ΔW‖ weights held in the format would lose,
 * with its gradient's health (the table). */
function updateFigure(answer) {
  const grads = new Map((answer.params || []).map((p) => [p.name, p.grad])); // null: a real model's
  const names = answer.update.map((u) => u.name);
  const lost = answer.update.map((u) => u.lost);
  return {
    id: "precision.update",
    title: t("js-precision-update-title", { dtype: answer.dtype }),
    note: t("js-precision-update-note", { dtype: answer.dtype }),
    figure: {
      data: [{ type: "bar", x: lost, y: names, orientation: "h", marker: { color: "#7a5200" } }],
      layout: {
        height: Math.max(260, 70 + 22 * names.length),
        margin: { l: 200, r: 20, t: 20, b: 56 },
        xaxis: { range: [0, 1], tickformat: ".0%", title: { text: t("js-precision-update-axis") } },
        yaxis: { autorange: "reversed", automargin: true },
      },
    },
    table: {
      columns: [t("js-precision-update-axis"), t("js-precision-col-error"), t("js-precision-col-flushed")],
      index: names,
      rows: names.map((name, i) => [lost[i], grads.get(name)?.rel_error ?? null, grads.get(name)?.flushed ?? null]),
    },
  };
}

function updateText(answer) {
  const worst = answer.update.reduce((a, b) => (b.lost > a.lost ? b : a), answer.update[0]);
  return t("js-precision-update-text", { dtype: answer.dtype, param: worst.name, lost: percent(worst.lost) });
}

function panelParts(answer, tensors, step) {
  const shown = healthOf(tensors, step);
  const parts = [h("p", { className: "precision-op", text: opText(answer, step) })];
  if (shown) {
    const tensor = tensors.get(step.name);
    const rows = [
      [step.name, tensor.value],
      [`dL/d${step.name}`, tensor.grad],
    ];
    parts.push(healthTable(shown.which === "grad" ? rows.reverse() : rows));
    const grad = shown.which === "grad";
    // a low-precision gradient is counted as the scaled backward holds it (S·g: xt_core/precision/health.py)
    const scaled = grad && shown.health.held_in === answer.dtype && answer.loss_scale !== 1;
    return { parts, figure: histogram(answer, grad ? `dL/d${step.name}` : step.name, shown.health, scaled) };
  }
  if (step.phase === "update" && answer.update?.length) {
    parts.push(h("p", { className: "precision-update-text", text: updateText(answer) }));
    return { parts, figure: updateFigure(answer) };
  }
  return { parts, figure: null };
}

/** `client` the page's TraceClient, `spec` its canonical spec. */
export function createPrecision({ client, spec }) {
  const low = LOW.has(spec.dtype) && !spec.quiz; // a quiz's overflows could point at its fault (a 403)
  let loaded = null;
  const load = () => {
    loaded ||= client.call("/precision").then((answer) => ({
      answer,
      tensors: new Map(answer.tensors.map((x) => [x.name, x])),
    }));
    return loaded;
  };

  /** Marks the timeline's cells whose step loses information (the first one apart). */
  async function start(trace) {
    if (!low) return;
    const { answer, tensors } = await load();
    const first = stepOf(trace, answer.first_losing);
    for (const step of trace.steps) {
      const shown = healthOf(tensors, step);
      if (!shown?.health.loses_information) continue;
      const cell = document.querySelector(`#timeline .cell[data-index="${step.index}"]`);
      if (!cell) continue;
      cell.classList.add("loses-precision");
      if (step === first) cell.classList.add("precision-first");
      const label = t("js-precision-cell", { label: stepLabel(step), dtype: answer.dtype });
      cell.title = label;
      cell.setAttribute("aria-label", label);
    }
  }

  /** Adds the panel under a drawn step; `isCurrent()` false once the reader has moved on. */
  async function decorateStep(stepView, step, isCurrent) {
    if (!low) return;
    const section = h(
      "section",
      { className: "precision-panel", "aria-labelledby": "precision-heading" },
      h("h2", { id: "precision-heading", text: t("js-precision-heading", { dtype: spec.dtype }) }),
      h("p", { className: "note", role: "status", text: t("js-precision-loading") }),
    );
    stepView.append(section);
    let answer;
    let tensors;
    try {
      ({ answer, tensors } = await load());
    } catch (error) {
      section.lastChild.textContent = t("js-precision-failed", { error: error.message });
      return;
    }
    if (!isCurrent()) return;
    const { parts, figure } = panelParts(answer, tensors, step);
    const card = figure ? figureCard(figure) : null;
    section.lastChild.replaceWith(
      ...parts,
      card ? card.element : "",
      h("p", { className: "field-help", text: ruleText(answer, client.trace) }),
    );
    if (card) await card.draw();
  }

  return { start, decorateStep };
}
