// The JSON API client for one trace. Steps and Jacobians are cached in memory (bounded);
// a 404 means the trace was evicted (or lives on another worker): re-POST the spec, retry once.

const CACHE_LIMIT = 80;

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** The person-readable message in a FastAPI error body: a string or [{loc, msg}]. */
function detailMessage(body, status) {
  const detail = body && body.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail) && detail.length) {
    return detail.map((d) => (d.loc ? `${d.loc.filter((p) => p !== "body").join(".")}: ` : "") + d.msg).join("; ");
  }
  return `the server answered ${status}`;
}

export async function requestJson(url, options = {}) {
  let response;
  try {
    response = await fetch(url, { ...options, headers: { Accept: "application/json", ...(options.headers || {}) } });
  } catch (error) {
    throw new ApiError(0, `cannot reach the server (${error.message})`);
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) throw new ApiError(response.status, detailMessage(body, response.status));
  if (body === null) throw new ApiError(response.status, "the server's answer was not JSON");
  return body;
}

export class TraceClient {
  constructor(spec) {
    this.spec = spec;
    this.trace = null;
    this.cache = new Map();
    this.reopening = null;
  }

  async open() {
    this.trace = await requestJson("/api/traces", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(this.spec),
    });
    return this.trace;
  }

  /** One re-POST shared by every request that hit the same 404. */
  reopen() {
    if (!this.reopening) {
      this.reopening = this.open().finally(() => {
        this.reopening = null;
      });
    }
    return this.reopening;
  }

  async getWithReopen(pathFor) {
    const id = this.trace.id;
    try {
      return await requestJson(pathFor(id));
    } catch (error) {
      if (error.status !== 404) throw error;
      if (this.trace.id === id) await this.reopen();
      return requestJson(pathFor(this.trace.id));
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
    return this.cached(`step:${index}:${seq}${extra}`, () =>
      this.getWithReopen((id) => `/api/traces/${encodeURIComponent(id)}/steps/${index}?seq=${seq}${extra}`),
    );
  }

  prefetch(index, seq = 0) {
    if (this.trace && index >= 0 && index < this.trace.steps.length) this.step(index, seq).catch(() => {});
  }

  jacobian({ layer, head, pos, seq = 0 }) {
    const query = new URLSearchParams({ layer: String(layer), pos: String(pos), seq: String(seq) });
    if (head !== undefined && head !== null) query.set("head", String(head));
    return this.cached(`jacobian:${query}`, () =>
      this.getWithReopen((id) => `/api/traces/${encodeURIComponent(id)}/jacobian?${query}`),
    );
  }
}
