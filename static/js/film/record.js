// "Record a training run" (templates/_film_record.html; docs/film.md, "Recording from the page"): the
// task and the steps POSTed to /api/runs (the server checks every limit before any work and names the
// field it refuses), then GET /api/runs/{name}/progress polled into the bar and the line under it
// until the run is written, and its film opened. The server trains it a slice at a time between
// everyone else's builds, so the line also says when a slice waits its turn.

import { request, sleep } from "../lib/api.js";
import { formatNumber } from "../lib/dom.js";
import { local, t } from "../lib/words.js";

const POLL_MS = 1000;
const form = document.getElementById("film-record-form");
const bar = document.getElementById("film-record-bar");
const status = document.getElementById("film-record-status");
const button = document.getElementById("film-record-start");

/** The line for one progress answer. */
function progressLine(progress, name) {
  const { done, total } = progress;
  if (progress.state === "queued" || progress.loss === null) return t("js-film-record-queued", { name });
  if (progress.state === "finishing") return t("js-film-record-finishing", { total });
  if (progress.waiting) return t("js-film-record-waiting", { done, total, ahead: progress.ahead });
  const loss = local(formatNumber(progress.loss));
  return t("js-film-record-progress", { done, total, loss, seconds: local(String(progress.seconds)) });
}

/** Polls the recording until it ends: its answer when done, an error when it failed. */
async function follow(started) {
  for (;;) {
    const progress = await request(started.progress);
    bar.value = progress.total ? progress.done / progress.total : 0;
    if (progress.state === "done") return progress;
    if (progress.state === "failed") throw new Error(progress.error);
    status.textContent = progressLine(progress, started.name);
    await sleep(POLL_MS);
  }
}

async function record(event) {
  event.preventDefault();
  const body = { task: form.elements.task.value, steps: Number(form.elements.steps.value) };
  button.disabled = true;
  bar.hidden = false;
  bar.value = 0;
  try {
    const started = await request("/api/runs", { method: "POST", json: body });
    status.textContent = t("js-film-record-queued", { name: started.name });
    await follow(started);
    bar.value = 1;
    status.textContent = t("js-film-record-done", { name: started.name });
    window.location.assign(started.film);
  } catch (error) {
    status.textContent = t("js-film-record-failed", { error: error.message });
    bar.hidden = true;
    button.disabled = false;
  }
}

form?.addEventListener("submit", record);
