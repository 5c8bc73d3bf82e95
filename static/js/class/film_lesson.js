// A lesson about a recorded run on the film page (templates/film.html; docs/lessons.md): with
// #lesson=NAME&stop=k in its address the page plays the lesson's film stops, the lesson's panel
// beside the film. A film stop moves the film's scrubber to its step (film.js draws it as if the
// learner had moved it); a stop that opens a run step's walkthrough is that walk page, where
// class/classroom.js plays on. PageDown and PageUp (a clicker's keys) go to the next and previous stop.

import { getLesson } from "./api.js";
import { setFragment } from "./hooks.js";
import { createLessonPlayer } from "./lesson.js";

const film = document.getElementById("film");
const scrub = document.getElementById("film-scrub");

/** Resolves once film.js has read the run and wired its scrubber (#film[data-ready]). */
function filmReady() {
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

/** The film as a lesson's stage: it shows the film stops of its own run. */
function filmStage(run) {
  return {
    holds: (step) => step.film != null && run === film.dataset.run,
    film: async (step) => {
      scrub.value = String(step);
      scrub.dispatchEvent(new Event("input")); // film.js's own scrubbing: the line, the readout, ?step=
    },
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
    onMove: (k) => setFragment("stop", String(k)),
    onLeave: () => {
      setFragment("lesson", null);
      setFragment("stop", null);
    },
  });
  wireClicker(player);
  await player.show(stop);
}

start();
