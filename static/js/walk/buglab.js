// The bug lab on the walk page: the planted bugs' links, the faulty-vs-correct diff of a
// backward step, and the quiz ("this step is broken", then the verdict and the reveal); the
// chart of every step's check is walk/checks_chart.js.
// An honest quiz: until the learner answers, the page shows no verdict anywhere (the server
// sends none: app/buglab/quiz.py). The learner has what a real debugger has: the numbers,
// the comparison with the correct backward, and the gradient check itself on a few steps of
// their choice ("probes", counted by the server).
// Every text from the server goes in through textContent (lib/dom.js's h).

import { clear, h, wrappable } from "../lib/dom.js";
import { figureCard } from "../lib/figures.js";
import { stepNumber } from "../lib/numbering.js";
import { t } from "../lib/words.js";
import { createChecksChart, markCell, stepName } from "./checks_chart.js";
import { lessonBeside } from "./present.js";

function codeLines(fault) {
  return h(
    "dl",
    { className: "code-lines" },
    h(
      "div",
      { className: "line-correct" },
      h("dt", { text: t("js-buglab-correct") }),
      h("dd", {}, h("code", { text: fault.correct })),
    ),
    h(
      "div",
      { className: "line-faulty" },
      h("dt", { text: t("js-buglab-faulty") }),
      h("dd", {}, h("code", { text: fault.faulty })),
    ),
  );
}

function plantedHere(fault) {
  return h(
    "div",
    { className: "planted-here" },
    h(
      "p",
      {},
      h("strong", { text: `${t("js-buglab-planted-here")} ` }),
      h("code", { text: fault.name }),
      ` — ${fault.description}`,
    ),
    codeLines(fault),
  );
}

function probesText(probes) {
  const used = probes.used.length;
  if (!used) return t("js-quiz-probes-used-none", { max: probes.max });
  return t("js-quiz-probes-used", { used, max: probes.max, steps: probes.used.map(stepNumber).join(", ") });
}

/** `info` is the page's bug-lab block (#xt-buglab): {mode: "off"|"faults"|"quiz", faults, ...}.
 * `rerender()` draws the current step again (its view changed: a probe, the answer). */
