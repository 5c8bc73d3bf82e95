// The glossary (app/steps/glossary.py, carried by the page as JSON in #xt-glossary): the first
// use of each term in a step's text becomes a button; its definition shows on hover, on keyboard
// focus and on tap (a click toggles it; Escape closes it), read out through aria-describedby.

import { h } from "./dom.js";

let table = null;

function glossary() {
  if (table === null) {
    const node = document.getElementById("xt-glossary");
    table = node ? JSON.parse(node.textContent) : [];
  }
  return table;
}

const LETTER = /[\p{L}\p{N}_]/u;

/** Where `form` first stands as a whole word in `text` (-1: nowhere). */
function findWord(text, form) {
  let at = text.indexOf(form);
  while (at >= 0) {
    const before = at > 0 ? text[at - 1] : "";
    const after = text[at + form.length] || "";
    if (!LETTER.test(before) && !LETTER.test(after)) return at;
    at = text.indexOf(form, at + 1);
  }
  return -1;
}

/** The first use of each term not yet `used`, as non-overlapping spans in reading order. */
function spans(text, used) {
  const found = [];
  for (const entry of glossary()) {
    if (used.has(entry.term)) continue;
    for (const form of entry.forms) {
      const start = findWord(text, form);
      if (start < 0) continue;
      const end = start + form.length;
      if (!found.some((s) => start < s.end && s.start < end)) found.push({ start, end, entry });
      break;
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

let serial = 0;

/** Keeps an open definition inside the window: shifted left when it would overflow the right edge. */
function place(note) {
  note.style.left = "0px";
  requestAnimationFrame(() => {
    const overflow = note.getBoundingClientRect().right - (document.documentElement.clientWidth - 8);
    if (overflow > 0) note.style.left = `${-overflow}px`;
  });
}

function termButton(text, entry) {
  serial += 1;
  const id = `term-note-${serial}`;
  const note = h("span", { className: "term-note", id, role: "tooltip", text: `${entry.term}: ${entry.definition}` });
  const button = h("button", {
    type: "button",
    className: "term",
    "aria-describedby": id,
    "aria-expanded": "false",
    text,
  });
  for (const event of ["focus", "mouseenter"]) button.addEventListener(event, () => place(note));
  button.addEventListener("click", () => {
    place(note);
    button.setAttribute("aria-expanded", button.getAttribute("aria-expanded") === "true" ? "false" : "true");
  });
  button.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      button.setAttribute("aria-expanded", "false");
      button.blur();
    }
  });
  return h("span", { className: "term-wrap" }, button, note);
}

/** Marks, in each element in reading order (plain-text elements only), the first use on the
 * page of every glossary term. */
export function markTerms(elements) {
  const used = new Set();
  for (const element of elements) {
    if (!element || element.children.length) continue;
    const text = element.textContent;
    const found = spans(text, used);
    if (!found.length) continue;
    const pieces = [];
    let at = 0;
    for (const { start, end, entry } of found) {
      pieces.push(text.slice(at, start), termButton(text.slice(start, end), entry));
      used.add(entry.term);
      at = end;
    }
    pieces.push(text.slice(at));
    element.replaceChildren(...pieces.filter((p) => p !== ""));
  }
}
