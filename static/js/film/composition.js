// "Which gradients build the head" on the film (film.js; docs/film.md): at the scrubbed step, layer
// 1's dL/dW_K and dL/dW_Q split by what wrote the residual stream it reads
// (GET /api/runs/{name}/composition: a replay of seconds, asked for by a button), drawn as each
// write's share of the gradient and the cosine of its part with the weights' change over the next
// steps, for W_K and W_Q side by side.

import { request } from "../lib/api.js";
import { formatNumber } from "../lib/dom.js";
import { local, plotLocale, t } from "../lib/words.js";

const COLOURS = { wk: "#d62728", wq: "#1f77b4" };
const WRITE = /^L(\d+)\.(?:head(\d+)|ffn)$/;

/** A write's label: "embedding", "layer 0, head 1<br>previous token 0.63", "layer 0, feed-forward"; `previous`
 * (layer, head) the heads' previous-token scores at the step. */
export function writeLabel(write, previous) {
  if (write === "embedding") return t("film-view-js-write-embedding");
  const [, layer, head] = write.match(WRITE) || [];
  if (layer === undefined) return write;
  if (head === undefined) return t("film-view-js-write-ffn", { layer: Number(layer) });
  const score = local(previous[Number(layer)][Number(head)].toFixed(2));
  const name = t("film-view-js-write-head", { layer: Number(layer), head: Number(head) });
  return `${name}<br>${t("film-view-js-write-previous", { score })}`; // Plotly breaks a tick label at <br>
}

/** The figure ({data, layout}) of a composition answer: shares on the left, cosines on the right. */
export function compositionFigure(answer, width) {
  const narrow = width < 600;
  const data = [];
  for (const projection of ["wk", "wq"]) {
    const summed = answer.projections[projection].summed;
    const writes = Object.keys(summed.writes);
    const labels = writes.map((write) => writeLabel(write, answer.previous));
    const name = t("film-view-js-series", { projection: projection === "wk" ? "W_K" : "W_Q", ahead: answer.ahead });
    const common = { type: "bar", x: labels, name, legendgroup: projection, marker: { color: COLOURS[projection] } };
    data.push({ ...common, y: writes.map((w) => summed.writes[w].share), xaxis: "x", yaxis: "y" });
    const cosines = writes.map((w) => summed.writes[w].cosine_with_change);
    data.push({ ...common, y: cosines, xaxis: "x2", yaxis: "y2", showlegend: false });
  }
  const layout = {
    height: narrow ? 760 : 360,
    margin: { l: 52, r: 12, t: 40, b: 8 },
    barmode: "group",
    legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom" },
    xaxis: { domain: narrow ? [0, 1] : [0, 0.46], anchor: "y", automargin: true },
    yaxis: { domain: narrow ? [0.64, 1] : [0, 1], anchor: "x", title: { text: t("film-view-js-share") } },
    xaxis2: { domain: narrow ? [0, 1] : [0.54, 1], anchor: "y2", automargin: true },
    yaxis2: { domain: narrow ? [0, 0.3] : [0, 1], anchor: "x2", title: { text: t("film-view-js-cosine") } },
  };
  return { data, layout };
}

function measuredText(answer) {
  const cosine = (projection, kind) => local(formatNumber(answer.projections[projection][kind].cosine_with_change));
  const text = t("film-view-js-measured", {
    step: answer.step,
    layer: answer.layer,
    ahead: answer.ahead,
    summedK: cosine("wk", "summed"),
    summedQ: cosine("wq", "summed"),
    oneK: cosine("wk", "one_step"),
    oneQ: cosine("wq", "one_step"),
    seconds: local(formatNumber(answer.seconds)),
  });
  return answer.cached ? `${text} ${t("film-view-js-cached")}` : text;
}

/** Wires the "measure at this step" button: `chosen()` the scrubbed step, `replayed(step)` the steps
 * its replay makes before it. */
export function wireComposition(name, chosen, replayed) {
  const button = document.getElementById("film-composition");
  const ahead = document.getElementById("film-ahead");
  const status = document.getElementById("film-composition-status");
  const plotDiv = document.getElementById("film-composition-plot");
  const caption = document.getElementById("film-composition-caption");
  button.addEventListener("click", async () => {
    const step = chosen();
    const steps = Number(ahead.value);
    button.disabled = true;
    status.textContent = t("film-view-js-measuring", { step, replayed: replayed(step), ahead: steps });
    try {
      const query = new URLSearchParams({ step: String(step), layer: "1", ahead: String(steps) });
      const answer = await request(`/api/runs/${encodeURIComponent(name)}/composition?${query}`);
      const figure = compositionFigure(answer, plotDiv.clientWidth || window.innerWidth);
      await window.Plotly.react(plotDiv, figure.data, figure.layout, {
        responsive: true,
        displaylogo: false,
        ...plotLocale,
      });
      caption.textContent = t("film-view-js-plot", { layer: 1, step, ahead: answer.ahead });
      status.textContent = measuredText(answer);
      plotDiv.dataset.step = String(step);
    } catch (error) {
      status.textContent = t("film-view-js-failed", { error: error.message });
    } finally {
      button.disabled = false;
    }
  });
}
