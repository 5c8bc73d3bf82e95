// The presenter's side: "Present to class" opens a session (code, join URL and QR code shown
// large), then every move of this page (step, lesson step, Jacobian row, enlarged head) is sent
// to the class, and the number following and the poll's histogram come back live. "End class"
// ends the session on the server (every follower's page says "Class ended" and is theirs
// again); leaving presenter mode while a class runs asks whether to end it. The presenter key
// stays in this browser (localStorage, by code); it is never put in a URL.

import { sleep } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { t } from "../lib/words.js";
import { createFilmSession, createSession, endSession, presenterEvents, qrUrl, setPoll, setState } from "./api.js";
import { onHead, onJacobian, onStepChange, presentToolsSlot } from "./hooks.js";
import { createPresenterPoll } from "./poll.js";

const keyName = (code) => `xt.class.${code}`;

export function storedKey(code) {
  try {
    return window.localStorage.getItem(keyName(code));
  } catch {
    return null;
  }
}

export function forgetKey(code) {
  try {
    window.localStorage.removeItem(keyName(code));
  } catch {
    /* private mode: nothing was kept */
  }
}

export function storeKey(code, key) {
  try {
    window.localStorage.setItem(keyName(code), key);
  } catch {
    /* private mode: presenting lasts as long as the page */
  }
}

/** One state update in flight at a time, and one every `gapMs` at most; changes made meanwhile are
 * merged into the next (the newest of each field is always sent). */
export function stateSender(code, key, onError, gapMs = 0) {
  let pending = null;
  let sending = false;
  async function flush() {
    if (sending || !pending) return;
    sending = true;
    const body = pending;
    pending = null;
    const started = performance.now();
    try {
      await setState(code, key, body);
    } catch (error) {
      onError(error);
    }
    if (gapMs > 0) await sleep(Math.max(0, gapMs - (performance.now() - started)));
    sending = false;
    flush();
  }
  return (partial) => {
    pending = { ...(pending || {}), ...partial };
    flush();
  };
}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** A join URL only the presenter's own computer can open (the server was started on loopback). */
export function isLoopback(url) {
  const host = new URL(url).hostname;
  return LOOPBACK_NAMES.has(host) || host.startsWith("127.") || host.endsWith(".localhost");
}

const inviteName = (code) => `xt.class.invite.${code}`;

export function showJoinDialog(session) {
  const dialog = document.getElementById("class-dialog");
  document.getElementById("class-code").textContent = session.code;
  document.getElementById("class-url").textContent = session.join_url;
  document.getElementById("class-loopback").hidden = !isLoopback(session.join_url);
  document.getElementById("class-qr").src = qrUrl(session.code);
  if (!dialog.open) dialog.showModal();
}

/** Presents `session` ({code, presenter_key, join_url}) from this page. `lesson()` is the
 * lesson playing (or null), for the lesson step to announce. Returns {send, stop}. */
