// A lesson about a recorded run on the film page (templates/film.html; docs/lessons.md): with
// #lesson=NAME&stop=k in its address the page plays the lesson's film stops, the lesson's panel
// beside the film. A film stop moves the film's scrubber to its step (film.js draws it as if the
// learner had moved it); a stop that opens a run step's walkthrough is that walk page, where
// class/classroom.js plays on. PageDown and PageUp (a clicker's keys) go to the next and previous stop.
// In a class on the film (film/class.js) the presenter's stops are sent to the class (onFilmLesson),
// and a student's panel shows the presenter's stop (filmLessonFollower).

import { getLesson } from "./api.js";
import { setFragment } from "./hooks.js";
import { createLessonPlayer } from "./lesson.js";

const film = document.getElementById("film");
const scrub = document.getElementById("film-scrub");
const plot = document.getElementById("film-plot");
const MARKED = "lesson-mark"; // the traces a stop's marks add (meta), removed at the next stop
const AXES = ["yaxis", "yaxis2", "yaxis3"]; // the film's panels: the loss, the induction and previous-token scores

/** Resolves once film.js has read the run and wired its scrubber (#film[data-ready]). */
export function filmReady() {
  return new Promise((resolve) => {
    if (film.dataset.ready === "1") return resolve();
    const observer = new MutationObserver(() => {
      if (film.dataset.ready !== "1") return;
      observer.disconnect();
      resolve();
    });
    observer.observe(film, { attributes: true, attributeFilter: ["data-ready"] });
    return null;
  });
}

/** The lowest and highest value the film's own traces draw on `yref` ("y": the loss): a band within
 * them leaves the panel's range as film.js drew it. */
function dataRange(yref) {
  const values = plot.data.filter((t) => t.meta !== MARKED && (t.yaxis ?? "y") === yref).flatMap((t) => t.y);
  const finite = values.filter(Number.isFinite);
  return [Math.min(...finite), Math.max(...finite)];
}

/** One mark's traces: its steps shaded (one step: a dashed line) across every panel of the film.
 * Traces, not shapes: film.js redraws the shapes (the step's line) at every move of the scrubber. */
function markTraces(mark) {
  const wide = mark.to > mark.from;
  return AXES.filter((axis) => plot._fullLayout[axis]).map((axis) => {
    const [low, high] = plot.layout[axis]?.range ?? dataRange(axis.replace("axis", ""));
    const trace = {
      type: "scatter",
      mode: "lines",
      meta: MARKED,
      yaxis: axis.replace("axis", ""),
      hoverinfo: "skip",
      showlegend: false,
      name: mark.label,
    };
    if (!wide) return { ...trace, x: [mark.from, mark.from], y: [low, high], line: { color: "#ff6f00", dash: "dash" } };
    const x = [mark.from, mark.from, mark.to, mark.to, mark.from];
    const y = [low, high, high, low, low];
    return { ...trace, x, y, fill: "toself", fillcolor: "rgba(255, 111, 0, 0.14)", line: { width: 0 } };
  });
}

let drawing = Promise.resolve(); // one stop's marks drawn at a time: the last stop's are the ones left

/** A film stop's marks (app/lessons/run_lesson.py: {from, to, label}) on the film, the last stop's
 * gone. Quick moves (a clicker's, a class's) queue: each removes what the one before drew. */
function drawMarks(marks) {
  drawing = drawing.then(() => replaceMarks(marks)).catch(() => null);
  return drawing;
}

async function replaceMarks(marks) {
  const Plotly = window.Plotly;
  if (!Plotly || !plot?._fullLayout) return;
  const old = plot.data.flatMap((trace, i) => (trace.meta === MARKED ? [i] : []));
  if (old.length) await Plotly.deleteTraces(plot, old);
  const traces = marks.flatMap(markTraces);
  if (traces.length) await Plotly.addTraces(plot, traces);
  const labels = marks.map((mark) => ({
    x: (mark.from + mark.to) / 2,
    xref: "x",
    y: 1,
    yref: "paper",
    yanchor: "bottom",
    text: mark.label,
    showarrow: false,
    font: { color: "#b34700", size: 12 },
  }));
  await Plotly.relayout(plot, { annotations: labels });
}

/** Beside the lesson's panel (a wide screen), the film's three panels scrolled into view under the
 * sticky scrubber: at 1280×720 the page's top shows the loss alone, and a stop's narration points at
 * the score panels below it. On a phone the panel is above the film in the flow: nothing moves. */
