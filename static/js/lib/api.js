// The one client of the JSON API (docs/api.md): every request the pages make goes through here.
// * A 503 (the server's job queue is full: an overloaded server, not a failure) is retried after
//   its Retry-After, a few times, telling the caller through `onBusy`.
// * A trace-scoped call answered 404 means the server forgot the trace id (evicted, or it lives on
//   another worker): re-POST the spec, retry once. The id is a hash of the spec, so it stays the same.
// * Steps, Jacobians and enlarged heads are cached in memory (bounded, least recently used first out).
// * A page exported by `xt export` has no server: lib/static_source.js answers every request.

import { watchQueue } from "./queue.js";
import { say } from "./say.js";
import { exported, staticRequest } from "./static_source.js";

const CACHE_LIMIT = 80;
const BUSY_RETRIES = 3; // 503s retried per request before the error reaches the caller
const BUSY_DEFAULT_MS = 2500; // when a 503 has no usable Retry-After (the server sends 2 s)
const BUSY_MAX_MS = 10_000;
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** The person-readable message in a FastAPI error body: a string or [{loc, msg}]. */
async function detailMessage(body, status) {
  const detail = body?.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail) && detail.length) {
    return detail.map((d) => (d.loc ? `${d.loc.filter((p) => p !== "body").join(".")}: ` : "") + d.msg).join("; ");
  }
  return say("js-api-status", { status: String(status) });
}

/** How long a 503 asks us to wait: Retry-After in seconds (or an HTTP date), bounded. */
function busyDelay(response) {
  const hint = (response.headers.get("Retry-After") || "").trim();
  if (!hint) return BUSY_DEFAULT_MS;
  const seconds = Number(hint);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(hint) - Date.now();
  return Number.isFinite(ms) && ms >= 0 ? Math.min(ms, BUSY_MAX_MS) : BUSY_DEFAULT_MS;
}

// Every call says the page's language (<html lang>, which the server chose: ?lang=, the cookie,
// Accept-Language), so an answer's words (app.deps.LangDep) match the page's even when the cookie
// changed in another tab. GET /api/faults refuses a query parameter it does not know: not there.
const PAGE_LANG = document.documentElement.lang || "en";
const REFUSES_LANG = "/api/faults";

/** `url` with the page's language (`lang=`), unless it has one or its route refuses it. */
export function withLang(url) {
  const [path, query = ""] = url.split("?");
  if (path === REFUSES_LANG || new URLSearchParams(query).has("lang")) return url;
  return `${url}${url.includes("?") ? "&" : "?"}lang=${encodeURIComponent(PAGE_LANG)}`;
}

async function fetchOnce(url, init) {
  try {
    return await fetch(url, init);
  } catch (error) {
    throw new ApiError(0, await say("js-api-unreachable", { error: error.message }));
  }
}

// The learner identity the server issued (app/sessions/voters.py): an HttpOnly cookie, and the
// `voter` of the answer that issued it, sent back as X-Voter where the cookie does not travel.
const VOTER_KEY = "xt.voter";
let voter = null;
try {
  voter = window.sessionStorage.getItem(VOTER_KEY);
} catch {
  /* private mode: the identity lasts as long as the page */
}

function rememberVoter(body) {
  if (typeof body?.voter !== "string" || body.voter === voter) return;
  voter = body.voter;
  try {
    window.sessionStorage.setItem(VOTER_KEY, voter);
  } catch {
    /* private mode */
  }
}

/** One API call: `json` is sent as a JSON body, `form` (FormData) as multipart; the answer is JSON.
 * `headers` are added (e.g. the presenter's key); `onBusy(ms)` is told before each wait on a 503;
 * `busyRetries` bounds those waits. */
export async function request(
  url,
  { method = "GET", json, form, headers = {}, onBusy = null, busyRetries = BUSY_RETRIES } = {},
) {
  if (exported) return staticRequest(url, { method, json });
  const identity = voter ? { "X-Voter": voter } : {};
  const init = { method, headers: { Accept: "application/json", ...identity, ...headers } };
  if (json !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(json);
  } else if (form !== undefined) {
    init.body = form; // the browser writes the multipart Content-Type and its boundary
  }
  for (let attempt = 0; ; attempt++) {
    const response = await fetchOnce(withLang(url), init);
    let body = null;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    if (response.status === 503 && attempt < busyRetries) {
      const ms = busyDelay(response);
      if (onBusy) onBusy(ms);
      await sleep(ms);
      continue;
    }
    if (!response.ok) throw new ApiError(response.status, await detailMessage(body, response.status));
    if (body === null) throw new ApiError(response.status, await say("js-api-not-json"));
    rememberVoter(body);
    return body;
  }
}

/** GET /api/models: {models, presets}. */
export function getModels() {
  return request("/api/models");
}

/** GET /api/faults?<model or config fields>: which bugs of the catalogue these sizes allow. */
export function getFaults(query) {
  return request(`/api/faults?${query}`);
}

