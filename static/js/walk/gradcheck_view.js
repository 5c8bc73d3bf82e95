// A step's gradient check (docs/api.md, the step's `gradcheck`): the badge by the step's title
// and "How the gradient was checked", the table of its directional checks below the figures.

import { formatError, h } from "../lib/dom.js";

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
  backward: {
    short: "this op's contribution",
    long: "Checks only the gradient this op's backward adds to each of its inputs, computed from the gradient that arrived: a wrong arriving gradient makes it wrong too, so red here means the mistake is in this op or in a backward op above it (nearer the loss). Going backward from the loss, the first red step is the broken one.",
  },
  forward: {
    short: "full dL/d(output)",
    long: "Checks the full gradient of this step's output, dL/d(output), which is not drawn on this forward step: the whole backward pass from the loss down to here computed it, so a mistake in any of those backward ops turns this badge red too. Walk the backward steps from the loss to find the op.",
  },
  update: {
    short: "the gradient the optimizer used",
    long: "Checks the gradient of every parameter at once, the one the optimizer stepped along.",
  },
};

function covers(phase) {
  return COVERS[phase === "backward" || phase === "update" ? phase : "forward"];
}

export function gradcheckBadge(check, phase = "forward") {
  if (!check) return h("span", { className: "badge badge-none", text: "no grad check for this step" });
  if (check.pending)
    return h("span", {
      className: "badge badge-none gradcheck pending",
      role: "status",
      text: "grad check: checking…",
      title: "This model's check replays its layers in float64: it runs now and shows here when done",
    });
  if (check.sealed)
    return h("span", {
      className: "badge badge-none gradcheck sealed",
      text: "grad check hidden until you answer",
      title: "A quiz keeps every verdict until you answer; spend a probe to run this step's check",
    });
  const passed = Boolean(check.passed);
  const broken = passed && Boolean(check.float32_nonfinite);
  const verdict = broken ? "✓ in float64" : passed ? "✓" : "✗";
  const broke = broken ? " · the float32 values here are NaN/inf" : "";
  const resolution = passed ? check.resolution : worstResolution(check);
  const error = errorText(check.max_rel_error, resolution, passed, check.error_bound);
  const what = covers(phase);
  const text = `grad check of ${what.short} ${verdict} max rel err ${error} (tol ${formatError(check.tolerance)})${broke}`;
  return h("span", {
    className: `badge ${broken ? "badge-warn" : passed ? "badge-ok" : "badge-bad"} gradcheck`,
    role: "status",
    title: `${what.long} A seeded random direction u: ⟨g, u⟩ against the finite difference (L(X+δ·u) − L(X−δ·u)) / 2δ, in float64.`,
    text,
  });
}

function roundoffNote(check) {
  if (check.float32_nonfinite)
    return h("p", {
      className: "field-help",
      text: "This trace is float32 and its values at this step overflowed to NaN/inf. The same step computed in float64 (same weights, tokens and bugs) checks fine: the backward rule is right, the float32 numbers on screen are not.",
    });
  if (typeof check.float32_roundoff !== "number") return "";
  return h("p", {
    className: "field-help",
    text: `This trace is float32: the check runs on the same step computed in float64 (same weights, tokens and bugs). The float32 gradient on screen differs from it by ${formatError(check.float32_roundoff)} (round-off, not a wrong gradient).`,
  });
}

function resolutionNote(check) {
  if (!(check.resolution > 0)) return "";
  const how = `Along this u the loss curves too strongly for one central difference: it was taken at several step sizes and extrapolated, which pins the derivative down to ${formatError(check.resolution)} (relative).`;
  const verdict = check.passed
    ? "Within that the analytic gradient agrees; a wrong gradient is far outside it."
    : "The analytic gradient is outside that: a failing row's error is what is left beyond the resolution, at least.";
  return h("p", { className: "field-help", text: `${how} ${verdict}` });
}

/** What the number means: the relative error's formula, with the floor the server uses, and
 * how many significant digits the tolerance asks the two to share. */
function measureNote(check) {
  const floor = typeof check.floor === "number" ? formatError(check.floor) : "a tiny floor";
  const digits = check.tolerance > 0 ? Math.round(-Math.log10(check.tolerance)) : null;
  const agree = digits
    ? ` A tolerance of ${formatError(check.tolerance)} asks the two to agree to about ${digits} significant digits.`
    : "";
  return h("p", {
    className: "field-help",
    text: `rel error = |a − n| / max(|a|, |n|, ${floor}), a the analytic and n the numeric value: how far apart they are relative to their size.${agree} Central differences in float64 at this step size are typically good to about 10 digits, so a right gradient stays far below the tolerance and a wrong one far above it.`,
  });
}

export function gradcheckDetails(check, phase = "forward") {
  if (!check?.checks?.length) return null;
  const rows = check.checks.map((c) => {
    const passed = c.rel_error <= check.tolerance;
    return h(
      "tr",
      { className: passed ? "" : "failed" },
      h("th", { scope: "row", text: c.tensor }),
      [c.analytic, c.numeric].map((v) => h("td", { text: typeof v === "number" ? v.toPrecision(8) : "—" })),
      h("td", { text: errorText(c.rel_error, c.resolution, passed) }),
    );
  });
  const head = ["tensor", "analytic", "numeric", "rel error"].map((c) => h("th", { scope: "col", text: c }));
  return h(
    "details",
    { className: "gradcheck-details" },
    h("summary", { text: "How the gradient was checked" }),
    h("p", {
      className: "field-help",
      text: `For a random direction u: analytic = ⟨g, u⟩, g the gradient checked (${covers(phase).short}); numeric = (L(X+δ·u) − L(X−δ·u)) / 2δ, a central difference in float64 with a small step δ. ${covers(phase).long}`,
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
