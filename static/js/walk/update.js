// The update step (phase "update"): a summary line and a chooser for the parameter whose ΔW
// and gradient are drawn (GET /api/traces/{id}/update?param=...). The other figures (loss,
// gradient norms, update ratios, line search) come with the step like any step's.

import { formatNumber, h } from "../lib/dom.js";
import { figureCard, findFigureCard, purgeWithin } from "../lib/figures.js";
import { local, t } from "../lib/words.js";

function shape(dims) {
  return dims.length ? dims.join("×") : t("js-shape-scalar");
}

function facts(info) {
  const after = info.loss_after === null ? "—" : local(formatNumber(info.loss_after));
  return h(
    "p",
    { className: "update-facts" },
    h("span", { text: info.optimizer_label }),
    h("span", { text: t("js-update-loss", { before: local(formatNumber(info.loss_before)), after }) }),
    h("span", { text: t("js-update-norm", { norm: local(formatNumber(info.grad_norm)) }) }),
    info.train_steps ? h("span", { text: t("js-update-after-training", { steps: info.train_steps }) }) : null,
  );
}

async function showParam(container, client, name, isCurrent) {
  const answer = await client.update(name);
  if (!isCurrent()) return;
  for (const figure of answer.figures) {
    const old = findFigureCard(container, figure.id)?.card;
    if (!old) continue;
    purgeWithin(old);
    const card = figureCard(figure);
    old.replaceWith(card.element);
    await card.draw();
  }
}

/** Adds the update step's summary and parameter chooser to a rendered step. */
export function attachUpdateControls(container, step, { client, isCurrent }) {
  const info = step.update;
  if (!info) return;
  const select = h(
    "select",
    { id: "update-param" },
    info.params.map((p) =>
      h("option", {
        value: p.name,
        text: t("js-update-param", { name: p.name, shape: shape(p.shape), ratio: local(formatNumber(p.update_ratio)) }),
        selected: p.name === info.shown,
      }),
    ),
  );
  const status = h("span", { className: "field-help", role: "status", "aria-live": "polite" });
  select.addEventListener("change", async () => {
    status.textContent = t("js-training-loading");
    try {
      await showParam(container, client, select.value, isCurrent);
      status.textContent = "";
    } catch (error) {
      status.textContent = t("js-update-failed", { name: select.value, error: error.message });
    }
  });
  const chooser = h(
    "div",
    { className: "update-controls" },
    h("label", { className: "control" }, `${t("js-update-choose")} `, select),
    status,
  );
  const header = container.querySelector(".step-facts");
  if (header) header.after(facts(info));
  const anchor = findFigureCard(container, "update.delta")?.card;
  if (anchor) anchor.before(chooser);
}
