// The live bug hunt. The presenter opens a poll ("Which step is broken?"), sees the answers as
// a histogram over the backward steps, in timeline order, each bar under its step's number and
// the answered steps named beside it, and reveals the fault; each student picks a backward step
// on their own page (nothing chosen for them: the step the presenter shows is no hint); the
// reveal shows on every screen.

import { clear, h, setOptions } from "../lib/dom.js";
import { stepNumber } from "../lib/numbering.js";
import { t } from "../lib/words.js";
import { answerPoll } from "./api.js";

function backwardSteps(trace) {
  return trace.steps.filter((s) => s.phase === "backward");
}

function revealBox(reveal, trace, go) {
  if (!reveal) return null;
  const fault = reveal.faults?.[0];
  const stepTitle = (index) =>
    index === null || index === undefined
      ? t("js-poll-not-known")
      : t("js-check-step-name", { number: stepNumber(index), title: trace.steps[index].title });
  return h(
    "div",
    { className: "poll-reveal", role: "status" },
    h(
      "p",
      {},
      h("strong", { text: `${t("js-poll-the-bug")} ` }),
      fault ? h("code", { text: fault.name }) : "—",
      fault ? ` — ${fault.description}` : "",
    ),
    fault
      ? h(
          "p",
          { className: "poll-lines" },
          `${t("js-buglab-correct")}: `,
          h("code", { text: fault.correct }),
          ` · ${t("js-buglab-faulty")}: `,
          h("code", { text: fault.faulty }),
        )
      : null,
    h("p", {}, h("strong", { text: `${t("js-poll-broken-step")} ` }), stepTitle(reveal.broken_step)),
    h("p", {}, h("strong", { text: `${t("js-poll-first-failing")} ` }), stepTitle(reveal.first_failing)),
    reveal.broken_step !== null && reveal.broken_step !== undefined
      ? h("button", {
          type: "button",
          className: "button-quiet",
          text: t("js-poll-go-broken"),
          onclick: () => go(reveal.broken_step),
        })
      : null,
  );
}

/** The histogram: one column per backward step, in the order they run. */
function histogram(poll, trace) {
  const counts = poll.counts || {};
  const most = Math.max(1, ...Object.values(counts));
  const reveal = poll.reveal || {};
  const columns = backwardSteps(trace).map((step) => {
    const count = counts[String(step.index)] || 0;
    const classes = ["poll-column"];
    if (step.index === reveal.broken_step) classes.push("broken");
    if (step.index === reveal.first_failing) classes.push("first-failing");
    return h(
      "li",
      {
        className: classes.join(" "),
        title: t("js-poll-column", { number: stepNumber(step.index), title: step.title, count }),
        dataset: { index: String(step.index), count: String(count) },
      },
      h("span", { className: "poll-count", text: count ? String(count) : "" }),
      h("span", { className: "poll-bar", style: `height: ${Math.round((100 * count) / most)}%` }),
      h("span", { className: "poll-step", text: String(stepNumber(step.index)), "aria-hidden": "true" }),
    );
  });
  return h(
    "figure",
    { className: "poll-histogram", id: "poll-histogram" },
    h("figcaption", {
      text: t("js-poll-caption", { answers: poll.answers || 0 }),
    }),
    h("ol", { className: "poll-columns" }, columns),
    answeredList(counts, trace, reveal),
    answersByAddress(poll.by_address),
  );
}

/** The presenter's answers per client address, most first (the server's order): a class behind one
 * router is one address, and one client voting from many streams shows as more answers there than
 * students. Shown once an address has given more than one answer. */
function answersByAddress(byAddress) {
  const entries = Object.entries(byAddress || {});
  if (!entries.some(([, count]) => count > 1)) return null;
  return h(
    "p",
    { className: "poll-addresses", id: "poll-addresses" },
    h("strong", { text: `${t("js-poll-by-address")} ` }),
    entries.map(([address, count]) => t("js-poll-address", { address, count })).join(" · "),
  );
}

