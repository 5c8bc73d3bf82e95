// The softmax Jacobian of one row, on softmax-backward steps: J = diag(p) - p pᵀ, and the
// chain rule J · dL/dp checked against the recorded dL/dscores (or dL/dlogits).

import { clear, errorBox, formatError, formatNumber, h, setOptions } from "../lib/dom.js";
import { clearPlots, plot, titleText, withoutTitle } from "../lib/figures.js";
import { local, t } from "../lib/words.js";

function positionOptions(trace, seq) {
  const labels = (trace.tokens.input_labels || [])[seq] || [];
  return Array.from({ length: trace.T }, (_, pos) => ({ value: pos, text: `${pos}: ${labels[pos] ?? ""}` }));
}

function select(label, options, value) {
  const node = h("select", {});
  setOptions(node, options, value);
  return { node, label: h("label", { className: "control" }, label, " ", node) };
}

function checkSummary(result, kind) {
  const recorded = kind === "output" ? "dL/dlogits" : "dL/dscores";
  if (result.sealed) {
    // A quiz before its answer: the server sends J · dL/dp but not the recorded gradient beside it.
    return h("p", { className: "badge-line" }, t("js-jacobian-sealed", { recorded }));
  }
  const ok = result.ok;
  return h(
    "p",
    { className: `badge-line` },
    h("span", {
      className: `badge ${ok ? "badge-ok" : "badge-bad"}`,
      text: t(ok ? "js-jacobian-ok" : "js-jacobian-bad"),
    }),
    ` ${t(ok ? "js-jacobian-matches" : "js-jacobian-differs", {
      recorded,
      abs: local(formatError(result.max_abs_error)),
      rel: local(formatError(result.max_rel_error)),
    })}`,
  );
}

function vectorsTable(result, kind) {
  const recorded = t("js-jacobian-recorded", { gradient: kind === "output" ? "dL/dlogits" : "dL/dscores" });
  const columns = ["p", "dL/dp", "J · dL/dp", ...(result.sealed ? [] : [recorded, t("js-jacobian-difference")])];
  const labels = result.labels || [];
  const rows = (result.p || []).map((p, j) => {
    const chain = result.chain?.[j];
    const rec = result.recorded?.[j];
    const diff = typeof chain === "number" && typeof rec === "number" ? chain - rec : null;
    const values = result.sealed ? [p, result.dprobs?.[j], chain] : [p, result.dprobs?.[j], chain, rec, diff];
    return h(
      "tr",
      {},
      h("th", { scope: "row", text: labels[j] ?? String(j) }),
      values.map((v) => h("td", { text: formatNumber(v) })),
    );
  });
  const caption = t(result.sealed ? "js-jacobian-rows-sealed" : "js-jacobian-rows");
  return h(
    "div",
    { className: "table-scroll tall", tabindex: "0", role: "region", "aria-label": t("js-jacobian-numbers") },
    h(
      "table",
      { className: "numbers" },
      h("caption", { text: caption }),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "col", text: t("js-jacobian-key") }),
          columns.map((c) => h("th", { scope: "col", text: c })),
        ),
      ),
      h("tbody", {}, rows),
    ),
  );
}

/** The panel for a step whose `jacobian` is not null; select(head, pos) loads one row.
 * `onPosition(pos)` is told each position shown (the step redraws what depends on it). */
export function createJacobianPanel(info, { client, trace, seq, onPosition = null }) {
  const isOutput = info.kind === "output";
  const nHead = info.n_head || 1;
  const lastPos = trace.T - 1;
  const head = select(
    t("js-jacobian-head"),
    Array.from({ length: nHead }, (_, i) => ({ value: i, text: t("js-jacobian-head-option", { head: i }) })),
    0,
  );
  // Attention: the last query sees every key. Output: position 0, as the step's identity check.
  const posLabel = t(isOutput ? "js-jacobian-position" : "js-jacobian-query-position");
  const pos = select(posLabel, positionOptions(trace, seq), isOutput ? 0 : lastPos);
  const show = h("button", { type: "button", className: "button-primary", text: t("js-jacobian-show") });
  const heading = h("h2", { id: "jacobian-heading", text: t("js-jacobian-heading") });
  const result = h("div", { className: "jacobian-result", "aria-live": "polite" });
  const hint = t(isOutput ? "js-jacobian-hint-output" : "js-jacobian-hint");
  const element = h(
    "section",
    {
      className: "jacobian",
      id: "jacobian",
      "aria-labelledby": "jacobian-heading",
      dataset: { layer: isOutput ? "output" : String(info.layer) }, // the softmax this panel is of
    },
    heading,
    h("p", { className: "field-help", text: hint }),
    h("div", { className: "jacobian-controls" }, isOutput ? null : head.label, pos.label, show),
    result,
  );

  let token = 0;
  async function load() {
    const mine = ++token;
    const query = { layer: isOutput ? "output" : info.layer, pos: Number(pos.node.value), seq };
    if (!isOutput) query.head = Number(head.node.value);
    heading.textContent = isOutput
      ? t("js-jacobian-heading-output", { pos: query.pos })
      : t("js-jacobian-heading-row", { layer: info.layer, head: query.head, pos: query.pos });
    clearPlots(result);
    result.append(h("p", { className: "loading", text: t("js-jacobian-computing") }));
    try {
      const data = await client.jacobian(query);
      if (mine !== token) return;
      await render(data);
      if (onPosition && mine === token) await onPosition(query.pos);
    } catch (error) {
      if (mine !== token) return;
      clearPlots(result);
      result.append(errorBox(error.message, load));
    }
  }

  async function render(data) {
    clearPlots(result);
    const figures = [data.figure, data.vectors_figure].filter(Boolean).map((figure) => ({
      figure: { ...figure, layout: withoutTitle(figure.layout) },
      caption: titleText(figure.layout),
      div: h("div", {
        className: "plot",
        role: "group",
        "aria-label": t("js-figure-plot", { title: titleText(figure.layout) }),
      }),
    }));
    result.append(
      checkSummary(data, info.kind),
      data.note ? h("p", { className: "note", text: data.note }) : "",
      h(
        "div",
        { className: "jacobian-plots" },
        figures.map((f) => h("div", {}, h("h3", { className: "plot-caption", text: f.caption }), f.div)),
      ),
      vectorsTable(data, info.kind),
    );
    for (const f of figures) await plot(f.div, f.figure);
  }

  show.addEventListener("click", load);
  return {
    element,
    load,
    select(headIndex, position) {
      if (!isOutput && headIndex !== null && headIndex >= 0) head.node.value = String(headIndex);
      if (position !== null && position >= 0 && position < trace.T) pos.node.value = String(position);
      element.scrollIntoView({ behavior: "smooth", block: "start" });
      return load();
    },
    clear: () => clear(result),
  };
}