export function present(page, session, { lesson, onEnded }) {
  const { code, presenter_key: key } = session;
  const status = document.getElementById("class-status");
  const tools = document.getElementById("class-tools");
  let over = false;
  const send = stateSender(
    code,
    key,
    (error) => (status.textContent = t("js-class-move-failed", { error: error.message })),
  );
  const sendLive = (partial) => over || send(partial); // nothing goes out once the class ended
  const followers = h("span", {
    className: "class-followers",
    id: "class-followers",
    text: t("js-class-following", { count: 0 }),
  });
  // Presenter mode keeps the class bar off the screen: its code and count ride in the sticky bar.
  const mini = h("span", { className: "class-mini", id: "class-mini", role: "status" });
  const showFollowers = (count) => {
    followers.textContent = t("js-class-following", { count });
    followers.dataset.count = String(count);
    mini.textContent = `${t("js-class-badge", { code })} · ${followers.textContent}`;
  };
  showFollowers(0);
  presentToolsSlot()?.prepend(mini);
  const keep = h("button", { type: "button", className: "button-quiet", id: "class-keep", text: t("js-class-keep") });
  const confirm = h(
    "span",
    { className: "class-confirm", id: "class-confirm", hidden: true },
    `${t("js-class-end-confirm")} `,
    keep,
  );
  tools.replaceChildren(
    h("strong", { className: "class-badge", text: t("js-class-badge", { code }) }),
    followers,
    h("button", {
      type: "button",
      className: "button-quiet",
      text: t("js-class-show-code"),
      onclick: () => showJoinDialog(session),
    }),
    h("button", {
      type: "button",
      className: "button-quiet",
      id: "class-end",
      text: t("js-class-end"),
      onclick: () => end(),
    }),
    confirm,
  );
  keep.addEventListener("click", () => (confirm.hidden = true));
  // Leaving presenter mode (Present, P, Esc) while the class runs: ask, beside "End class".
  let presenting = document.body.classList.contains("present");
  const presentMode = new MutationObserver(() => {
    const now = document.body.classList.contains("present");
    if (presenting && !now && !over) confirm.hidden = false;
    presenting = now;
  });
  presentMode.observe(document.body, { attributes: true, attributeFilter: ["class"] });
  document.getElementById("class-present").hidden = true;
  const pollPanel = document.getElementById("poll-panel");
  const updatePoll = page.buglab
    ? createPresenterPoll(pollPanel, { trace: page.trace, go: page.go, act: (action) => setPoll(code, key, action) })
    : null;

  onStepChange(page.state, (index) => {
    const partial = { step: index, jacobian: null, head: null };
    const current = lesson();
    if (current) partial.lesson_step = current.steps.findIndex((s) => s.index === index) >= 0 ? current.k : null;
    sendLive(partial);
  });
  onJacobian((row) => row && sendLive({ jacobian: row }));
  onHead((ref) => sendLive({ head: ref }));
  // A film class (page.filmRun): this page is a run's step opened from the film; the class comes here.
  const opened = page.filmRun ? { run_step: page.spec.run_step } : {};
  sendLive({ ...opened, step: page.state.index });
  if (page.filmRun) carryPresenting(document.getElementById("film-back"), code);

  const stopEvents = presenterEvents(code, key, {
    onState: (state) => {
      showFollowers(state.followers);
      if (updatePoll) updatePoll(state.poll);
    },
    onEnded: () => {
      if (over) return;
      status.textContent = t("js-class-idle");
      stop();
    },
  });

  /** End class: the server ends the session (followers told at once), then this page stops. */
  async function end() {
    if (over) return;
    try {
      await endSession(code, key);
    } catch (error) {
      status.textContent = t("js-class-end-failed", { error: error.message });
      return;
    }
    stop();
    forgetKey(code);
    status.textContent = t("js-class-ended", { code });
  }

  function stop() {
    if (over) return;
    over = true;
    presentMode.disconnect();
    stopEvents();
    tools.replaceChildren();
    mini.remove();
    pollPanel.hidden = true;
    document.getElementById("class-present").hidden = false;
    const url = new URL(window.location.href);
    const hash = new URLSearchParams(url.hash.slice(1));
    hash.delete("present");
    url.hash = hash.toString();
    window.history.replaceState(null, "", url);
    onEnded();
  }
  return { send: sendLive, stop, end };
}

/** A link to another page of a film class (the film, a run step's walkthrough) that goes on
 * presenting there (#present=CODE: the key stays in this browser). */
export function carryPresenting(link, code) {
  link?.addEventListener("click", (event) => {
    if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
    event.preventDefault();
    const url = new URL(link.href, window.location.href);
    url.hash = new URLSearchParams({ present: code }).toString();
    window.location.assign(url);
  });
}

/** The join URL of a session this browser opened and has not shown yet (null otherwise). */
export function takeInvite(code) {
  try {
    const url = window.sessionStorage.getItem(inviteName(code));
    window.sessionStorage.removeItem(inviteName(code));
    return url;
  } catch {
    return null;
  }
}

/** "Present to class": a new session for this page's spec (and lesson), its code shown large.
 * A quiz's session hides its own bug in its own walkthrough (`session.trace_id`): the page moves
 * there (and shows the code once there); null then. */
export async function openSession(page, lessonName) {
  if (page.spec.run != null) return openFilmClass(page, lessonName);
  const session = await createSession(page.spec, lessonName);
  storeKey(session.code, session.presenter_key);
  if (session.trace_id !== page.trace.id) {
    try {
      window.sessionStorage.setItem(inviteName(session.code), session.join_url);
    } catch {
      /* private mode: "Show code" shows it */
    }
    const lesson = lessonName ? `&lesson=${encodeURIComponent(lessonName)}` : "";
    window.location.assign(`${session.walk_url}${lesson}`);
    return null;
  }
  return presentedHere(session);
}

/** A run's step (opened from its film, or a stop of a lesson about the run): a class on the run's
 * film, here at this step (startPresenting sends run_step, and the lesson's stop if one plays). */
async function openFilmClass(page, lessonName) {
  const session = await createFilmSession(page.spec.run, Number(page.spec.run_step), lessonName);
  storeKey(session.code, session.presenter_key);
  page.filmRun = page.spec.run;
  return presentedHere(session);
}

/** This page presents the class (#present=CODE in its address) and shows the join code. */
function presentedHere(session) {
  const url = new URL(window.location.href);
  const hash = new URLSearchParams(url.hash.slice(1));
  hash.set("present", session.code);
  url.hash = hash.toString();
  window.history.replaceState(null, "", url);
  showJoinDialog(session);
  return session;
}

export function wireJoinDialog() {
  const dialog = document.getElementById("class-dialog");
  document.getElementById("class-dialog-close").addEventListener("click", () => dialog.close());
}
