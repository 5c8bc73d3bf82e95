// While a POST /api/traces waits its turn in the server's queue (app/traces/admission.py: a fair
// queue instead of 503s), say where it stands: GET /api/traces/{id}/queue, polled while the POST is
// under way, shown on the page's loading line (#loading) and given back when the build starts.

import { say } from "./say.js";
import { exported } from "./static_source.js";

const POLL_MS = 1000;

/** One line for a queued build: its place and the estimated wait. */
export function queueText(place) {
  const wait = Math.max(1, Math.round(place.ahead_seconds + (place.seconds || 0)));
  return place.ahead ? say("js-queue-waiting", { ahead: place.ahead, wait }) : say("js-queue-next", { wait });
}

/** Shows each queued place on #loading; restores the line's own words once the build has started. */
function loadingLineShower() {
  let original = null;
  return async (place) => {
    const line = document.getElementById("loading");
    if (!line) return;
    if (place && place.state === "queued") {
      if (original === null) original = line.textContent;
      line.textContent = await queueText(place);
      line.dataset.queuePosition = String(place.position);
    } else if (original !== null) {
      line.textContent = original;
      delete line.dataset.queuePosition;
      original = null;
    }
  };
}

/** Polls where the build of `traceId` stands until the returned stop() is called; `show(place)` gets
 * each answer (a server without the route, e.g. a static export, shows nothing). */
export function watchQueue(traceId, show = loadingLineShower()) {
  // an export has no server: a poll there asked file:///api/… whenever its answer came slower than a poll
  if (!traceId || typeof window === "undefined" || exported) return () => {};
  let stopped = false;
  const url = `/api/traces/${encodeURIComponent(traceId)}/queue`;
  async function poll() {
    if (stopped) return;
    try {
      const response = await fetch(url, { headers: { Accept: "application/json" } });
      if (response.ok && !stopped) show(await response.json());
    } catch {
      // the POST reports real failures; the queue's place is only a courtesy
    }
    if (!stopped) window.setTimeout(poll, POLL_MS);
  }
  window.setTimeout(poll, POLL_MS / 2);
  return () => {
    stopped = true;
    show(null);
  };
}
