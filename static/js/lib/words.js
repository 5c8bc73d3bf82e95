// The words layer in the page: the same Fluent catalogue the server reads (app/words, served as
// GET /words/<lang>.ftl), in the page's language (<html lang>, which the server chose: ?lang=, the
// cookie, Accept-Language). @fluent/bundle is vendored (app/vendor/fluent) and served at
// /vendor/fluent/. Numbers enter a message through xt's own formatter (lib/numbers.js, the server's
// twin); Fluent's bidi isolation marks are off, as on the server. A page without a server (`xt
// export`: app/export/page.py) carries its catalogue in #xt-words and Fluent beside it.

import { FluentBundle, FluentNumber, FluentResource } from "/vendor/fluent/index.js";
import { formatSpec } from "./format_spec.js";
import { formatNumber, useDecimalSeparator, withSeparator } from "./numbers.js";

export const lang = document.documentElement.lang || "en";

/** A number in a message: its plural form by value (Intl.PluralRules, as Fluent does), its text
 * by formatNumber (not Intl.NumberFormat: the server formats numbers the same way). */
class XtNumber extends FluentNumber {
  // Intl.PluralRules rounds to 3 decimals by default: 0.0003 read as 0 ("many" in Russian) where
  // the server (Babel) reads its every digit ("other"); 20 keeps them all, as there
  constructor(value) {
    super(value, { maximumFractionDigits: 20 });
  }

  toString() {
    return formatNumber(this.value, lang);
  }
}

/** FORMAT($x, spec: ".2g"): Python's format spec, as the server's (lib/format_spec.js); a value
 * that is no number reads as itself, as there. */
function FORMAT([value], { spec }) {
  return value instanceof FluentNumber ? formatSpec(value.value, spec, lang) : String(value);
}

async function catalogue() {
  const carried = document.getElementById("xt-words");
  if (carried) return JSON.parse(carried.textContent).ftl;
  const response = await fetch(`/words/${lang}.ftl`);
  if (!response.ok) throw new Error(`/words/${lang}.ftl: HTTP ${response.status}`);
  return response.text();
}

async function load() {
  const bundle = new FluentBundle(lang, { useIsolating: false, functions: { FORMAT } });
  const errors = bundle.addResource(new FluentResource(await catalogue()));
  if (errors.length) throw errors[0];
  return bundle;
}

const bundle = await load();
useDecimalSeparator(lang, t("number-decimal-separator"));

/** The message `id` ("id" or "id.attribute") with its named values; numbers formatted by xt. A
 * missing message or value is an error, never half a sentence. */
export function t(id, values = {}) {
  const [messageId, attribute] = id.split(".");
  const message = bundle.getMessage(messageId);
  const pattern = attribute ? message?.attributes[attribute] : message?.value;
  if (!pattern) throw new Error(`${lang}.ftl lacks ${id}`);
  const args = {};
  for (const [name, value] of Object.entries(values))
    args[name] = typeof value === "number" ? new XtNumber(value) : String(value);
  const errors = [];
  const text = bundle.formatPattern(pattern, args, errors);
  if (errors.length) throw new Error(`${lang}/${id}: ${errors[0].message}`);
  return text;
}

/** A number already written with a point (JS's toPrecision, toFixed: "1.234e-5") as the page's
 * language writes it inside a sentence. */
export function local(text) {
  return withSeparator(String(text), lang);
}

/** Plotly's config in the page's language: its vendored locale (loaded by the page's template
 * for a language other than English) writes the mode bar's words and the axes' decimal comma. */
export const plotLocale = lang === "en" ? {} : { locale: lang };

/** `value` with exactly `places` decimals, in the page's language (a score "0.80"). */
export function fixed(value, places) {
  return formatNumber(value, lang, places);
}