export function createBugLab({ client, info, go, seq, rerender }) {
  const panel = document.getElementById("checks-panel");
  // restoring: this tab's remembered answer is being posted again; no answer button meanwhile
  const state = { trace: null, answer: null, quiz: null, chart: null, current: null, restoring: false };
  const storageKey = () => `xt.quiz.${state.trace.id}`;
  const revealedFaults = () => (info.mode === "faults" ? info.faults : state.answer ? [state.answer.fault] : []);

  function stepOf(op) {
    return state.trace.steps.find((s) => s.name === op && s.phase === "backward") || null;
  }

  // ---- the quiz

  async function answer(step) {
    state.answer = await client.answerQuiz(step.index);
    state.quiz = { answered: true, probes: state.answer.probes };
    try {
      window.sessionStorage.setItem(storageKey(), String(step.index));
    } catch {
      /* private mode */
    }
    showVerdict(document.getElementById("quiz-result"));
    panel.hidden = false;
    panel.open = true;
    state.chart.load();
  }

  function verdictBox() {
    const { correct, chosen, broken, fault, probes } = state.answer;
    const brokenStep = state.trace.steps[broken.index];
    const headline = correct
      ? t("js-quiz-right", { broken: stepName(brokenStep) })
      : t("js-quiz-wrong", { chosen: stepName(state.trace.steps[chosen.index]), broken: stepName(brokenStep) });
    return h(
      "div",
      { className: `quiz-verdict ${correct ? "right" : "wrong"}`, role: "status" },
      h("p", { className: "verdict-headline", text: headline }),
      probes ? h("p", { className: "verdict-probes", text: probesText(probes) }) : null,
      h(
        "p",
        {},
        h("strong", { className: "fault-name", translate: "no" }, wrappable(fault.name)),
        `: ${fault.description}`,
      ),
      codeLines(fault),
      correct || chosen.index === broken.index
        ? null
        : h("button", {
            type: "button",
            className: "button-quiet",
            text: t("js-diverged-go", { number: stepNumber(broken.index) }),
            onclick: () => go(broken.index),
          }),
    );
  }

  function showVerdict(container) {
    if (container) clear(container).append(verdictBox());
  }

  /** "This step is broken" (backward steps) and "spend a probe" (any step not probed yet). */
  function quizTools(step) {
    const status = h("span", { className: "field-help", role: "status" });
    const fail = (button) => (error) => {
      button.disabled = false;
      status.textContent = error.message;
    };
    // a class's quiz is answered in the class's poll (the presenter reveals it)
    const answerButton =
      step.phase === "backward" && !state.quiz?.class
        ? h("button", {
            type: "button",
            className: "button-primary quiz-answer",
            text: t("js-quiz-answer"),
            onclick: (event) => {
              const button = event.currentTarget;
              button.disabled = true;
              answer(step).then(rerender).catch(fail(button));
            },
          })
        : null;
    // a probe unseals a backward step's check: a forward step's fails only from below (forwardNote)
    const probes = step.phase === "backward" ? state.quiz?.probes : null;
    const probed = probes?.used.includes(step.index);
    let probe = null;
    if (probes && !probed && probes.left > 0) {
      probe = h("button", {
        type: "button",
        className: "button-quiet quiz-probe",
        text: t("js-quiz-probe", { left: probes.left, max: probes.max }),
        onclick: (event) => {
          const button = event.currentTarget;
          button.disabled = true;
          client
            .probeQuiz(step.index)
            .then((answer) => {
              state.quiz = { ...state.quiz, answered: answer.answered, probes: answer.probes };
              rerender();
            })
            .catch(fail(button));
        },
      });
    } else if (probes && !probed) {
      probe = h("span", { className: "field-help", text: t("js-quiz-probes-spent", { max: probes.max }) });
    } else if (probed) {
      probe = h("span", { className: "field-help", text: t("js-quiz-probed", { probes: probesText(probes) }) });
    }
    // ✗ on a probed step says the gradient is wrong here, not that this op is: it may come from above
    const fromAbove =
      probed && step.gradcheck?.passed === false
        ? h("p", { className: "forward-note probe-note", text: t("flow-probe-from-above") })
        : null;
    return h("div", { className: "quiz-tools" }, answerButton, probe, status, fromAbove);
  }

  // ---- per-step tools

  async function showDiff(section, step) {
    clear(section).append(h("p", { className: "loading", text: t("js-buglab-diff-running") }));
    const diff = await client.diff(step.index, seq());
    if (!section.isConnected) return;
    clear(section);
    if (diff.verdict) section.append(h("p", { className: "diff-verdict", text: diff.verdict }));
    for (const figure of diff.figures) {
      const card = figureCard(figure);
      section.append(card.element);
      if (section.isConnected) await card.draw();
    }
  }

  /** A quiz's comparison with the correct backward is what a probe buys, until the answer. */
  function diffCostsAProbe(step) {
    const quiz = state.quiz;
    return info.mode === "quiz" && state.answer === null && !quiz?.revealed && !quiz?.probes.used.includes(step.index);
  }

  async function spendProbe(step) {
    const probe = await client.probeQuiz(step.index);
    state.quiz = { ...state.quiz, answered: probe.answered, probes: probe.probes };
    // the probe button beside it counts this one at once, not after the next move
    state.current?.container.querySelector(".quiz-tools")?.replaceWith(quizTools(step));
  }

  function diffTools(step) {
    const section = h("div", { className: "diff-figures" });
    const costly = diffCostsAProbe(step);
    const left = state.quiz?.probes.left ?? 0;
    const button = h("button", {
      type: "button",
      className: "button-quiet diff-button",
      text: costly ? t("js-buglab-diff-costly", { left }) : t("js-buglab-diff"),
      disabled: costly && left === 0,
      onclick: () => {
        button.disabled = true;
        (diffCostsAProbe(step) ? spendProbe(step) : Promise.resolve())
          .then(() => showDiff(section, step))
          .then(() => button.remove())
          .catch((error) => {
            button.disabled = false;
            clear(section).append(
              h("p", { className: "field-error", text: t("js-buglab-diff-failed", { error: error.message }) }),
            );
          });
      },
    });
    return [button, section];
  }

  function stepTools(step) {
    const tools = [];
    const answeredHere = state.answer !== null && state.answer.chosen.index === step.index;
    if (answeredHere) tools.push(verdictBox()); // the verdict names the bug: no second callout
    const planted = answeredHere || step.phase !== "backward" ? [] : revealedFaults();
    for (const fault of planted.filter((f) => f.op === step.name)) tools.push(plantedHere(fault));
    if (info.mode === "quiz" && state.answer === null && !state.restoring) tools.push(quizTools(step));
    // The comparison with the correct backward: a debugger's tool, on offer before the answer too.
    if (info.mode !== "off" && step.phase === "backward") tools.push(...diffTools(step));
    return tools;
  }

  /** A forward step fails only because the broken backward pass hands it a wrong dL/d(output). */
  function forwardNote(step) {
    if (info.mode === "off" || step.gradcheck?.passed !== false) return [];
    return [
      h("p", {
        className: "forward-note",
        text: t("js-buglab-forward-note"),
      }),
    ];
  }

  function decorate(step) {
    const container = state.current?.container;
    if (!container || !step) return;
    container.querySelector(".buglab-step")?.remove();
    const tools = [...stepTools(step), ...(step.phase === "backward" ? [] : forwardNote(step))];
    if (!tools.length) return;
    const box = h("div", { className: "buglab-step" }, tools);
    const facts = container.querySelector(".step-facts");
    const firstCard = container.querySelector(".figures > .figure-card");
    if (lessonBeside() && firstCard)
      firstCard.after(box); // the figure first (walk/present.js)
    else if (facts) facts.after(box);
    else container.prepend(box);
  }

  async function startQuiz(trace) {
    let saved = null;
    try {
      saved = window.sessionStorage.getItem(storageKey());
    } catch {
      /* private mode */
    }
    const step = saved === null ? null : trace.steps[Number(saved)];
    // A remembered answer is posted again (a restarted server forgets it): the verdict comes back.
    if (step) {
      state.restoring = true; // before the first await: the first step drawn offers no second guess
      try {
        await answer(step);
      } finally {
        state.restoring = false;
      }
      rerender();
    } else {
      state.quiz = await client.quizState();
      decorate(state.current?.step); // the probes left, once known
    }
  }

  // A lesson started or stopped beside the step: its tools go where the layout puts them.
  document.addEventListener("xt:lesson", () => decorate(state.current?.step));

  return {
    start(trace) {
      state.trace = trace;
      state.chart = createChecksChart({ client, trace, go });
      for (const link of document.querySelectorAll("[data-go-op]")) {
        const step = stepOf(link.dataset.goOp);
        if (step) link.addEventListener("click", () => go(step.index));
        else link.disabled = true;
      }
      if (info.mode === "faults") state.chart.load();
      if (info.mode === "off") panel.addEventListener("toggle", () => panel.open && state.chart.load());
      if (info.mode === "quiz") startQuiz(trace).catch(() => {});
    },
    /** Called once a step's text is laid out: its timeline cell, and the bug-lab tools. */
    decorateStep(container, step) {
      state.current = { container, step };
      // A quiz's sealed check has no `passed`: its cell keeps its phase colour.
      if (typeof step.gradcheck?.passed === "boolean") markCell(step.index, step.gradcheck.passed);
      decorate(step);
    },
  };
}
