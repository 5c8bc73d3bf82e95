// One step: title, phase, warnings, the gradient check's badge, shapes, the forward and
// backward rules (MathML), the figures (the explanation after the first), how the gradient was
// checked (walk/gradcheck_view.js) and (on softmax-backward steps) the Jacobian.

import { formatShape, h } from "../lib/dom.js";
import { clearPlots, figureCard, headOfTrace, heatmapTraces, purgeWithin, rowOfPoint } from "../lib/figures.js";
import { markTerms } from "../lib/glossary.js";
import { t } from "../lib/words.js";
import { enlarge } from "./enlarge.js";
import { badgeClass, gradcheckBadge, gradcheckDetails } from "./gradcheck_view.js";
import { createJacobianPanel } from "./jacobian.js";
import { fitFormulas } from "./math_fit.js";
import { phaseName } from "./timeline.js";
import { attachUpdateControls } from "./update.js";

/** The one place the page inserts HTML: MathML the server generated from its own LaTeX. */
function mathBlock(rule) {
  const box = h("div", { className: "math", title: rule.latex || "" });
  box.innerHTML = rule.mathml || "";
  if (!rule.mathml) box.textContent = rule.latex || "";
  return box;
}

function rules(step) {
  const formula = step.formula || {};
  const primary = step.phase === "update" ? "update" : step.phase === "backward" ? "backward" : "forward";
  const sections = [
    ["forward", t("js-step-rule-forward")],
    ["backward", t("js-step-rule-backward")],
    ["update", t("js-step-rule-update")],
  ]
    .filter(([key]) => formula[key] && (formula[key].mathml || formula[key].latex))
    .map(([key, label]) =>
      h(
        "div",
        { className: `rule rule-${key}${key === primary ? " primary" : ""}` },
        h("p", { className: "rule-label", text: key === primary ? t("js-step-rule-this", { rule: label }) : label }),
        mathBlock(formula[key]),
      ),
    );
  if (!sections.length) return null;
  // Folded to the step's own rule on one line until opened: the first figure starts higher.
  const box = h("div", { className: "rules" }, sections);
  const toggle = h("button", {
    type: "button",
    className: "button-quiet rules-toggle",
    "aria-expanded": "false",
    text: t("js-step-rules-toggle"),
    title: t("js-step-rules-toggle.title"),
  });
  toggle.addEventListener("click", () => {
    const open = !box.classList.contains("open");
    box.classList.toggle("open", open);
    toggle.setAttribute("aria-expanded", String(open));
    fitFormulas(box);
  });
  box.append(toggle);
  return box;
}

/** The op's output first (a forward step draws its inputs, then what it computes): the figure
 * on the screen is what the step makes. Stable otherwise; idempotent (a cached step keeps it). */
function outputFirst(figures) {
  const output = figures.findIndex((f) => f.id.startsWith("output."));
  if (output <= 0) return figures;
  return [figures[output], ...figures.slice(0, output), ...figures.slice(output + 1)];
}

function shapesList(shapes) {
  const entries = Object.entries(shapes || {});
  if (!entries.length) return null;
  return h(
    "dl",
    { className: "shapes", "aria-label": t("js-step-shapes") },
    entries.map(([name, dims]) =>
      h("div", {}, h("dt", {}, h("code", { text: name })), h("dd", { text: formatShape(dims) })),
    ),
  );
}

function warningsBox(warnings) {
  if (!warnings?.length) return null;
  return h(
    "div",
    { className: "alert alert-warning step-warnings", role: "alert" },
    h("strong", { text: warnings.length === 1 ? `${t("js-step-warning")} ` : t("js-step-warnings") }),
    warnings.length === 1
      ? warnings[0]
      : h(
          "ul",
          {},
          warnings.map((w) => h("li", { text: w })),
        ),
  );
}

function header(step) {
  return h(
    "header",
    { className: "step-header" },
    h("span", { className: `badge phase-badge phase-${step.phase}`, text: phaseName(step.phase) }),
    h("h1", { id: "step-title", text: step.title }),
    h("code", { className: "step-name", text: step.name, title: step.name }),
    step.kind ? h("span", { className: "step-kind", translate: "no", text: step.kind }) : null,
  );
}

