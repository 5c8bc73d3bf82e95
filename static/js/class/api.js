// The classroom's calls (docs/api.md, "Sessions"): sessions, their event streams and the lessons.
// Plain calls go through lib/api.js's one `request`; the event streams (EventSource, or a
// fetch body read as it arrives for the presenter, whose key travels in a header) live here.

import { request, sleep } from "../lib/api.js";

// A 503 here (too many sessions, Redis unreachable) is not a queue that drains: no retry.
const call = (url, { method = "GET", json, key } = {}) =>
  request(url, { method, json, headers: key ? { "X-Presenter-Key": key } : {}, busyRetries: 0 });

const sessionUrl = (code, suffix = "") => `/api/sessions/${encodeURIComponent(code)}${suffix}`;

export const createSession = (spec, lesson = null) =>
  call("/api/sessions", { method: "POST", json: lesson ? { spec, lesson } : { spec } });
/** A class on a recorded run's film (docs/lessons.md, "A class on the film"), its film at `filmStep`,
 * playing the run's `lesson` if one is given. */
export const createFilmSession = (run, filmStep, lesson = null) =>
  call("/api/sessions", {
    method: "POST",
    json: lesson ? { run, film_step: filmStep, lesson } : { run, film_step: filmStep },
  });
export const getSession = (code, key = null) => call(sessionUrl(code), { key });
export const setState = (code, key, partial) =>
  call(sessionUrl(code, "/state"), { method: "POST", json: partial, key });
export const setPoll = (code, key, action) =>
  call(sessionUrl(code, "/poll"), { method: "POST", json: { action }, key });
/** DELETE /api/sessions/{code}: ends the class for every follower (a 404: it had ended already). */
export async function endSession(code, key) {
  try {
    return await call(sessionUrl(code), { method: "DELETE", key });
  } catch (error) {
    if (error.status === 404) return { code, ended: true };
    throw error;
  }
}
export const answerPoll = (code, step) => call(sessionUrl(code, "/answers"), { method: "POST", json: { step } });
export const qrUrl = (code) => sessionUrl(code, "/qr.svg");
export const getLessons = () => call("/api/lessons");
export const getLesson = (name) => call(`/api/lessons/${encodeURIComponent(name)}`);

/** A student's stream: EventSource (it reconnects by itself). Returns a function that closes it. */
export function followEvents(code, { onState, onEnded, onTrouble }) {
  const source = new EventSource(sessionUrl(code, "/events"));
  source.onmessage = (event) => onState(JSON.parse(event.data));
  source.addEventListener("ended", () => {
    source.close();
    onEnded();
  });
  source.onerror = () => onTrouble(source.readyState === EventSource.CLOSED);
  return () => source.close();
}

function* eventsIn(blocks) {
  for (const block of blocks) {
    const data = block
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trimStart());
    const name = block.split("\n").find((line) => line.startsWith("event:"));
    if (data.length) yield { name: name ? name.slice(6).trim() : "message", data: data.join("\n") };
  }
}

async function readStream(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer = (buffer + value).replace(/\r\n/g, "\n"); // a lone trailing \r waits for its \n
    const blocks = buffer.split("\n\n");
    buffer = blocks.pop();
    for (const event of eventsIn(blocks)) onEvent(event);
  }
}

/** The presenter's stream: fetch, so the key goes in a header (EventSource cannot send one);
 * reconnects after a drop. Returns a function that stops it. */
export function presenterEvents(code, key, { onState, onEnded }) {
  const controller = new AbortController();
  (async () => {
    for (let attempt = 0; !controller.signal.aborted; attempt++) {
      try {
        const response = await fetch(sessionUrl(code, "/events"), {
          headers: { Accept: "text/event-stream", "X-Presenter-Key": key },
          signal: controller.signal,
        });
        if (response.status === 404) return onEnded();
        if (response.ok) {
          attempt = 0;
          await readStream(response, (event) => (event.name === "ended" ? onEnded() : onState(JSON.parse(event.data))));
        }
      } catch {
        if (controller.signal.aborted) return;
      }
      await sleep(Math.min(5, attempt + 1) * 1000);
    }
  })();
  return () => controller.abort();
}
