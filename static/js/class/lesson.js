// The lesson player: a lesson's takeaway, narration and "next" cue beside the figure, its
// annotations drawn on the figure, Prev/Next, Play/Pause at a chosen pace, and a way back to
// the full walkthrough. A follower's player is driven by the presenter (its buttons detach).

import { clear, h, setOptions } from "../lib/dom.js";
import { t } from "../lib/words.js";
import { revealTitle, showFirstFigure } from "../walk/present.js";
import { clearAnnotations, drawAnnotations } from "./annotate.js";
import { lessonSlot, whenRendered } from "./hooks.js";

const PACES = [10, 20, 30, 45, 60];

/** Where a lesson or a class opens: on a narrow screen its one-line panel, with the step's
 * title under it (the page would open at its header); elsewhere the step's title. */
export function revealStart() {
  const panel = document.getElementById("lesson-panel");
  if (panel && window.innerWidth <= 900) panel.scrollIntoView({ block: "start", behavior: "instant" });
  else {
    revealTitle();
    showFirstFigure(); // the panel beside it came after the step was laid out
  }
}
const DEFAULT_PACE = 30;

/** The page of a stop of a lesson about a recorded run (its `url`: the film, or a run step's
 * walkthrough), playing the lesson from stop k; the page's own ?lang= goes along, and a presenter of
 * a class on the run's film goes on presenting there (#present=CODE: the class follows to that page). */
export function stopUrl(lesson, k) {
  const url = new URL(lesson.steps[k].url, window.location.href); // an export's page names: beside this page
  const asked = new URLSearchParams(window.location.search).get("lang");
  if (asked) url.searchParams.set("lang", asked);
  const hash = new URLSearchParams({ lesson: lesson.name, stop: String(k) });
  const presenting = new URLSearchParams(window.location.hash.slice(1)).get("present");
  if (presenting) hash.set("present", presenting);
  url.hash = hash.toString();
  return url.toString();
}

/** The walk page as a lesson's stage: it shows a stop that is an op of its own trace; a film stop
 * or another run step's op (a lesson about a recorded run) is another page. */
export function walkStage(page) {
  return {
    holds: (step) => step.film == null && (step.trace_id == null || step.trace_id === page.trace.id),
    film: async () => {}, // never: a film stop is not the walk page's
  };
}

/** `lesson`: GET /api/lessons/{name}. `onMove(k)` is told each lesson step shown by this player's
 * own controls; `onLeave()` when the learner goes back to the full walkthrough. `stage` says which
 * stops this page shows (walkStage; the film's: class/film_lesson.js), `slot` where the panel goes.
 * A `follower`'s player (a student in a class) never goes to another stop's page: the class takes
 * the student there (class/film_pages.js), and a stop of another page only shows its words. */
