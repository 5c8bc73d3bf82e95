// FORMAT($x, spec: ".2g") in a message: a number as Python's format(x, spec) writes it, with the
// language's decimal separator: the twin of app/words/__init__.py's format_spec (a lesson's
// "rel. error 3.1e-08", an author's choice of digits). Specs ".Ne", ".Nf" and ".Ng" only, on both
// sides; tests/app/words/test_format_spec.py runs both on the same values.

const SPEC = /^\.(\d{1,2})([efg])$/;
const SEPARATOR = { ru: "," }; // as numbers.js: by language, "." otherwise

/** value.toFixed(digits) or value.toExponential(digits) (`method`) rounded as Python rounds: to
 * the nearest, a tie (an exact half, which JS rounds away from zero) to an even last digit. */
function rounded(value, digits, method) {
  if (Object.is(value, -0)) return `-${rounded(0, digits, method)}`; // Python keeps the sign
  if (method === "toFixed" && Math.abs(value) >= 1e21) {
    return BigInt(value).toString() + (digits ? `.${"0".repeat(digits)}` : ""); // toFixed writes an exponent
  }
  const text = value[method](digits);
  const longer = value[method](Math.min(100, digits + 40)); // exact this far for any tie
  const [mantissa, power = ""] = longer.split("e");
  const cut = mantissa.indexOf(".") + (digits ? digits + 1 : 0);
  if (!/^50*$/.test(mantissa.slice(cut + (digits ? 0 : 1)))) return text;
  const down = mantissa.slice(0, cut);
  const last = Number(down.replace(/\.$/, "").slice(-1));
  if (last % 2 === 1) return text; // JS rounded up to the even digit already
  return method === "toFixed" ? down.replace(/\.$/, "") : `${down.replace(/\.$/, "")}e${power}`;
}

/** "3.1e-8" as Python writes it: "3.1e-08" (at least two exponent digits, the sign always). */
function pythonExponent(text) {
  return text.replace(/e([+-])(\d)$/, "e$10$2");
}

/** A 'g' mantissa without trailing zeros (and without the point when nothing follows it). */
function stripped(text) {
  return text.includes(".") ? text.replace(/\.?0+$/, "") : text;
}

function general(value, digits) {
  const precision = Math.max(digits, 1);
  if (value === 0) return Object.is(value, -0) ? "-0" : "0";
  const exponent = Number(rounded(value, precision - 1, "toExponential").split("e")[1]);
  if (exponent < -4 || exponent >= precision) {
    const [mantissa, power] = rounded(value, precision - 1, "toExponential").split("e");
    return pythonExponent(`${stripped(mantissa)}e${power}`);
  }
  return stripped(rounded(value, precision - 1 - exponent, "toFixed"));
}

/** format(value, spec) as Python writes it, in `lang`. */
export function formatSpec(value, spec, lang) {
  const match = SPEC.exec(spec);
  // a catalogue message with a spec the server would refuse too (app/words: FORMAT)
  if (!match) throw new RangeError(`FORMAT(spec=${spec}): .Ne/.Nf/.Ng`);
  const [, count, kind] = match;
  const digits = Number(count);
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  let text;
  if (kind === "f") text = rounded(value, digits, "toFixed");
  else if (kind === "e") text = pythonExponent(rounded(value, digits, "toExponential"));
  else text = general(value, digits);
  return text.replace(".", SEPARATOR[lang] || ".");
}
