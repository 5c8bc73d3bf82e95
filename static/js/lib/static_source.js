// A walkthrough exported by `xt export` (app/export, docs/export.md): the page's #xt-export block
// says so, and every request of lib/api.js is then answered here, never by a server.
// * The answers are files beside the page (answers/<name>.json.gz, manifest `answers: "files"`)
//   or one gzipped, base64 block in the page itself (the single file: fetch cannot read file://).
// * An answer's name is the request's URL as app/export/keys.py makes it (keep the two in step):
//   "/api/" dropped, "traces/<id>" -> "trace", the query's pairs but `lang` sorted; then every byte outside
//   [A-Za-z0-9.-] as _XX.
// * A sealed quiz (app/export/sealed.py) answers its probes and its verdict by decrypting them.
// * A film and the walkthroughs of its steps share a directory (app/export/film.py): each page's
//   answers are in its manifest's `folder` (answers/ unless said), the run's (GET /api/runs/NAME) too.

import { say } from "./say.js";
import { sealedQuiz } from "./static_quiz.js";

const node = document.getElementById("xt-export");
/** The export's manifest {trace, lesson, quiz, step, steps, answers, folder?, films?, film?}, or null:
 * the page has a server. */
export const exported = node ? JSON.parse(node.textContent) : null;

export class StaticError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function answerKey(url) {
  const parsed = new URL(url, "http://export.invalid");
  let segments = parsed.pathname.split("/").slice(2).map(decodeURIComponent); // after "" and "api"
  if (segments[0] === "traces") segments = ["trace", ...segments.slice(2)];
  const order = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  const pairs = [...parsed.searchParams.entries()]
    .filter(([name]) => name !== "lang") // an export holds one language (app/export/keys.py)
    .sort((a, b) => order(a[0], b[0]) || order(a[1], b[1]));
  const query = pairs.map(([name, value]) => `${name}=${value}`).join("&");
  return segments.join("/") + (query ? `?${query}` : "");
}

export function fileName(key) {
  const safe = /[A-Za-z0-9.-]/;
  let name = "";
  for (const byte of new TextEncoder().encode(key)) {
    const char = String.fromCharCode(byte);
    name += safe.test(char) ? char : `_${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return name;
}

/** The key of the file holding `key`'s answer with others asked for together (app/export/keys.py's
 * bundle_of), or null for an answer in a file of its own. */
export function bundleOf(key) {
  const [path, query = ""] = key.split("?");
  const pairs = query ? query.split("&").map((pair) => [pair.split("=")[0], pair.slice(pair.indexOf("=") + 1)]) : [];
  const names = new Set(pairs.map(([name]) => name));
  let drop;
  if (path === "trace/jacobian") drop = ["pos"];
  else if (/^trace\/steps\/\d+\/head$/.test(path)) drop = ["figure", "head"];
  else if (/^trace\/steps\/\d+$/.test(path) && names.has("pos")) drop = ["pos"];
  else return null;
  const kept = pairs.filter(([name]) => !drop.includes(name)).map(([name, value]) => `${name}=${value}`);
  return `group:${path}?${kept.join("&")}`;
}

/** The text of gzipped bytes (or of bytes a host already decompressed: no gzip magic). */
export async function gunzipText(bytes) {
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) return new TextDecoder().decode(bytes);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text();
}

let inline = null; // the single file's answers, decoded once

function inlineAnswers() {
  if (!inline) {
    const text = document.getElementById("xt-export-answers").textContent.trim();
    const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    inline = gunzipText(bytes).then((json) => new Map(Object.entries(JSON.parse(json))));
  }
  return inline;
}

async function readFile(name) {
  const folder = exported.folder ?? "answers";
  const response = await fetch(new URL(`${folder}/${fileName(name)}.json.gz`, document.baseURI));
  if (!response.ok) return null;
  return JSON.parse(await gunzipText(new Uint8Array(await response.arrayBuffer())));
}

const bundles = new Map(); // bundle key -> its answers (a promise), read once

const STEP_KEY = /^trace\/steps\/(\d+)(?:[/?]|$)/;

/** False for an answer of a step the export left out (a lesson's export holds its stops only,
 * manifest `steps`): never asked of the host, whose 404 would show in the console. */
function holds(key) {
  const step = key.match(STEP_KEY);
  return !step || !exported.steps || exported.steps.includes(Number(step[1]));
}

/** The exported answer of `key`, or null when the export does not hold it. */
async function load(key) {
  if (!holds(key)) return null;
  if (exported.answers === "inline") return (await inlineAnswers()).get(key) ?? null;
  const bundle = bundleOf(key);
  if (!bundle) return readFile(key);
  if (!bundles.has(bundle)) bundles.set(bundle, readFile(bundle));
  return (await bundles.get(bundle))?.[key] ?? null;
}

const quiz = exported?.quiz ? sealedQuiz(exported, load, StaticError, gunzipText) : null;

/** lib/api.js's `request`, answered from the export. */
export async function staticRequest(url, { method = "GET", json } = {}) {
  const key = answerKey(url);
  if (!["trace", "lessons", "runs/"].some((prefix) => key.startsWith(prefix))) {
    throw new StaticError(501, await say("js-export-no-server", { what: key.split("?")[0] }));
  }
  if (quiz && key.startsWith("trace/quiz")) return quiz.request(key, method, json);
  const exportedAnswer = await load(key);
  const answer = quiz ? await quiz.unsealed(key, exportedAnswer) : exportedAnswer;
  if (answer === null) throw new StaticError(404, await say("js-export-not-here", { key }));
  if (answer.xt_export_refused) throw new StaticError(answer.xt_export_refused, answer.detail);
  return answer;
}

/** The exported page of the film of `run` at `step` (a walkthrough's or lesson's export carries the
 * film of its run: manifest `films`, app/export/film.py), or null when the export does not carry it. */
export function filmPage(run, step) {
  const page = exported?.films?.[run];
  return page ? `${page}?step=${step}` : null;
}

// A lesson's export opens on its lesson (static/js/class/classroom.js reads the fragment).
if (exported?.lesson && !window.location.hash) {
  window.history.replaceState(null, "", `#lesson=${encodeURIComponent(exported.lesson)}`);
}