export function createLessonPlayer({
  lesson,
  page,
  onMove = () => {},
  onLeave = () => {},
  stage = walkStage(page),
  slot = lessonSlot(),
  follower = false,
}) {
  const { walk, body } = slot;
  const position = h("span", { className: "lesson-position" });
  // The step's own title: the page may scroll it away to the stop's marked figure (issue 34).
  const stepTitle = h("p", { className: "lesson-step-title", id: "lesson-step-title" });
  const takeaway = h("h2", { className: "lesson-takeaway", id: "lesson-takeaway" });
  const narration = h("p", { className: "lesson-narration" });
  const claims = h("ul", { className: "lesson-claims", "aria-label": t("js-lesson-claims") });
  const next = h("p", { className: "lesson-next" });
  const offPath = h("p", { className: "lesson-off-path", hidden: true });
  // On a phone the arrows only (the words stay in the buttons' names: walk.css .nav-word).
  const prev = h(
    "button",
    { type: "button", className: "button-quiet" },
    "◀",
    h("span", { className: "nav-word", text: ` ${t("js-lesson-prev")}` }),
  );
  const forward = h(
    "button",
    { type: "button", className: "button-quiet" },
    h("span", { className: "nav-word", text: `${t("js-lesson-next")} ` }),
    "▶",
  );
  // On a narrow screen the panel is one line (title, stop, arrows) until opened.
  const more = h("button", {
    type: "button",
    className: "button-quiet lesson-toggle",
    "aria-expanded": "false",
    "aria-controls": "lesson-panel",
    text: t("js-lesson-more"),
  });
  const play = h("button", { type: "button", className: "button-primary lesson-play", text: t("js-lesson-play") });
  const pace = h("select", { "aria-label": t("js-lesson-pace") });
  setOptions(
    pace,
    PACES.map((s) => ({ value: s, text: t("js-lesson-pace-option", { seconds: s }) })),
    DEFAULT_PACE,
  );
  const leave = h("button", { type: "button", className: "button-quiet", text: t("js-lesson-leave") });
  const panel = h(
    "aside",
    { className: "lesson-panel", id: "lesson-panel", "aria-label": t("js-lesson-label", { title: lesson.title }) },
    h("p", { className: "lesson-title" }, h("strong", { text: lesson.title }), " ", position),
    stepTitle,
    takeaway,
    narration,
    claims,
    next,
    offPath,
    h("div", { className: "lesson-controls" }, prev, forward, more, play, pace, leave),
  );
  more.addEventListener("click", () => {
    const open = !panel.classList.contains("open");
    panel.classList.toggle("open", open);
    more.setAttribute("aria-expanded", String(open));
  });
  const state = { k: 0, timer: null, shown: 0 };

  /** Each claim the server checked against the trace, with what it measured (app/lessons/claims.py). */
  function showClaims(list) {
    clear(claims).append(
      ...list.map((claim) =>
        h(
          "li",
          { className: "lesson-claim" },
          h("span", { className: "lesson-claim-mark", text: "✓ ", "aria-hidden": "true" }),
          t("js-lesson-claim", { against: claim.against, claimed: claim.claimed, measured: claim.measured }),
        ),
      ),
    );
    claims.hidden = list.length === 0;
  }

  function render(k) {
    const step = lesson.steps[k];
    position.textContent = t("js-lesson-stop", { stop: k + 1, stops: lesson.steps.length }); // "step" is the trace's number
    stepTitle.textContent = step.title;
    takeaway.textContent = step.takeaway;
    narration.textContent = step.narration;
    showClaims(step.claims ?? []);
    next.textContent = step.next ? t("js-lesson-next-stop", { next: step.next }) : "";
    next.hidden = !step.next;
    prev.disabled = k === 0;
    forward.disabled = k === lesson.steps.length - 1;
    offPath.hidden = true;
    panel.dataset.lessonStep = String(k);
    panel.scrollTop = 0; // a stop reads from its top (the panel scrolls when it is taller than the screen)
  }

  /** Shows lesson step k: moves the page there (or, a stop of another page, goes to that page),
   * then draws its annotations. */
  async function show(k) {
    state.k = Math.max(0, Math.min(lesson.steps.length - 1, k));
    const ticket = ++state.shown; // a later show's marks replace these, even if drawn first
    render(state.k);
    const step = lesson.steps[state.k];
    if (!stage.holds(step)) {
      stopPlaying();
      if (follower) return;
      offPath.hidden = false;
      offPath.textContent = t("js-lesson-run-going", { stop: state.k + 1 });
      window.location.assign(stopUrl(lesson, state.k));
      return;
    }
    if (step.film != null) {
      await stage.film(step);
      panel.dataset.drawn = String(state.k);
      return;
    }
    if (page.state.index !== step.index) page.go(step.index);
    if (await whenRendered(page.state, step.index)) {
      await clearAnnotations();
      await drawAnnotations(step.annotations, () => ticket === state.shown);
      if (ticket === state.shown) panel.dataset.drawn = String(state.k);
    }
  }

  function stopPlaying() {
    clearInterval(state.timer);
    state.timer = null;
    play.textContent = t("js-lesson-play");
    play.setAttribute("aria-pressed", "false");
  }

  function move(k) {
    onMove(k);
    return show(k);
  }

  prev.addEventListener("click", () => move(state.k - 1));
  forward.addEventListener("click", () => move(state.k + 1));
  play.addEventListener("click", () => {
    if (state.timer) return stopPlaying();
    play.textContent = t("js-lesson-pause");
    play.setAttribute("aria-pressed", "true");
    state.timer = setInterval(() => {
      if (state.k >= lesson.steps.length - 1) return stopPlaying();
      move(state.k + 1);
    }, Number(pace.value) * 1000);
    return null;
  });
  leave.addEventListener("click", () => {
    stopPlaying();
    remove();
    onLeave();
  });

  function remove() {
    panel.remove();
    walk.classList.remove("lesson-on");
    window.dispatchEvent(new Event("resize"));
    document.dispatchEvent(new Event("xt:lesson"));
  }

  /** The page moved on its own (the learner clicked elsewhere): follow it when it lands on a
   * step of the lesson, else say how to get back. */
  function pageMoved(index) {
    if (lesson.steps[state.k]?.index === index && stage.holds(lesson.steps[state.k])) return;
    const k = lesson.steps.findIndex((s) => s.index === index && stage.holds(s));
    if (k >= 0) {
      state.k = k;
      render(k);
      whenRendered(page.state, index).then((drawn) => drawn && drawAnnotations(lesson.steps[k].annotations));
      return;
    }
    clear(offPath).append(
      `${t("js-lesson-off-path")} `,
      h("button", {
        type: "button",
        className: "button-quiet",
        text: t("js-lesson-back"),
        onclick: () => move(state.k),
      }),
    );
    offPath.hidden = false;
  }

  body.prepend(panel);
  walk.classList.add("lesson-on");
  window.dispatchEvent(new Event("resize")); // the panel narrows the figures drawn before it: Plotly redraws them (responsive)
  document.dispatchEvent(new Event("xt:lesson")); // a quiz's tools move below the first figure (walk/buglab.js)
  return {
    show,
    /** One stop on (delta 1) or back (−1), as Next and Prev (a clicker's keys: walk/clicker.js). */
    stepBy(delta) {
      const k = state.k + delta;
      if (k < 0 || k >= lesson.steps.length) return null;
      stopPlaying();
      return move(k);
    },
    pageMoved,
    remove,
    stopPlaying,
    get k() {
      return state.k;
    },
    setControlsEnabled(enabled) {
      for (const control of [prev, forward, play, pace]) control.hidden = !enabled;
    },
  };
}
