// The film's attention on demand (film.js): every head's attention pattern at the chosen step,
// each layer's "attention probabilities, all heads" figure of the step's walkthrough trace. The run
// keeps only the scores: the pattern needs the step's forward, rebuilt from the run's checkpoint at
// or before it (POST /api/traces {"run", "run_step"}), so it is drawn when asked, never per frame.

import { TraceClient } from "../lib/api.js";
import { clear } from "../lib/dom.js";
import { figureCard, purgeWithin } from "../lib/figures.js";
import { t } from "../lib/words.js";

const PROBS = /^layers\.(\d+)\.attention\.probs$/;

/** The steps that draw each layer's attention probabilities (forward), in layer order. */
function probSteps(trace) {
  return trace.steps.filter((step) => step.phase === "forward" && PROBS.test(step.name));
}

/** Wires the "show the attention" button: `chosen()` is the step the scrubber is on, `replayed(step)`
 * the steps its rebuild replays (from the checkpoint at or before it). */
export function wireAttention(name, chosen, replayed) {
  const button = document.getElementById("film-attention");
  const status = document.getElementById("film-attention-status");
  const panel = document.getElementById("film-attention-figures");
  button.hidden = false;
  button.addEventListener("click", async () => {
    const step = chosen();
    button.disabled = true;
    status.textContent = t("js-film-attention-building", { step, replayed: replayed(step) });
    purgeWithin(panel);
    clear(panel);
    try {
      const client = new TraceClient({ run: name, run_step: step });
      const trace = await client.open();
      const views = await Promise.all(probSteps(trace).map((entry) => client.step(entry.index)));
      for (const view of views) {
        const figure = view.figures.find((f) => f.id.startsWith("output."));
        const card = figureCard(figure);
        panel.append(card.element);
        await card.draw();
      }
      status.textContent = t("js-film-attention-shown", { step });
    } catch (error) {
      status.textContent = t("js-film-failed", { error: error.message });
    } finally {
      button.disabled = false;
    }
  });
}