/** The step in one line: the server's `takeaway` when it sends one, else the explanation's
 * first clause (up to its first colon, semicolon or full stop). Shown in presenter mode. */
export function takeaway(step) {
  if (step.takeaway) return step.takeaway;
  const text = step.explanation || "";
  const end = text.search(/[:;](\s|$)|(?<!\b(?:i\.e|e\.g|cf|vs))\.(\s|$)/);
  return end > 0 ? text.slice(0, end) : text;
}

/** Rows of a heatmap's z: a plain array, or plotly's base64 typed array {dtype, bdata, shape}. */
function rowCount(z) {
  if (Array.isArray(z)) return z.length;
  if (z && typeof z.shape === "string") return Number(z.shape.split(",")[0]);
  if (z && Array.isArray(z.shape)) return Number(z.shape[0]);
  return null;
}

/** Which position a click on row `row` of a heatmap trace asks the Jacobian for (null when
 * it is not a position-by-something heatmap). A pooled heatmap (long texts) has fewer rows
 * than positions: each row then stands for a block of positions, the first of which is asked. */
function jacobianPos(trace, row, T) {
  if (trace?.type !== "heatmap") return null;
  const rows = rowCount(trace.z);
  if (!rows || rows > T || row === null) return null;
  return Math.min(T - 1, row * Math.ceil(T / rows));
}

function figureHandlers(figure, jacobian, info, T, loadHead) {
  const plotly = figure.figure;
  const grid = heatmapTraces(plotly).length > 1;
  // A downsampled grid's row is a block of queries: a click enlarges the head (every value)
  // rather than guessing which query of the block was meant.
  const pooled = Boolean(figure.heads?.pooled);
  const toJacobian = (trace, head, point) => {
    const pos = jacobian ? jacobianPos(trace, rowOfPoint(point), T) : null;
    if (pos === null) return false;
    jacobian.select(info.kind === "attention" ? head : null, pos);
    return true;
  };
  const hint = jacobian ? t("js-step-click-row") : "";
  const onEnlarge = grid
    ? (curve) => {
        const head = headOfTrace(plotly, curve);
        return enlarge(plotly, curve, {
          hint,
          load: pooled ? () => loadHead(figure.id, head) : null,
          onClick: (point, shown) =>
            toJacobian(shown.data[0], head, point) && document.getElementById("enlarge").close(),
        });
      }
    : null;
  const onPlotClick = (point) => {
    const isHead = onEnlarge && heatmapTraces(plotly).includes(point.curveNumber);
    if (isHead && pooled) return onEnlarge(point.curveNumber);
    if (toJacobian(plotly.data[point.curveNumber], headOfTrace(plotly, point.curveNumber), point)) return;
    if (isHead) onEnlarge(point.curveNumber);
  };
  return { onPlotClick: jacobian || grid ? onPlotClick : null, onEnlarge };
}

/** Replaces `container`'s content with `step`; resolves when its first figure is drawn (the
 * others draw as they scroll near). `isCurrent()` turns false when the user has moved on:
 * drawing stops early. `onLaidOut()` runs once the text and formulas are in place, before
 * any figure is drawn; `firstHeight(card)` may give the first figure another height. */