/** The answered steps by name, most answers first: what each bar stands for, without hovering. */
function answeredList(counts, trace, reveal) {
  const answered = Object.entries(counts)
    .map(([index, count]) => ({ step: trace.steps[Number(index)], count }))
    .filter((a) => a.step && a.count > 0)
    .sort((a, b) => b.count - a.count || a.step.index - b.step.index);
  if (!answered.length) return h("p", { className: "poll-legend", text: t("js-poll-no-answers") });
  return h(
    "ol",
    { className: "poll-legend", "aria-label": t("js-poll-by-step") },
    answered.map(({ step, count }) =>
      h(
        "li",
        {
          className: step.index === reveal.broken_step ? "broken" : "",
          dataset: { index: String(step.index) },
        },
        h("strong", { text: t("js-nav-counter-step", { number: stepNumber(step.index) }) }),
        t("js-poll-answered", { title: step.title, count }),
      ),
    ),
  );
}

/** The presenter's poll panel: buttons and the live histogram. `act(action)` posts it. */
export function createPresenterPoll(container, { trace, go, act }) {
  const status = h("span", { className: "poll-status", "aria-live": "polite" });
  const buttons = ["open", "close", "reveal"].map((action) =>
    h("button", {
      type: "button",
      className: action === "reveal" ? "button-primary" : "button-quiet",
      text: t({ open: "js-poll-open", close: "js-poll-close", reveal: "js-poll-reveal" }[action]),
      dataset: { action },
      onclick: () => act(action).catch((error) => (status.textContent = error.message)),
    }),
  );
  const body = h("div", { className: "poll-body" });
  container.append(h("div", { className: "poll-buttons" }, buttons, status), body);
  container.hidden = false;
  return function update(poll) {
    const said = { open: "js-poll-status-open", revealed: "js-poll-status-revealed" }[poll.status];
    status.textContent = said ? t(said) : "";
    clear(body).append(histogram(poll, trace), revealBox(poll.reveal, trace, go) || "");
  };
}

/** A student's poll box: shown while a poll is open, and the reveal once revealed. */
export function createStudentPoll(container, { trace, go, code }) {
  let answered = null;
  let shownStatus = null;
  const choice = h("select", { id: "poll-choice", "aria-label": t("js-poll-choice") });
  const options = backwardSteps(trace).map((s) => ({
    value: s.index,
    text: t("js-check-step-name", { number: stepNumber(s.index), title: s.title }),
  }));
  setOptions(choice, [{ value: "", text: t("js-poll-pick") }, ...options], "");
  const feedback = h("p", { className: "poll-feedback", "aria-live": "polite" });
  const send = h("button", {
    type: "button",
    className: "button-primary",
    id: "poll-send",
    text: t("js-poll-answer"),
    onclick: async () => {
      if (choice.value === "") {
        feedback.textContent = t("js-poll-pick-first");
        return;
      }
      try {
        await answerPoll(code, Number(choice.value));
        answered = Number(choice.value);
        feedback.textContent = t("js-poll-your-answer", { number: stepNumber(answered) });
      } catch (error) {
        feedback.textContent = error.message;
      }
    },
  });
  const ask = h(
    "div",
    { className: "poll-ask" },
    h("p", {}, h("strong", { text: `${t("js-poll-question")} ` }), t("js-poll-question-help")),
    h("div", { className: "poll-answer" }, choice, send),
    feedback,
  );
  return function update(poll) {
    if (poll.status === shownStatus && poll.status !== "revealed") return;
    shownStatus = poll.status;
    clear(container);
    container.hidden = poll.status === "closed" && !answered;
    if (poll.status === "open") {
      if (answered === null) choice.value = ""; // nothing chosen for the student
      container.append(ask);
    } else if (poll.status === "revealed") {
      container.append(revealBox(poll.reveal, trace, go));
      container.hidden = false;
    } else {
      container.append(
        h("p", {
          className: "poll-feedback",
          text: answered === null ? t("js-poll-closed") : t("js-poll-closed-answer", { number: stepNumber(answered) }),
        }),
      );
    }
  };
}
