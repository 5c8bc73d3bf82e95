// DOM helpers. Every string goes in through textContent or setAttribute: tokens and texts
// are user input. The one exception (server-generated MathML) lives in walk/step_view.js.

import { compactNumber, errorSize } from "./numbers.js";
import { lang, t } from "./words.js";

/** h("p", {className: "x", "aria-label": "y"}, "text", childNode) -> element. */
export function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "className") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2).toLowerCase(), value);
    else if (key === "hidden" || key === "disabled" || key === "selected") node[key] = Boolean(value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** A snake_case name as text pieces that may wrap after an underscore, not mid-word (a fault's
 * name on a phone): ["swiglu", "_", <wbr>, "silu", ...]. */
export function wrappable(name) {
  return String(name)
    .split("_")
    .flatMap((part, i) => (i === 0 ? [part] : ["_", h("wbr"), part]));
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
  return node;
}

/** The word for `n` things: plural(1, "step") is "step", plural(3, "step") "steps". */
export function plural(n, word, many = `${word}s`) {
  return n === 1 ? word : many;
}

/** Whether a key pressed on `target` is the user typing (or choosing in a field), not a
 * shortcut: any <input> (a range or radio button moves with the arrows too), <textarea>,
 * <select> or editable text. The target itself decides: key events reach the focused
 * element, and no field has focusable children. */
export function isTyping(target) {
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))
  );
}

/** A table cell's number: compact, aligned, "—" for missing values, in the page's language. */
export function formatNumber(x) {
  if (x === null || x === undefined || Number.isNaN(x)) return "—";
  if (typeof x !== "number") return String(x);
  return compactNumber(x, lang);
}

/** An error size: 3.2e-8 (Russian: 3,2e-8). */
export function formatError(x) {
  if (x === null || x === undefined || Number.isNaN(x)) return t("js-error-size-missing");
  return errorSize(x, lang);
}

/** "4 × 47 × 47" */
export function formatShape(dims) {
  return Array.isArray(dims) && dims.length ? dims.join(" × ") : t("js-shape-scalar");
}

/** Options for a <select>: [{value, text}] -> replaces its children, keeps `selected`. */
export function setOptions(select, options, selected) {
  clear(select);
  for (const { value, text } of options) {
    select.append(h("option", { value: String(value), text, selected: String(value) === String(selected) }));
  }
}

/** A message box with an optional retry button; never leaves the page blank. */
export function errorBox(message, onRetry) {
  return h(
    "div",
    { className: "alert alert-error", role: "alert" },
    h("strong", { text: `${t("js-error-something")} ` }),
    message,
    onRetry ? h("button", { type: "button", onclick: onRetry, text: t("js-error-retry") }) : null,
  );
}

/** The data of a page's `<script type="application/json" id=...>` block (the spec, the bug lab's state). */
export function readJsonBlock(id) {
  return JSON.parse(document.getElementById(id).textContent);
}

/** history.replaceState to `url` where the page may rewrite its URL. A page shown inline (a
 * notebook's srcdoc iframe, app/notebook.py) may not: its view then lives only in the page. */
export function replaceUrl(url) {
  try {
    window.history.replaceState(null, "", url);
  } catch {
    /* about:srcdoc */
  }
}
