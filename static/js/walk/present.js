// What is on the screen. Outside presenter mode the tokens and tools are folded behind
// "Tokens, lessons, class" (the facts and "Find a step" stay). Presenter mode (`present=1` in the
// URL, the Present button, the P key; Esc leaves): all of it goes behind one "Details"
// toggle, and the step's title, takeaway, formula and first figure fit the screen (the first
// figure is drawn as tall as the room left). In every mode a new step starts at its title.

import { isTyping, replaceUrl } from "../lib/dom.js";
import { setPlotHeight } from "../lib/figures.js";

const MIN_PLOT = 200; // px: a shorter plot is no longer a figure
const MIN_PANEL_ROW = 140; // px per row of a grid of heads (9 heads: 2 rows) for the whole card to fit
const LEAST_PANEL_ROW = 100; // px per row below which a grid's rows are too cramped to read
const GRID_FRAME = 110; // px of a grid's plot outside its rows: the key labels under it
const BOTTOM_GAP = 6; // px between the first figure and the bottom of the screen

export function presenting() {
  return document.body.classList.contains("present");
}

/** How far down the screen what sticks to its top reaches once stuck (the navigation bar). */
function stickyBottom() {
  let bottom = 0;
  for (const node of document.querySelectorAll(".navbar, .controls-main")) {
    const style = getComputedStyle(node);
    if (style.position !== "sticky") continue;
    bottom = Math.max(bottom, (Number.parseFloat(style.top) || 0) + node.getBoundingClientRect().height);
  }
  return bottom;
}

/** A new step starts at its title: when the title is not fully on screen (the reader had
 * scrolled down to a figure), scroll it to just under the navigation bar. */
export function revealTitle() {
  const header = document.querySelector("#step .step-header");
  if (!header) return;
  const top = stickyBottom();
  const rect = header.getBoundingClientRect();
  if (rect.top >= top && rect.bottom <= window.innerHeight) return;
  window.scrollBy({ top: rect.top - top - 4, behavior: "instant" });
}

/** A lesson plays beside the step (class/lesson.js) on a wide screen: its panel narrows the step, so
 * its title goes right under the bar, as in presenter mode, and a quiz's tools follow the first figure. */
export function lessonBeside() {
  return window.innerWidth > WIDE && document.querySelector(".walk.lesson-on") !== null;
}

const FIGURE_FIRST = 300; // px of the first figure on screen (issue 25), where the screen allows
const WIDE = 900; // px: narrower is a phone or a narrow window, which opens at its top

/** Figure first: once a step is laid out (before its figure draws), scroll down just enough for
 * FIGURE_FIRST px of its first plot to be on screen, never past the step's title (it stays
 * under the navigation bar); in presenter mode and beside a lesson the title goes right under
 * the bar, so the figure gets the most room. Phones and narrow windows are left where they are. */
export function showFirstFigure() {
  if (window.innerWidth <= WIDE) return;
  const header = document.querySelector("#step .step-header");
  const plot = document.querySelector("#step .figures > .figure-card .plot");
  if (!header || !plot) return;
  const top = stickyBottom();
  const room = header.getBoundingClientRect().top - top - 4; // the furthest the title may go up
  if (room <= 0) return;
  const rect = plot.getBoundingClientRect();
  const want = Math.min(FIGURE_FIRST, rect.height);
  const seen = Math.min(window.innerHeight, rect.bottom) - Math.max(rect.top, top);
  const by = presenting() || lessonBeside() ? room : Math.min(room, want - seen);
  if (by > 0) window.scrollBy({ top: by, behavior: "instant" });
}

/** Presenter mode: the first figure's plot height that keeps its whole card on screen. */
export function firstFigureHeight(card) {
  if (!presenting()) return null;
  const natural = Number(card.plot.dataset.naturalHeight) || 420;
  const plot = card.plot.getBoundingClientRect();
  // The head buttons under it stay on screen; its note, numbers and download may go below.
  const buttons = card.element.querySelector(".head-buttons");
  const below = buttons ? buttons.getBoundingClientRect().bottom - plot.bottom : 0;
  const room = Math.floor(window.innerHeight - plot.top - below - BOTTOM_GAP);
  const rows = Number(card.plot.dataset.panelRows) || 1;
  const plotRoom = Math.floor(window.innerHeight - plot.top - BOTTOM_GAP);
  // FIGURE_FIRST px of the figure before its head buttons: they may go below the screen then.
  if (rows === 1)
    return Math.max(MIN_PLOT, Math.min(natural, room >= Math.min(natural, FIGURE_FIRST) ? room : plotRoom));
  // A grid of several rows (SmolLM2's 9 heads) too tall for the whole card: its plot, key labels
  // included, still ends on the screen (the head buttons under it go below), its rows as short
  // as LEAST_PANEL_ROW and no shorter (then its bottom goes below the screen).
  const wanted = Math.min(natural, rows * MIN_PANEL_ROW + GRID_FRAME);
  if (room >= wanted) return Math.min(natural, room);
  return Math.min(wanted, Math.max(rows * LEAST_PANEL_ROW + GRID_FRAME, plotRoom));
}

/** The first figure of the step on screen, re-fitted (or back to its own height). */
function refitFirstFigure() {
  const element = document.querySelector("#step .figures > .figure-card");
  const plot = element?.querySelector(".plot");
  if (!plot) return;
  const natural = Number(plot.dataset.naturalHeight) || 420;
  plot.style.minHeight = `${natural}px`; // measure from the card as laid out at its own height
  const height = firstFigureHeight({ element, plot }) ?? natural;
  setPlotHeight(plot, height);
}

/** Wires the Present button, the Details toggle, P and Esc; the URL says present=1. */
export function wirePresenter() {
  const button = document.getElementById("present");
  const details = document.getElementById("context-toggle");
  const more = document.getElementById("context-more"); // the same, outside presenter mode
  const context = document.getElementById("walk-context");

  function showDetails(open) {
    context.classList.toggle("open", open);
    for (const toggle of [details, more]) toggle?.setAttribute("aria-expanded", String(open));
  }

  function set(on) {
    document.body.classList.toggle("present", on);
    button.setAttribute("aria-pressed", String(on));
    details.hidden = !on;
    showDetails(false);
    const url = new URL(window.location.href);
    if (on) url.searchParams.set("present", "1");
    else url.searchParams.delete("present");
    replaceUrl(url);
    revealTitle();
    showFirstFigure();
    refitFirstFigure();
  }

  button.addEventListener("click", () => set(!presenting()));
  // Opening the details pushes the step down (the page scrolls): the figure keeps its height.
  for (const toggle of [details, more])
    toggle?.addEventListener("click", () => showDetails(!context.classList.contains("open")));
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (isTyping(event.target) || document.querySelector("dialog[open]")) return;
    if (event.key === "p" || event.key === "P") set(!presenting());
    else if (event.key === "Escape" && presenting()) set(false);
    else return;
    event.preventDefault();
  });
  // Large type grows the text above the figure: the figure comes back up, and is refitted.
  document.addEventListener("xt:typesize", () =>
    requestAnimationFrame(() => {
      showFirstFigure();
      if (presenting()) refitFirstFigure();
    }),
  );
  let pending = 0;
  window.addEventListener("resize", () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => presenting() && refitFirstFigure());
  });
  set(presenting()); // the page may start in presenter mode (present=1)
}
