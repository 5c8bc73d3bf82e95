// A message of the words layer (lib/words.js) for the modules the page's first request goes
// through (lib/api.js, its export and queue helpers): words.js is imported only when a message is
// needed, so the trace's POST (walk/trace_client.js) never waits for the catalogue to load.

/** The message `id` with its named values, in the page's language. */
export async function say(id, values = {}) {
  const { t } = await import("./words.js");
  return t(id, values);
}
