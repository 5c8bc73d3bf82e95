// "Compare with…": the same step of another trace whose step list aligns with this one, drawn
// A | B | B − A with how far B is from A (GET /api/traces/{a}/steps/{index}/compare/{b}).
// Presets build B's spec from this page's: the other precision, N more training steps, the
// other optimizer, another text; on a recorded run's step, another step of the run (the run fixes
// every other field; docs/film.md). B's spec rides in the URL's fragment (#compare=<JSON>), so
// the page's link carries both specs and reopens the comparison on whatever step it shows.

import { request, TraceClient } from "../lib/api.js";
import { formatError, h } from "../lib/dom.js";
import { figureCard } from "../lib/figures.js";
import { local, t } from "../lib/words.js";

const KEY = "compare";
const OTHER_OPTIMIZER = { sgd: "adamw", adamw: "sgd" };
// A bfloat16 step beside the same in float16 (and back); its loss-scale fields go with it.
const OTHER_LOW = { bfloat16: "float16", float16: "bfloat16" };
const LOW_FIELDS = ["loss_scale", "loss_scale_growth", "flush_to_zero"];

/** B's dtype for the "dtype" and "float32" presets: a low precision's other one, or float32 (its
 * loss-scale fields dropped); float32 and float64 swap. */
function dtypeSpec(spec, preset) {
  if (preset === "dtype" && OTHER_LOW[spec.dtype]) return { ...spec, dtype: OTHER_LOW[spec.dtype] };
  if (preset === "float32")
    return { ...Object.fromEntries(Object.entries(spec).filter(([k]) => !LOW_FIELDS.includes(k))), dtype: "float32" };
  return { ...spec, dtype: spec.dtype === "float64" ? "float32" : "float64" };
}

/** The presets' [value, label] pairs for a spec built from fields (a run's step has its own). */
function presets(spec) {
  return [
    ...(OTHER_LOW[spec.dtype]
      ? [
          ["dtype", t("js-precision-compare-other", { dtype: OTHER_LOW[spec.dtype] })],
          ["float32", t("js-precision-compare-float32")],
        ]
      : [["dtype", t(spec.dtype === "float64" ? "js-compare-float32" : "js-compare-float64")]]),
    ["steps", t("js-compare-steps")],
    ["optimizer", t("js-compare-other-optimizer")],
    ["text", t("js-compare-other-text")],
  ];
}

function fragment() {
  return new URLSearchParams(window.location.hash.slice(1));
}

function rememberB(specB) {
  const url = new URL(window.location.href);
  const params = new URLSearchParams(url.hash.slice(1));
  if (specB) params.set(KEY, JSON.stringify(specB));
  else params.delete(KEY);
  url.hash = params.toString();
  window.history.replaceState(window.history.state, "", url);
}

/** B's spec for a preset of A's (`value`: the preset's input, N or a text); null with the reason. */
export function presetSpec(spec, preset, value) {
  const trains = spec.optimizer !== null && spec.optimizer !== undefined;
  if (preset === "run_step") {
    const n = Number.parseInt(value, 10);
    if (!(n >= 0)) return { reason: t("film-view-js-compare-give-step") };
    return { spec: { run: spec.run, run_step: n } };
  }
  if (preset === "dtype" || preset === "float32") return { spec: dtypeSpec(spec, preset) };
  if (preset === "text") {
    if (spec.text === null) return { reason: t("js-compare-no-text") };
    return value ? { spec: { ...spec, text: value } } : { reason: t("js-compare-type-text") };
  }
  if (!trains) return { reason: t("js-compare-no-update") };
  if (preset === "steps") {
    const n = Number.parseInt(value, 10);
    if (!(n > 0)) return { reason: t("js-compare-give-n") };
    return { spec: { ...spec, train_steps: (spec.train_steps || 0) + n } };
  }
  return { spec: { ...spec, optimizer: { name: OTHER_OPTIMIZER[spec.optimizer.name] || "adamw" } } };
}

