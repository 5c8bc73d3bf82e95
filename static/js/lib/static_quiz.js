// A quiz exported sealed (app/export/sealed.py): the export's files hold no verdict in clear.
// Its answer "trace/quiz/sealed" holds, encrypted, what the server would send a learner who
// probed step i (one blob per step) or answered step i (one blob per backward step, all of one
// length), and the answers every verdict unseals (one blob, its key inside each answer's blob).
// A blob's key is PBKDF2-SHA-256 of "probe:i" or "answer:i" with the export's salt; the cipher is
// HMAC-SHA-256 in counter mode (PBKDF2 with one iteration as the key stream) and an HMAC tag.
// Probes are counted here, in this browser (localStorage: a reload does not refund them).
// It keeps the verdict out of sight, not out of reach: a script that tries every step finds it.

import { say } from "./say.js";

const encoder = new TextEncoder();
const bytesOf = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

async function pbkdf2(secret, salt, iterations, bytes) {
  const base = await crypto.subtle.importKey("raw", secret, "PBKDF2", false, ["deriveBits"]);
  const params = { name: "PBKDF2", hash: "SHA-256", salt: encoder.encode(salt), iterations };
  return new Uint8Array(await crypto.subtle.deriveBits(params, base, bytes * 8));
}

/** The plaintext bytes of `blob` (base64 of ciphertext + 16-byte tag) under `key`; null if the
 * tag does not match (the wrong key). */
async function decrypt(key, blob) {
  const data = bytesOf(blob);
  const cipher = data.slice(0, -16);
  const mac = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const tag = new Uint8Array(await crypto.subtle.sign("HMAC", mac, cipher)).slice(0, 16);
  if (!tag.every((byte, i) => byte === data[data.length - 16 + i])) return null;
  const stream = await pbkdf2(key, "xt-stream", 1, cipher.length);
  return cipher.map((byte, i) => byte ^ stream[i]);
}

/** The sealed quiz of an export: `load(key)` reads an exported answer (lib/static_source.js). */
export function sealedQuiz(manifest, load, StaticError, gunzipText) {
  const storageKey = `xt.export.quiz.${manifest.trace}`;
  const saved = (() => {
    try {
      return JSON.parse(window.localStorage.getItem(storageKey)) || {};
    } catch {
      return {};
    }
  })();
  const state = { probed: saved.probed || [], answered: saved.answered ?? null, patches: new Map() };
  let sealed = null;
  const seal = () => {
    sealed ??= load("trace/quiz/sealed");
    return sealed;
  };
  const save = () => {
    try {
      window.localStorage.setItem(storageKey, JSON.stringify({ probed: state.probed, answered: state.answered }));
    } catch {
      /* private mode: the count lasts as long as the page */
    }
  };

  async function open(label, blob) {
    if (!window.crypto?.subtle) {
      throw new StaticError(501, await say("js-export-no-crypto"));
    }
    const box = await seal();
    const key = await pbkdf2(encoder.encode(label), box.salt, box.iterations, 32);
    const plain = blob ? await decrypt(key, blob) : null;
    if (!plain) {
      const [what, step] = label.split(":");
      const id = what === "probe" ? "js-export-sealed-missing-probe" : "js-export-sealed-missing-answer";
      throw new StaticError(404, await say(id, { step }));
    }
    const length = new DataView(plain.buffer).getUint32(0); // app/export/sealed.py's _padded
    return JSON.parse(await gunzipText(plain.slice(4, 4 + length)));
  }

  async function unsealWith(patches) {
    for (const [key, patch] of Object.entries(patches)) state.patches.set(key, patch);
  }

  async function probe(index) {
    const box = await seal();
    const opened = await open(`probe:${index}`, box.probes[index]);
    await unsealWith(opened.patches);
    return opened.answer;
  }

  async function answer(index) {
    const box = await seal();
    const opened = await open(`answer:${index}`, box.answers[index]);
    const plain = await decrypt(bytesOf(opened.unseal), box.unsealed);
    await unsealWith(JSON.parse(await gunzipText(plain)));
    return opened.answer;
  }

  const json = (max) => ({
    answered: state.answered !== null,
    probes: { used: [...state.probed], max, left: Math.max(0, max - state.probed.length) },
  });

  let restored = null; // the answer and probes of an earlier visit, opened again once
  const restore = () => {
    restored ??= Promise.all([
      ...state.probed.map((i) => probe(i)),
      state.answered === null ? null : answer(state.answered),
    ]).catch(() => null);
    return restored;
  };

  async function request(key, method, body) {
    await restore();
    const max = (await seal()).max_probes;
    if (key === "trace/quiz") return { ...json(max), class: false, revealed: false };
    const index = Number(body?.step);
    if (key === "trace/quiz/answer") {
      const verdict = await answer(index);
      state.answered = index;
      save();
      return { ...verdict, ...json(max) };
    }
    if (key === "trace/quiz/probe" && method === "POST") {
      const free = state.answered !== null || state.probed.includes(index);
      if (!free && state.probed.length >= max) {
        const used = state.probed.join(", ");
        throw new StaticError(409, await say("js-export-probes-spent", { max, used }));
      }
      const checked = await probe(index);
      if (!free) state.probed.push(index);
      save();
      return { ...checked, ...json(max) };
    }
    throw new StaticError(404, await say("js-export-quiz-no", { key }));
  }

  /** `answer` as this learner sees it: unsealed where a probe or the answer opened it. */
  async function unsealed(key, answer) {
    await restore();
    const patch = state.patches.get(key);
    if (!patch) return answer;
    return answer === null || answer.xt_export_refused ? patch : { ...answer, ...patch };
  }

  return { request, unsealed };
}
