// How a number reads inside a sentence: the page's copy of the server's one formatter
// (app/words/numbers.py, whose docstring says why Fluent's own number formatting is not used).
// tests/app/words/test_numbers.py runs both on the same values: they must agree to the character.

const SIGNIFICANT = 4;
const MAX_DECIMALS = 20;
// The mark before a number's decimals, by language: the catalogue's `number-decimal-separator`,
// which lib/words.js hands over once the page's catalogue is loaded ("." until then).
const DECIMAL_SEPARATOR = {};

/** Takes `lang`'s decimal mark from its catalogue (lib/words.js; a test, from the server's). */
export function useDecimalSeparator(lang, separator) {
  DECIMAL_SEPARATOR[lang] = separator;
}

/** The digits after the point that keep SIGNIFICANT significant ones; the exponent read from the
 * shortest round-trip text (toExponential here, repr on the server: the same digits). */
export function decimals(value) {
  const exponent = Number(Math.abs(value).toExponential().split("e")[1]);
  return Math.min(MAX_DECIMALS, Math.max(0, SIGNIFICANT - 1 - exponent));
}

/** `text`, a number written with a point ("1.5e-3"), with `lang`'s decimal separator. */
export function withSeparator(text, lang) {
  return text.replace(".", DECIMAL_SEPARATOR[lang] || ".");
}

/** `value` as a sentence in `lang` shows it; `places`: that many decimals, always (a score "0.80"). */
export function formatNumber(value, lang, places = null) {
  if (typeof value !== "number") throw new TypeError(`formatNumber: ${typeof value}`);
  if (!Number.isFinite(value)) return Number.isNaN(value) ? "NaN" : value > 0 ? "∞" : "−∞";
  if (places === null && Number.isInteger(value)) return BigInt(value).toString();
  // toFixed rounds the exact binary value, half away from zero (the server: ROUND_HALF_UP).
  let text = value.toFixed(places === null ? decimals(value) : places);
  if (text.includes(".") && places === null) text = text.replace(/0+$/, "").replace(/\.$/, "");
  if (/^-[0.]*$/.test(text)) text = text.slice(1); // a tiny negative value rounded away
  return text.replace(".", DECIMAL_SEPARATOR[lang] || ".");
}

/** A table cell's number in `lang`: four significant digits, trailing zeros dropped; an exponent
 * below 1e-3 and from 1e5 ("1,23e-5" in Russian). lib/dom.js's formatNumber, for the page. */
export function compactNumber(value, lang) {
  if (value === 0) return "0";
  const abs = Math.abs(value);
  if (abs < 1e-3 || abs >= 1e5) return withSeparator(value.toExponential(2), lang);
  const text = value
    .toPrecision(4)
    .replace(/(\.\d*?)0+$/, "$1")
    .replace(/\.$/, "");
  return withSeparator(text, lang);
}

/** An error size in `lang`: "3.2e-8", in Russian "3,2e-8". */
export function errorSize(value, lang) {
  return withSeparator(Number(value).toExponential(1), lang);
}
