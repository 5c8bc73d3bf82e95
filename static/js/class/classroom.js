// The classroom on the walk page (templates/_class.html): lessons, presenting to a class, and
// following a presenter. walk.js calls startClassroom once the trace is open. The page's URL
// fragment says what to start with (never sent to the server):
//   #lesson=NAME     play a lesson          #present=CODE   resume presenting (key in this browser)
//   #follow=CODE     follow a presenter (what /join/CODE lands on)

import { h, setOptions } from "../lib/dom.js";
import { t } from "../lib/words.js";
import { setStopMover } from "../walk/clicker.js";
import { getLesson, getLessons, getSession } from "./api.js";
import { follow } from "./follow.js";
import { onStepChange, setFragment } from "./hooks.js";
import { createLessonPlayer, revealStart, walkStage } from "./lesson.js";
import { openSession, present, showJoinDialog, storedKey, takeInvite, wireJoinDialog } from "./present.js";

/** Whether `lesson` walks through this page's walkthrough: its trace, or (a class's quiz of it,
 * which hides its own bug) the walkthrough the page's class shares with it. */
const isMine = (lesson, page) =>
  lesson.trace_id === page.trace.id ||
  (Boolean(page.walkthrough) && lesson.walkthrough === page.walkthrough) ||
  (lesson.steps?.some?.((s) => s.trace_id === page.trace.id) ?? false); // a run lesson: one of its steps' traces

/** The stop a lesson opens at on this page: the fragment's (#stop=k, a run lesson's stop this page
 * holds), else the first stop on the page's step (else its first stop). */
export function startStop(lesson, page, stage) {
  const raw = new URLSearchParams(window.location.hash.slice(1)).get("stop");
  const asked = raw === null ? Number.NaN : Number(raw);
  const stops = lesson.steps;
  if (Number.isInteger(asked) && asked >= 0 && asked < stops.length && stage.holds(stops[asked])) return asked;
  return Math.max(
    0,
    stops.findIndex((s) => s.index === page.state.index && stage.holds(s)),
  );
}

/** The state of the class the fragment follows or presents (null without one). */
async function classState(fragment) {
  const code = fragment.get("follow") || fragment.get("present");
  if (!code) return null;
  try {
    return await getSession(code, fragment.get("present") ? storedKey(code) : null);
  } catch {
    return null; // following or presenting says why it cannot
  }
}

function createLessons(page, select) {
  const current = { name: null, lesson: null, player: null, presenter: null };

  async function play(name, { follower = false } = {}) {
    if (current.name === name && current.player) return handle();
    const lesson = await getLesson(name);
    if (!isMine(lesson, page)) {
      if (!follower) window.location.assign(lesson.url);
      return null;
    }
    current.player?.remove();
    current.name = name;
    current.lesson = lesson;
    current.player = createLessonPlayer({
      lesson,
      page,
      onMove: (k) => {
        if (lesson.run) setFragment("stop", String(k)); // a reload, or the way back from another page, lands here
        current.presenter?.send({ lesson: name, lesson_step: k });
      },
      onLeave: () => stop(),
      follower,
    });
    current.player.setControlsEnabled(!follower);
    const player = current.player;
    setStopMover(follower ? null : { next: () => player.stepBy(1), back: () => player.stepBy(-1) });
    select.value = name;
    if (!follower) {
      setFragment("lesson", name);
      const k = startStop(lesson, page, walkStage(page));
      current.presenter?.send({ lesson: name, lesson_step: k });
      // A lesson opens at its first stop's title (a phone's page would open at its header).
      current.player.show(k).then(() => revealStart());
    }
    return handle();
  }

  function stop() {
    setStopMover(null);
    current.player?.remove();
    current.name = current.lesson = current.player = null;
    select.value = "";
    setFragment("lesson", null);
    setFragment("stop", null);
    current.presenter?.send({ lesson: null });
  }

  function handle() {
    return { player: current.player, stepIndex: (k) => current.lesson.steps[k]?.index };
  }

  onStepChange(page.state, (index) => current.player?.pageMoved(index));
  return {
    play,
    stop,
    current,
    playing: () => (current.player ? { steps: current.lesson.steps, k: current.player.k } : null),
  };
}

async function fillLessonList(select, page) {
  const { lessons } = await getLessons();
  const mine = lessons.filter((l) => isMine(l, page));
  const others = lessons.filter((l) => !isMine(l, page));
  const option = (l) => ({ value: l.name, text: t("js-classroom-lesson", { title: l.title, steps: l.steps }) });
  setOptions(select, [{ value: "", text: t("js-classroom-no-lesson") }, ...mine.map(option)], "");
  if (others.length) {
    const group = h("optgroup", { label: t("js-classroom-others") });
    for (const l of others) group.append(h("option", { value: l.name, text: option(l).text }));
    select.append(group);
  }
  select.disabled = false;
}

function startPresenting(page, lessons, session) {
  lessons.current.presenter = present(page, session, {
    lesson: lessons.playing,
    onEnded: () => {
      lessons.current.presenter = null;
    },
  });
  if (lessons.current.name) {
    lessons.current.presenter.send({ lesson: lessons.current.name, lesson_step: lessons.current.player.k });
  } else if (page.filmRun) {
    lessons.current.presenter.send({ lesson: null }); // a film class plays the lesson its presenter's page plays
  }
}

/** Wires the class bar; `page` is {trace, go, state} of the walk page. */
export async function startClassroom({ trace, go, state }) {
  const page = {
    trace,
    go,
    state,
    spec: trace.spec,
    buglab: Boolean(trace.spec.quiz !== null || trace.spec.faults?.length),
  };
  const status = document.getElementById("class-status");
  const select = document.getElementById("class-lesson");
  const presentButton = document.getElementById("class-present");
  if (!status || !select || !presentButton) return;
  wireJoinDialog();
  const lessons = createLessons(page, select);
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  try {
    const joined = await classState(fragment);
    page.walkthrough = joined?.walkthrough ?? null;
    page.filmRun = joined?.run ?? null; // a class on a run's film: this page is one of its steps (film/class.js)
    await fillLessonList(select, page);
    select.addEventListener("change", () => (select.value ? lessons.play(select.value) : lessons.stop()));
    presentButton.disabled = false;
    presentButton.addEventListener("click", async () => {
      try {
        const session = await openSession(page, lessons.current.name);
        if (session) startPresenting(page, lessons, session);
      } catch (error) {
        status.textContent = t("js-classroom-session-failed", { error: error.message });
      }
    });
    const following = fragment.get("follow");
    if (following) return await follow(page, following, { playLesson: lessons.play });
    if (fragment.get("lesson")) await lessons.play(fragment.get("lesson"));
    const resumed = fragment.get("present");
    // a class of this page's walkthrough, or of a run's film (this page one of its steps: it says which)
    const mine = Boolean(joined?.run) || joined?.trace_id === trace.id;
    const key = resumed && mine && storedKey(resumed);
    if (key) {
      const invite = takeInvite(resumed); // opened on the page before: its code is shown here
      const joinUrl = invite || `${window.location.origin}/join/${resumed}`;
      const session = { code: resumed, presenter_key: key, join_url: joinUrl };
      startPresenting(page, lessons, session);
      if (invite) showJoinDialog(session);
    }
  } catch (error) {
    status.textContent = t("js-classroom-failed", { error: error.message });
  }
  return null;
}