/** POST /api/models (multipart, field `file`): {name, model}. */
export function uploadCheckpoint(file) {
  const form = new FormData();
  form.append("file", file, file.name);
  return request("/api/models", { method: "POST", form });
}

/** Every call about one trace. `traceId` is the id the page announced before the POST
 * returns (the training progress is polled with it). */
export class TraceClient {
  constructor(spec, { traceId = null } = {}) {
    this.spec = spec;
    this.announcedId = traceId || null;
    this.trace = null;
    this.cache = new Map();
    this.opening = null;
  }

  /** The trace's id: once opened, the server's; before, the page's. */
  get id() {
    return this.trace ? this.trace.id : this.announcedId;
  }

  /** POST /api/traces: builds (or finds) the trace. One POST at a time: a 404 that arrives
   * while one is under way waits for it instead of sending another. */
  open() {
    if (!this.opening) {
      const stopWatching = watchQueue(this.announcedId); // the build may wait its turn: say where
      this.opening = request("/api/traces", { method: "POST", json: this.spec })
        .then((trace) => {
          this.trace = trace;
          return trace;
        })
        .finally(() => {
          stopWatching();
          this.opening = null;
        });
    }
    return this.opening;
  }

  /** A call under /api/traces/{id}; a 404 re-POSTs the spec (one POST shared by every request
   * that hit it) and retries once. */
  async call(suffix, options = {}) {
    const id = this.id;
    const url = (traceId) => `/api/traces/${encodeURIComponent(traceId)}${suffix}`;
    try {
      return await request(url(id), options);
    } catch (error) {
      if (error.status !== 404) throw error;
      if (this.id === id) await this.open();
      return request(url(this.id), options);
    }
  }

  cached(key, load) {
    if (this.cache.has(key)) {
      const hit = this.cache.get(key);
      this.cache.delete(key); // re-insert: the Map's order is the LRU order
      this.cache.set(key, hit);
      return hit;
    }
    const promise = load();
    this.cache.set(key, promise);
    promise.catch(() => this.cache.delete(key));
    while (this.cache.size > CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value);
    return promise;
  }

  /** `pos` (output softmax backward only) picks the position of its identity-check figure. */
  step(index, seq = 0, pos = null) {
    const extra = pos === null ? "" : `&pos=${pos}`;
    return this.cached(`step:${index}:${seq}${extra}`, () => this.call(`/steps/${index}?seq=${seq}${extra}`));
  }

  /** One step's gradient check, {index, gradcheck, warning}: a large model's step view answers
   * before it (its gradcheck is {pending: true}). */
  stepCheck(index) {
    return this.cached(`check:${index}:`, () => this.call(`/steps/${index}/check`));
  }

  prefetch(index, seq = 0) {
    if (this.trace && index >= 0 && index < this.trace.steps.length) this.step(index, seq).catch(() => {});
  }

  jacobian({ layer, head, pos, seq = 0 }) {
    const query = new URLSearchParams({ layer: String(layer), pos: String(pos), seq: String(seq) });
    if (head !== undefined && head !== null) query.set("head", String(head));
    return this.cached(`jacobian:${query}`, () => this.call(`/jacobian?${query}`));
  }

  /** One head of a step's grid of attention heads, with every value. */
  head(index, { figure, head, seq = 0 }) {
    const query = new URLSearchParams({ figure, head: String(head), seq: String(seq) });
    return this.cached(`head:${index}:${query}`, () => this.call(`/steps/${index}/head?${query}`));
  }

  /** The gradient check of every step, as far as the server has got. */
  checks(options = {}) {
    return this.call("/checks", options);
  }

  /** A backward step of a trace with faults against the same step without them. */
  diff(index, seq = 0) {
    return this.call(`/steps/${index}/diff?seq=${seq}`);
  }

  /** ΔW and the gradient of one parameter on the update step. */
  update(param) {
    return this.call(`/update?param=${encodeURIComponent(param)}`);
  }

  /** The quiz's answer; from then on every step's view carries its verdict: cached views are dropped. */
  async answerQuiz(index) {
    const answer = await this.call("/quiz/answer", { method: "POST", json: { step: index } });
    this.forget(/^(step|jacobian|check):/);
    return answer;
  }

  /** A quiz's state: {answered, probes: {used, max, left}}. */
  quizState() {
    return this.call("/quiz");
  }

  /** Spends one of the quiz's probes on step `index`: its gradient check (the step's view
   * now carries it: its cached copies are dropped). */
  async probeQuiz(index) {
    const probe = await this.call("/quiz/probe", { method: "POST", json: { step: index } });
    this.forget(new RegExp(`^(step|check):${index}:`));
    return probe;
  }

  /** Drops cached answers whose key matches `pattern`. */
  forget(pattern) {
    for (const key of [...this.cache.keys()]) if (pattern.test(key)) this.cache.delete(key);
  }

  /** How far the training before the trace's step has got (while the POST trains). */
  progress() {
    return this.call("/progress");
  }
}