function differenceText(tensor) {
  const d = tensor.difference;
  const values = { label: tensor.label, name: tensor.name };
  if (d.identical) return t("js-compare-identical", values);
  return t("js-compare-difference", {
    ...values,
    dtypeA: tensor.dtype_a,
    dtypeB: tensor.dtype_b,
    rel: local(formatError(d.rel)),
    maxAbs: local(formatError(d.max_abs)),
    maxRel: local(formatError(d.max_rel)),
  });
}

function sideText(name, side) {
  if (side.query.run) {
    const loss = side.loss === null ? t("js-numbers-not-finite") : local(side.loss.toPrecision(6));
    return t("film-view-js-compare-side", { name, run: side.query.run, step: Number(side.query.run_step), loss });
  }
  const optimizer = side.optimizer
    ? t("js-compare-optimizer", { name: side.optimizer.name, lr: local(String(side.optimizer.lr)) })
    : t("js-compare-no-optimizer");
  const loss = side.loss === null ? t("js-numbers-not-finite") : local(side.loss.toPrecision(6));
  return t("js-compare-side", { name, dtype: side.dtype, optimizer, steps: side.train_steps, loss });
}

function drawComparison(box, answer) {
  const cards = [];
  const parts = answer.tensors.map((tensor) => {
    const row = tensor.figures.map((figure) => {
      const card = figureCard(figure);
      cards.push(card);
      return card.element;
    });
    return h(
      "section",
      { className: "compare-tensor" },
      h("h3", { text: differenceText(tensor) }),
      h("div", { className: "compare-row" }, row),
    );
  });
  box.replaceChildren(
    h("p", { className: "note", text: sideText("A", answer.a) }),
    h("p", { className: "note", text: sideText("B", answer.b) }),
    ...parts,
  );
  return Promise.all(cards.map((card) => card.draw()));
}

/** The control under every step view; `spec` is this page's (#xt-spec), `seq()` the sequence shown. */
export function createCompare({ client, spec, seq }) {
  let specB = null;
  try {
    specB = JSON.parse(fragment().get(KEY) || "null");
  } catch {
    specB = null;
  }

  async function run(box, index) {
    box.replaceChildren(h("p", { className: "note", role: "status", text: t("js-compare-running") }));
    try {
      const b = await new TraceClient(specB).open();
      const answer = await request(
        `/api/traces/${encodeURIComponent(client.id)}/steps/${index}/compare/${encodeURIComponent(b.id)}?seq=${seq()}`,
      );
      await drawComparison(box, answer);
      box.dataset.compared = String(index);
    } catch (error) {
      box.replaceChildren(h("p", { className: "note compare-refused", role: "alert", text: error.message }));
    }
  }

  /** Adds the control (and, when the URL names a B, its comparison) under step `index`. */
  function decorateStep(stepView, index) {
    if (spec.quiz) return; // a quiz's difference would point at its fault (the server answers 403)
    const preset = h(
      "select",
      { "aria-label": t("js-compare-with"), className: "compare-preset" },
      (spec.run ? [["run_step", t("film-view-js-compare-run-step")]] : presets(spec)).map(([value, text]) =>
        h("option", { value, text }),
      ),
    );
    const input = h("input", {
      type: "text",
      className: "compare-value",
      size: "24",
      "aria-label": t("js-compare-value"),
    });
    const box = h("div", { className: "compare-result" });
    const start = h("button", {
      type: "button",
      text: t("js-compare-start"),
      onclick: () => {
        const made = presetSpec(spec, preset.value, input.value.trim());
        if (!made.spec) {
          box.replaceChildren(h("p", { className: "note compare-refused", role: "alert", text: made.reason }));
          return;
        }
        specB = made.spec;
        rememberB(specB);
        run(box, index);
      },
    });
    const stop = h("button", {
      type: "button",
      className: "button-quiet",
      text: t("js-compare-stop"),
      onclick: () => {
        specB = null;
        rememberB(null);
        box.replaceChildren();
      },
    });
    const section = h(
      "section",
      { className: "compare", "aria-label": t("js-compare-section") },
      h("h2", { text: t("js-compare-heading") }),
      h("div", { className: "compare-controls" }, preset, input, start, stop),
      box,
    );
    stepView.append(section);
    if (specB) run(box, index);
  }

  return { decorateStep };
}
