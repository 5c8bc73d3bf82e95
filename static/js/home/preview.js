// What the server says of the chosen checkpoint and the text before Start (GET /api/tokenize):
// the count and pieces of the model's own tokenizer (a BPE cannot be counted here) and the
// most training steps it would run. Asked once typing pauses; an answer to an older question
// (the text or the model changed since) is dropped.

import { request } from "../lib/api.js";

const PAUSE_MS = 250; // typing pauses this long before the server is asked

/** `onAnswer(answer, asked)` gets the server's answer and the {model, text, dtype} it answers;
 * `onError(error, asked)` a refusal (e.g. too long a text: the message names the limit). */
export function createPreview(onAnswer, onError) {
  let timer = null;
  let latest = 0;

  function ask(asked) {
    clearTimeout(timer);
    const id = ++latest;
    timer = setTimeout(async () => {
      try {
        const answer = await request(`/api/tokenize?${new URLSearchParams(asked)}`);
        if (id === latest) onAnswer(answer, asked);
      } catch (error) {
        if (id === latest) onError(error, asked);
      }
    }, PAUSE_MS);
  }

  /** Forgets the question in flight (a random init needs no server count). */
  function cancel() {
    clearTimeout(timer);
    latest++;
  }

  return { ask, cancel };
}
