// The film exported by `xt export --run` (app/export/film.py, docs/export.md): no server behind the
// page. The run's answer comes from the export's files (lib/static_source.js); the film opens at the
// address's ?step= (a step's walkthrough links back there); "open this step" leads to the exported
// walkthrough of a step the export holds (manifest `film.pages`), and for any other step the page
// says plainly that it is not in this export.

import { exported } from "../lib/static_source.js";
import { t } from "../lib/words.js";

const film = exported?.film ?? null;

/** True on a film exported without a server: the attention on demand needs one (film.js). */
export const filmExported = film !== null;

/** The step the film opens at: the server's (`served`), or in an export the address's ?step=. */
export function openingStep(served) {
  if (!film) return served;
  const asked = Number.parseInt(new URL(window.location.href).searchParams.get("step") ?? "", 10);
  return Number.isInteger(asked) && asked >= 0 ? asked : served;
}

let notHere = null; // the line saying a step is not in this export, made once

function noteAfter(link) {
  if (!notHere) {
    notHere = document.createElement("p");
    notHere.className = "field-help film-export-step";
    notHere.setAttribute("aria-live", "polite");
    link.after(notHere);
  }
  return notHere;
}

/** Points the link "open this step" at the walkthrough of the run `name`'s `step`: the server's, an
 * exported page, or (a step the export does not hold) no link and a line saying so. */
export function pointOpen(link, name, step) {
  if (!film) {
    link.href = `/walk?run=${encodeURIComponent(name)}&run_step=${step}`;
    return;
  }
  const page = film.pages[String(step)];
  link.hidden = !page;
  const note = noteAfter(link);
  if (page) {
    link.href = page;
    note.textContent = "";
    return;
  }
  link.removeAttribute("href");
  const held = Object.keys(film.pages);
  note.textContent = held.length
    ? t("film-export-step-not-here", { step, steps: held.join(", "), count: held.length })
    : t("film-export-no-steps", { step });
}
