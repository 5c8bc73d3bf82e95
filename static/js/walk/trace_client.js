// The page's one trace client, made before Plotly.js runs: templates/walk.html loads this
// module ahead of Plotly's deferred tag, and deferred scripts run in document order, so the
// spec's POST and the first step's JSON are on their way while Plotly.js is parsed and run;
// walk.js, after Plotly, finds them answered. #xt-spec is read here, once.

// Nothing here imports lib/words.js (its top-level await loads the catalogue): the POST goes out
// at once, before Plotly.js runs (lib/dom.js's readJsonBlock would bring it in).
import { TraceClient } from "../lib/api.js";

const root = document.getElementById("walk");
export const spec = JSON.parse(document.getElementById("xt-spec").textContent);
// The page knows the trace id before the POST answers: the training progress is polled with it.
export const client = new TraceClient(spec, { traceId: root.dataset.traceId });

/** The POST's answer, the trace summary (walk.js awaits it and shows a failure). */
export const opened = client.open();

opened
  .then((trace) => {
    const index = Number(root.dataset.step) || 0;
    const seq = Number(root.dataset.seq) || 0;
    if (seq < trace.n_seq) client.prefetch(index, seq);
  })
  .catch(() => {}); // a failed POST is walk.js's to show
