// A class on the film (templates/film.html's class bar; docs/lessons.md, "A class on the film").
// "Present to class" opens a film class (POST /api/sessions {run, film_step}) and sends the presenter's
// scrubbing to it; a student who joined (/join/CODE lands on #follow=CODE) sees their film follow.
// "Open this step" takes the class into that step's walkthrough (the walk page's classroom says which
// step: class/present.js) and its way back to the film brings the class back here. A lesson about the
// run played here (class/film_lesson.js) is the class's: each stop is sent (lesson, lesson_step) and
// a student's panel shows it, its marks on their film (filmLessonFollower). film.js knows
// nothing of the class: the scrubbed step is read from #film[data-step], which film.js writes at every
// move, and set through the scrubber's own input event, as a lesson's film stop sets it.
//
// A drag sends at most one move at a time and at most one every SEND_EVERY_MS (class/present.js
// stateSender): the steps scrubbed meanwhile collapse into the newest, which is always sent last, and
// the hub hands each student only the newest state it has not sent yet (app/sessions/hub.py).

import { createFilmSession, endSession, followEvents, getSession, presenterEvents } from "../class/api.js";
import { filmLessonFollower, filmReady, onFilmLesson } from "../class/film_lesson.js";
import { filmClassPage } from "../class/film_pages.js";
import { setFragment } from "../class/hooks.js";
import {
  carryPresenting,
  forgetKey,
  showJoinDialog,
  stateSender,
  storedKey,
  storeKey,
  wireJoinDialog,
} from "../class/present.js";
import { h } from "../lib/dom.js";
import { t } from "../lib/words.js";
import { filmExported } from "./exported.js";

const SEND_EVERY_MS = 100; // ten moves a second at most: a drag reads as motion on every screen
const film = document.getElementById("film");
const scrub = document.getElementById("film-scrub");
const status = document.getElementById("class-status");
const tools = document.getElementById("class-tools");
const presentButton = document.getElementById("class-present");

const shownStep = () => Number(film.dataset.step);

/** callback(step) at every move of the film (the learner's, a lesson's or the class's). */
function onFilmStep(callback) {
  let last = shownStep();
  new MutationObserver(() => {
    if (shownStep() === last) return;
    last = shownStep();
    callback(last);
  }).observe(film, { attributes: true, attributeFilter: ["data-step"] });
}

const button = (id, text, className = "button-quiet") => h("button", { type: "button", className, id, text });

/** Presents `session` ({code, presenter_key, join_url}) from the film: the class comes back to the
 * film (from a step's walkthrough) at this step, then follows every move. */
function present(session) {
  const { code, presenter_key: key } = session;
  let over = false;
  const send = stateSender(
    code,
    key,
    (e) => (status.textContent = t("js-class-move-failed", { error: e.message })),
    SEND_EVERY_MS,
  );
  const followers = h("span", { className: "class-followers", id: "class-followers" });
  const showFollowers = (count) => {
    followers.textContent = t("js-class-following", { count });
    followers.dataset.count = String(count);
  };
  showFollowers(0);
  const end = button("class-end", t("js-class-end"));
  const showCode = button("class-show-code", t("js-class-show-code"));
  tools.replaceChildren(
    h("strong", { className: "class-badge", text: t("js-class-badge", { code }) }),
    followers,
    showCode,
    end,
  );
  presentButton.hidden = true;
  showCode.addEventListener("click", () => showJoinDialog(session));
  send({ run_step: null, film_step: shownStep() });
  onFilmStep((step) => over || send({ film_step: step }));
  // The lesson this page plays is the class's (none: none, as the presenter's screen shows).
  onFilmLesson((now) => over || send(now ? { lesson: now.name, lesson_step: now.k } : { lesson: null }));
  carryPresenting(document.getElementById("film-open"), code);
  const stopEvents = presenterEvents(code, key, {
    onState: (state) => showFollowers(state.followers),
    onEnded: () => stop(t("js-class-idle")),
  });
  function stop(message) {
    if (over) return;
    over = true;
    stopEvents();
    tools.replaceChildren();
    presentButton.hidden = false;
    status.textContent = message;
    setFragment("present", null);
  }
  end.addEventListener("click", async () => {
    try {
      await endSession(code, key);
    } catch (error) {
      status.textContent = t("js-class-end-failed", { error: error.message });
      return;
    }
    forgetKey(code);
    stop(t("js-class-ended", { code }));
  });
}

/** Follows class `code`: the film moves where the presenter scrubs, and goes where the class goes
 * (a step's walkthrough). Moving the film oneself detaches until "Back to presenter". */
async function follow(code) {
  const back = button("class-back", t("js-follow-back"), "button-primary");
  const detach = button("class-detach", t("js-follow-detach"));
  tools.replaceChildren(back, detach);
  presentButton.hidden = true;
  const follower = { latest: null, detached: false, expected: null, over: false };
  const lesson = filmLessonFollower();
  const setDetached = (detached) => {
    follower.detached = detached;
    film.dataset.following = detached ? "detached" : "following";
    back.hidden = !detached;
    detach.hidden = detached;
    status.textContent = t(detached ? "js-follow-exploring" : "js-follow-following", { code });
  };
  const apply = (state) => {
    follower.latest = state;
    if (follower.over || follower.detached) return;
    const elsewhere = filmClassPage(state, code, null);
    if (elsewhere) return window.location.assign(elsewhere);
    if (state.run !== film.dataset.run) return window.location.assign(`/join/${encodeURIComponent(code)}`); // its page
    follower.expected = state.film_step;
    if (shownStep() !== state.film_step) {
      scrub.value = String(state.film_step);
      scrub.dispatchEvent(new Event("input")); // film.js's own scrubbing: the line, the readout, the frames
    }
    if (state.lesson) lesson.show(state.lesson, state.lesson_step);
    else lesson.stop();
    return null;
  };
  const leave = (message) => {
    follower.over = true;
    setFragment("follow", null); // a reload must not try to follow it again
    tools.replaceChildren();
    delete film.dataset.following;
    presentButton.hidden = false;
    status.textContent = message;
  };
  onFilmStep((step) => {
    if (!follower.over && !follower.detached && step !== follower.expected) setDetached(true);
  });
  back.addEventListener("click", () => {
    setDetached(false);
    if (follower.latest) apply(follower.latest);
  });
  detach.addEventListener("click", () => setDetached(true));
  setDetached(false);
  try {
    apply(await getSession(code));
  } catch (error) {
    return leave(t("js-follow-cannot", { code, error: error.message }));
  }
  followEvents(code, {
    onState: apply,
    onEnded: () => leave(t("js-follow-ended", { code })),
    onTrouble: (closed) => {
      if (closed) status.textContent = t("js-follow-lost", { code });
    },
  });
  return null;
}

async function openFilmClass() {
  try {
    const session = await createFilmSession(film.dataset.run, shownStep());
    storeKey(session.code, session.presenter_key);
    setFragment("present", session.code);
    showJoinDialog(session);
    present(session);
  } catch (error) {
    status.textContent = t("js-classroom-session-failed", { error: error.message });
  }
}

async function start() {
  if (!film?.dataset.run || !presentButton || filmExported) return;
  await filmReady();
  wireJoinDialog();
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  presentButton.disabled = false;
  presentButton.addEventListener("click", openFilmClass);
  const resumed = fragment.get("present");
  const key = resumed && storedKey(resumed);
  if (fragment.get("follow")) await follow(fragment.get("follow"));
  else if (key) present({ code: resumed, presenter_key: key, join_url: `${window.location.origin}/join/${resumed}` });
}

start();