function figureInView() {
  if (!window.matchMedia("(min-width: 901px)").matches) return;
  if (plot.getBoundingClientRect().bottom > window.innerHeight) plot.scrollIntoView({ block: "end" });
}

/** The film as a lesson's stage: it shows the film stops of its own run, with their marks. */
function filmStage(run) {
  return {
    holds: (step) => step.film != null && run === film.dataset.run,
    film: async (step) => {
      scrub.value = String(step.film);
      scrub.dispatchEvent(new Event("input")); // film.js's own scrubbing: the line, the readout, ?step=
      await drawMarks(step.annotations ?? []);
      figureInView();
    },
  };
}

/** The stop a student's panel shows: the presenter's, its marks on the film; the student's film
 * itself moves with the class's film step (film/class.js), never with a stop. */
function followerStage(run) {
  return {
    holds: (step) => step.film != null && run === film.dataset.run,
    film: (step) => drawMarks(step.annotations ?? []),
  };
}

/** A student's lesson panel on the film of a class (film/class.js): `show(name, k)` shows the
 * presenter's lesson `name` at stop k when k is one of the film's stops (another page's stop: the
 * class goes there, class/film_pages.js), `stop()` takes the panel away. Its buttons are the
 * presenter's: hidden, as on a walk page's follower. */
export function filmLessonFollower() {
  const current = { name: null, player: null }; // player: a promise (the lesson is read once)
  function playerOf(name) {
    if (current.name === name) return current.player;
    stop();
    const loading = getLesson(name).then((lesson) => {
      if (current.player !== loading) return null; // the class moved on meanwhile
      const player = createLessonPlayer({
        lesson,
        page: null,
        stage: followerStage(lesson.run),
        slot: { walk: film, body: film },
        follower: true,
        onLeave: () => stop(), // back at the next move of the class, as on a walk page
      });
      player.setControlsEnabled(false);
      return { lesson, player };
    });
    current.name = name;
    current.player = loading;
    return loading;
  }
  function stop() {
    const shown = current.player;
    current.name = current.player = null;
    shown?.then((held) => held?.player.remove()).catch(() => null);
    drawMarks([]);
  }
  return {
    async show(name, k) {
      const held = await playerOf(name).catch(() => null); // a lesson the server no longer offers: no panel
      const step = held?.lesson.steps[k];
      if (step && followerStage(held.lesson.run).holds(step)) await held.player.show(k);
    },
    stop,
  };
}

function wireClicker(player) {
  const moves = { PageDown: 1, PageUp: -1 };
  window.addEventListener(
    "keydown",
    (event) => {
      if (!(event.key in moves) || event.altKey || event.ctrlKey || event.metaKey) return;
      event.preventDefault();
      event.stopPropagation(); // before film.js's PageUp/PageDown (a twentieth of the run)
      player.stepBy(moves[event.key]);
    },
    { capture: true },
  );
}

async function start() {
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  const name = fragment.get("lesson");
  if (!film?.dataset.run || !scrub || !name) return;
  const [lesson] = await Promise.all([getLesson(name), filmReady()]);
  const stage = filmStage(lesson.run);
  const asked = Number(fragment.get("stop") ?? Number.NaN);
  const held = (k) => k >= 0 && k < lesson.steps.length && stage.holds(lesson.steps[k]);
  const stop = held(asked) ? asked : lesson.steps.findIndex((s) => stage.holds(s));
  if (stop < 0) return; // not a lesson of this film
  const player = createLessonPlayer({
    lesson,
    page: null,
    stage,
    slot: { walk: film, body: film },
    onMove: (k) => {
      setFragment("stop", String(k));
      announce({ name, k }); // before a stop of another page leaves this one
    },
    onLeave: () => {
      drawMarks([]);
      setFragment("lesson", null);
      setFragment("stop", null);
      announce(null);
    },
  });
  wireClicker(player);
  announce({ name, k: stop });
  await player.show(stop);
}

// The lesson this page plays ({name, k}: at stop k; null: none), and who is told of its moves.
const playing = { now: null, listeners: [] };
const started = start().catch(() => null); // a lesson that cannot be read plays nothing here

function announce(now) {
  playing.now = now;
  for (const listener of playing.listeners) listener(now);
}

/** callback({name, k}) at every stop of the lesson this page plays and callback(null) when it is
 * left (film/class.js: a presenter's class follows); first told, once the page's lesson (if any)
 * started, what plays now. */
export function onFilmLesson(callback) {
  started.then(() => {
    playing.listeners.push(callback);
    callback(playing.now);
  });
}