export async function renderStep(
  container,
  step,
  { client, trace, seq, isCurrent, onLaidOut, onChecked, firstHeight },
) {
  forgetObservers();
  clearPlots(container);
  // Cards need the Jacobian panel (clicks select its row); the panel's position changes
  // redraw a card: hence the late-bound makeCard.
  const cards = [];
  let makeCard = null;
  const onPosition =
    step.jacobian && step.jacobian.kind === "output"
      ? identityFollower(step, cards, (figure) => makeCard(figure), { client, seq, isCurrent })
      : null;
  const jacobian = step.jacobian ? createJacobianPanel(step.jacobian, { client, trace, seq, onPosition }) : null;
  // The full-resolution entry of one head of a step's grid (GET .../steps/{index}/head).
  const loadHead = (figureId, head) => client.head(step.index, { figure: figureId, head, seq });
  makeCard = (figure) => figureCard(figure, figureHandlers(figure, jacobian, step.jacobian, trace.T, loadHead));
  step.figures = outputFirst(step.figures || []);
  cards.push(...step.figures.map(makeCard));
  const lead = takeaway(step);
  // The explanation reads the first figure: it follows it, so the figure starts on the screen.
  const explanation = step.explanation ? h("p", { className: "explanation", text: step.explanation }) : "";
  const [firstCard, ...otherCards] = cards.map((c) => c.element);
  container.append(
    header(step),
    lead ? h("p", { className: "takeaway", text: lead, title: lead }) : "",
    warningsBox(step.warnings) || "",
    h("div", { className: "step-facts" }, gradcheckBadge(step.gradcheck, step.phase), shapesList(step.shapes) || ""),
    rules(step) || "",
    h(
      "div",
      { className: "figures" },
      firstCard || h("p", { className: "field-help", text: t("js-step-no-figure") }),
      explanation,
      otherCards,
    ),
    gradcheckDetails(step.gradcheck, step.phase) || "",
    jacobian ? jacobian.element : "",
  );
  markTerms([container.querySelector(".explanation"), ...container.querySelectorAll(".gradcheck-details .field-help")]);
  if (step.update) attachUpdateControls(container, step, { client, isCurrent });
  if (step.gradcheck?.pending) completeCheck(container, step, { client, isCurrent, onChecked });
  fitFormulas(container);
  onLaidOut?.();
  // The first figure is drawn now; the others when they scroll near the viewport (drawing
  // every heatmap of a step up front makes stepping slow on a classroom laptop).
  const [first, ...rest] = cards;
  if (first) await first.draw({ height: firstHeight?.(first) ?? null });
  for (const card of rest) drawWhenNear(card, isCurrent);
  if (jacobian && isCurrent()) await jacobian.load();
}

/** A view answered before its gradient check (a large model): the check is asked for now and
 * shown when it comes, with its failed-check warning; `step` keeps it (the cached view is then
 * complete). `onChecked(step)` runs once it is shown (the bug lab marks the timeline cell). */
async function completeCheck(container, step, { client, isCurrent, onChecked }) {
  let answer;
  try {
    answer = await client.stepCheck(step.index);
  } catch (error) {
    if (isCurrent())
      container.querySelector(".gradcheck.pending")?.replaceWith(
        h("span", {
          className: badgeClass("badge-bad", "gradcheck"),
          text: t("js-check-could-not-run", { error: error.message }),
        }),
      );
    return;
  }
  if (step.gradcheck?.pending) {
    step.gradcheck = answer.gradcheck;
    if (answer.warning) step.warnings = [answer.warning, ...(step.warnings || [])];
  }
  if (!isCurrent()) return;
  container.querySelector(".gradcheck.pending")?.replaceWith(gradcheckBadge(step.gradcheck, step.phase));
  const details = gradcheckDetails(step.gradcheck, step.phase);
  if (details) container.querySelector(".figures")?.after(details);
  if (answer.warning) {
    container.querySelector(".step-warnings")?.remove();
    container.querySelector(".step-facts")?.before(warningsBox(step.warnings));
  }
  onChecked?.(step);
}

/** On the output softmax backward step, the identity-check figure (dL/dlogits against
 * (p − onehot)/N) follows the position chosen in the Jacobian panel. */
function identityFollower(step, cards, makeCard, { client, seq, isCurrent }) {
  let shown = 0; // the step JSON's default position
  return async (pos) => {
    const index = step.figures.findIndex((f) => f.id === "identity");
    if (pos === shown || index < 0) return;
    const fresh = await client.step(step.index, seq, pos);
    const figure = fresh.figures.find((f) => f.id === "identity");
    if (!figure || !isCurrent()) return;
    const next = makeCard(figure);
    purgeWithin(cards[index].element);
    cards[index].element.replaceWith(next.element);
    cards[index] = next;
    shown = pos;
    await next.draw();
  };
}

let observers = [];

function drawWhenNear(card, isCurrent) {
  const observer = new IntersectionObserver(
    (entries) => {
      if (!entries.some((entry) => entry.isIntersecting)) return;
      observer.disconnect();
      if (isCurrent()) card.draw();
    },
    { rootMargin: "400px 0px" },
  );
  observer.observe(card.element);
  observers.push(observer);
}

function forgetObservers() {
  for (const observer of observers) observer.disconnect();
  observers = [];
}
