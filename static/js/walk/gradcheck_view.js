// A step's gradient check (docs/api.md, the step's `gradcheck`): the badge by the step's title
// and "How the gradient was checked", the table of its directional checks below the figures.

import { formatError, h } from "../lib/dom.js";
import { local, t } from "../lib/words.js";

/** An error size inside a sentence, as the page's language writes decimals ("3,2e-8" in Russian). */
const said = (x) => local(formatError(x));

/** The relative error a check vouches for. A plain central difference gives it exactly. An
 * extrapolated one (resolution > 0) resolves the derivative only to `resolution`: rel_error is
 * then what is left beyond it, so a passing check is at most rel_error + resolution (`bound`)
 * and a failing one at least rel_error. */
function errorText(relError, resolution, passed, bound = relError + resolution) {
  if (!(resolution > 0)) return formatError(relError);
  return passed ? `≤ ${formatError(bound)}` : `≥ ${formatError(relError)}`;
}

/** The resolution behind max_rel_error: that of the check which gave it (a failing step's
 * worst check may have been compared plainly while another was extrapolated). */
function worstResolution(check) {
  const worst = check.checks?.find((c) => c.rel_error === check.max_rel_error);
  return worst ? worst.resolution : check.resolution;
}

/** What a step's check covers, in words (docs/buglab.md): a backward step checks the
 * contribution its own op adds to each input, made from the arriving gradient (so it goes red
 * below a fault as well); a forward step checks the full gradient of its
 * output, which every backward op between the loss and it helped compute; the update step checks
 * the gradient the optimizer used. */
const COVERS = {
  backward: ["js-check-covers-backward", "js-check-covers-backward-long"],
  forward: ["js-check-covers-forward", "js-check-covers-forward-long"],
  update: ["js-check-covers-update", "js-check-covers-update-long"],
};

function covers(phase) {
  const [short, long] = COVERS[phase === "backward" || phase === "update" ? phase : "forward"];
  return { short: t(short), long: t(long) };
}
/** A badge's class list (built from single words: tests/test_code_shape.py reads a literal of
 * two or more words as a sentence). */
export function badgeClass(...names) {
  return ["badge", ...names].join(" ");
}

export function gradcheckBadge(check, phase = "forward") {
  if (!check) return h("span", { className: "badge badge-none", text: t("js-check-none") });
  if (check.pending)
    return h("span", {
      className: badgeClass("badge-none", "gradcheck", "pending"),
      role: "status",
      text: t("js-check-pending"),
      title: t("js-check-pending.title"),
    });
  if (check.sealed)
    return h("span", {
      className: badgeClass("badge-none", "gradcheck", "sealed"),
      text: t("js-check-sealed"),
      title: t("js-check-sealed.title"),
    });
  const passed = Boolean(check.passed);
  const held = heldIn(check);
  const broken = passed && Boolean(check[`${held}_nonfinite`]);
  const verdict = broken ? t("js-check-verdict-float64") : passed ? "✓" : "✗";
  const resolution = passed ? check.resolution : worstResolution(check);
  const error = errorText(check.max_rel_error, resolution, passed, check.error_bound);
  const what = covers(phase);
  const values = { what: what.short, verdict, error: local(error), tolerance: said(check.tolerance) };
  const text = broken
    ? t(held === "float32" ? "js-check-badge-broken" : "js-precision-check-badge-broken", { ...values, dtype: held })
    : t("js-check-badge", values);
  return h("span", {
    className: badgeClass(broken ? "badge-warn" : passed ? "badge-ok" : "badge-bad", "gradcheck"),
    role: "status",
    title: t("js-check-badge.title", { covers: what.long }),
    text,
  });
}

/** The format of the gradient on screen: float32 (a float64 trace's too), or a bfloat16 or
 * float16 step's, whose check reports its round-off under that format's name. */
function heldIn(check) {
  return ["bfloat16", "float16"].find((dtype) => `${dtype}_nonfinite` in check) || "float32";
}

function roundoffNote(check) {
  const held = heldIn(check);
  const low = held !== "float32";
  if (check[`${held}_nonfinite`])
    return h("p", {
      className: "field-help",
      text: low ? t("js-precision-check-overflowed", { dtype: held }) : t("js-check-overflowed"),
    });
  const roundoff = check[`${held}_roundoff`];
  if (typeof roundoff !== "number") return "";
  return h("p", {
    className: "field-help",
    text: t(low ? "js-precision-check-roundoff" : "js-check-roundoff", { roundoff: said(roundoff), dtype: held }),
  });
}

function resolutionNote(check) {
  if (!(check.resolution > 0)) return "";
  const resolution = said(check.resolution);
  const text = t(check.passed ? "js-check-extrapolated-passed" : "js-check-extrapolated-failed", { resolution });
  return h("p", { className: "field-help", text });
}

/** What the number means: the relative error's formula, with the floor the server uses, and
 * how many significant digits the tolerance asks the two to share. */
function measureNote(check) {
  const floor = typeof check.floor === "number" ? said(check.floor) : t("js-check-tiny-floor");
  const digits = check.tolerance > 0 ? Math.round(-Math.log10(check.tolerance)) : null;
  const text = digits
    ? t("js-check-measure-tolerance", { floor, tolerance: said(check.tolerance), digits })
    : t("js-check-measure", { floor });
  return h("p", { className: "field-help", text });
}

export function gradcheckDetails(check, phase = "forward") {
  if (!check?.checks?.length) return null;
  const rows = check.checks.map((c) => {
    const passed = c.rel_error <= check.tolerance;
    return h(
      "tr",
      { className: passed ? "" : "failed" },
      h("th", { scope: "row", translate: "no", text: c.tensor }),
      [c.analytic, c.numeric].map((v) => h("td", { text: typeof v === "number" ? local(v.toPrecision(8)) : "—" })),
      h("td", { text: errorText(c.rel_error, c.resolution, passed) }),
    );
  });
  const head = ["js-check-col-tensor", "js-check-col-analytic", "js-check-col-numeric", "js-check-col-rel-error"].map(
    (id) => h("th", { scope: "col", text: t(id) }),
  );
  return h(
    "details",
    { className: "gradcheck-details" },
    h("summary", { text: t("js-check-how") }),
    h("p", {
      className: "field-help",
      text: t("js-check-how-text", { what: covers(phase).short, covers: covers(phase).long }),
    }),
    measureNote(check),
    roundoffNote(check),
    resolutionNote(check),
    h(
      "div",
      { className: "table-scroll" },
      h("table", { className: "numbers" }, h("thead", {}, h("tr", {}, head)), h("tbody", {}, rows)),
    ),
  );
}
