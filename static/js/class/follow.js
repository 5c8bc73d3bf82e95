// A student's side: the page follows the presenter's step, lesson step, Jacobian row and
// enlarged head as they arrive over Server-Sent Events (a class on a run's film: to the film and
// the run's other steps too, class/film_pages.js). Moving on one's own detaches (the
// presenter's moves are still received, not applied) until "Back to presenter".

import { h } from "../lib/dom.js";
import { t } from "../lib/words.js";
import { followEvents, getSession } from "./api.js";
import { filmClassPage } from "./film_pages.js";
import {
  jacobianShown,
  onStepChange,
  revealJacobian,
  setFragment,
  showHead,
  showJacobian,
  whenRendered,
} from "./hooks.js";
import { revealStart } from "./lesson.js";
import { createStudentPoll } from "./poll.js";

function sameRow(a, b) {
  return Boolean(a && b) && a.head === b.head && a.pos === b.pos;
}

export async function follow(page, code, { playLesson }) {
  const status = document.getElementById("class-status");
  const tools = document.getElementById("class-tools");
  document.getElementById("class-present").hidden = true;
  document.body.classList.add("in-class");
  const [back, detachButton] = followerButtons();
  tools.replaceChildren(back, detachButton);
  const poll = { trace: page.trace, go: page.go, code };
  const updatePoll = createStudentPoll(document.getElementById("poll-panel"), poll);
  const follower = { latest: null, detached: false, expected: null, head: null, player: null, over: false };

  function setDetached(detached) {
    follower.detached = detached;
    document.getElementById("walk").dataset.following = detached ? "detached" : "following";
    back.hidden = !detached;
    detachButton.hidden = detached;
    status.textContent = t(detached ? "js-follow-exploring" : "js-follow-following", { code });
  }

  async function apply(state) {
    if (follower.over) return;
    follower.latest = state;
    updatePoll(state.poll);
    if (follower.detached) return;
    const elsewhere = filmClassPage(state, code, page.spec.run ? page.spec.run_step : undefined); // a film class moved on
    if (elsewhere) {
      window.location.assign(elsewhere);
      return;
    }
    const drawn = await moveTo(page, follower, state, playLesson);
    if (!drawn || follower.latest !== state || follower.detached) return;
    showPanels(follower, state);
  }

  onStepChange(page.state, (index) => {
    const latest = follower.latest;
    if (follower.over || follower.detached || !latest) return;
    if (index !== latest.step && index !== follower.expected) setDetached(true);
  });
  back.addEventListener("click", () => {
    setDetached(false);
    follower.head = null;
    if (follower.latest) apply(follower.latest);
  });
  detachButton.addEventListener("click", () => setDetached(true));

  const leave = (message) => leaveClass(follower, status, tools, message);
  setDetached(false);
  try {
    await apply(await getSession(code));
    revealStart(); // a joining student lands at the step's title (and the lesson's line)
  } catch (error) {
    leave(t("js-follow-cannot", { code, error: error.message }));
    return;
  }
  followEvents(code, {
    onState: apply,
    onEnded: () => {
      leave(t("js-follow-ended", { code }));
      endedNotice(code);
    },
    onTrouble: (closed) => {
      if (closed) status.textContent = t("js-follow-lost", { code });
    },
  });
}

/** "Back to presenter" and "Explore on my own". */
function followerButtons() {
  return [
    h("button", { type: "button", className: "button-primary", id: "class-back", text: t("js-follow-back") }),
    h("button", { type: "button", className: "button-quiet", id: "class-detach", text: t("js-follow-detach") }),
  ];
}

/** Shows the presenter's step (and lesson step) of `state`; resolves once the step is drawn,
 * not waiting for the lesson's marks: a marked figure below the fold draws only when scrolled
 * near, and the presenter's enlarged head or Jacobian row must not wait for that (issue 34). */
async function moveTo(page, follower, state, playLesson) {
  const lesson = state.lesson ? await playLesson(state.lesson, { follower: true }) : null;
  follower.player = lesson;
  const k = state.lesson_step;
  follower.expected = state.step;
  if (lesson && k !== null && lesson.stepIndex(k) === state.step)
    lesson.player.show(k); // marks: later
  else if (state.step !== page.state.index) page.go(state.step);
  return whenRendered(page.state, state.step);
}

/** The class is over for this page (ended, or never followed): the page's own tools are back. */
function leaveClass(follower, status, tools, message) {
  follower.over = true; // nothing of the class may write the bar again
  setFragment("follow", null); // a reload must not try to follow it again
  status.textContent = message;
  tools.replaceChildren();
  delete document.getElementById("walk").dataset.following;
  document.body.classList.remove("in-class");
  document.getElementById("class-present").hidden = false;
}

/** "Class ended" where the student is looking (the class bar may be scrolled away): a notice
 * at the bottom of the screen until tapped or 10 s pass; the class bar keeps the words. */
function endedNotice(code) {
  const notice = h("button", {
    type: "button",
    className: "class-ended-notice",
    id: "class-ended-notice",
    text: t("js-follow-ended-notice", { code }),
  });
  const close = () => notice.remove();
  notice.addEventListener("click", close);
  document.body.append(notice);
  setTimeout(close, 10_000);
}

/** The presenter's Jacobian row and enlarged head, where they changed. */
function showPanels(follower, state) {
  if (state.jacobian && !sameRow(jacobianShown(), state.jacobian)) {
    showJacobian(state.jacobian);
    revealJacobian(); // on a phone the panel lies far below the fold: bring it to the student
  }
  const head = JSON.stringify(state.head);
  if (head !== follower.head) {
    follower.head = head;
    showHead(state.head);
  }
}
