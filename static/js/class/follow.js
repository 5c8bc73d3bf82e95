// A student's side: the page follows the presenter's step, lesson step, Jacobian row and
// enlarged head as they arrive over Server-Sent Events. Moving on one's own detaches (the
// presenter's moves are still received, not applied) until "Back to presenter".

import { h } from "../lib/dom.js";
import { followEvents, getSession } from "./api.js";
import { jacobianShown, onStepChange, setFragment, showHead, showJacobian, whenRendered } from "./hooks.js";
import { createStudentPoll } from "./poll.js";

function sameRow(a, b) {
  return Boolean(a && b) && a.head === b.head && a.pos === b.pos;
}

export async function follow(page, code, { playLesson }) {
  const status = document.getElementById("class-status");
  const tools = document.getElementById("class-tools");
  document.getElementById("class-present").hidden = true;
  document.body.classList.add("in-class");
  const back = h("button", {
    type: "button",
    className: "button-primary",
    id: "class-back",
    text: "Back to presenter",
  });
  const detachButton = h("button", {
    type: "button",
    className: "button-quiet",
    id: "class-detach",
    text: "Explore on my own",
  });
  tools.replaceChildren(back, detachButton);
  const pollBox = document.getElementById("poll-panel");
  const updatePoll = createStudentPoll(pollBox, {
    trace: page.trace,
    go: page.go,
    code,
    currentIndex: () => page.state.index,
  });
  const follower = { latest: null, detached: false, expected: null, head: null, player: null, over: false };

  function setDetached(detached) {
    follower.detached = detached;
    document.getElementById("walk").dataset.following = detached ? "detached" : "following";
    back.hidden = !detached;
    detachButton.hidden = detached;
    status.textContent = detached ? `Exploring on your own · class ${code}` : `Following the presenter · class ${code}`;
  }

  async function moveTo(state) {
    const lesson = state.lesson ? await playLesson(state.lesson, { follower: true }) : null;
    follower.player = lesson;
    const k = state.lesson_step;
    follower.expected = state.step;
    if (lesson && k !== null && lesson.stepIndex(k) === state.step) await lesson.player.show(k);
    else if (state.step !== page.state.index) page.go(state.step);
    return whenRendered(page.state, state.step);
  }

  async function apply(state) {
    if (follower.over) return;
    follower.latest = state;
    updatePoll(state.poll);
    if (follower.detached) return;
    const drawn = await moveTo(state);
    if (!drawn || follower.latest !== state || follower.detached) return;
    if (state.jacobian && !sameRow(jacobianShown(), state.jacobian)) showJacobian(state.jacobian);
    const head = JSON.stringify(state.head);
    if (head !== follower.head) {
      follower.head = head;
      showHead(state.head);
    }
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

  /** The class is over for this page (ended, or never followed): the page's own tools are back. */
  function leave(message) {
    follower.over = true; // nothing of the class may write the bar again
    setFragment("follow", null); // a reload must not try to follow it again
    status.textContent = message;
    tools.replaceChildren();
    delete document.getElementById("walk").dataset.following;
    document.body.classList.remove("in-class");
    document.getElementById("class-present").hidden = false;
  }

  setDetached(false);
  try {
    await apply(await getSession(code));
  } catch (error) {
    leave(`Cannot follow class ${code}: ${error.message}`);
    return;
  }
  followEvents(code, {
    onState: apply,
    onEnded: () => leave(`Class ${code} has ended: the page is yours.`),
    onTrouble: (closed) => {
      if (closed) status.textContent = `Lost class ${code}: reload the page to try again.`;
    },
  });
}
