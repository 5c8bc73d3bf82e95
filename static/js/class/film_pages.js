// The pages of a class on a recorded run's film (docs/lessons.md, "A class on the film"): the film
// while the class watches it, a run step's walkthrough once the presenter opened one. A follower's
// page that is not the one the class is on goes there (film/class.js on the film, class/follow.js on
// a walk page), keeping the page's own ?lang= and following on (#follow=CODE).

/** The URL of the page the class of `state` is on, for a follower of class `code`; null when the
 * class is not a film class or this page (its run step: `runStep`, null on the film) is that page. */
export function filmClassPage(state, code, runStep) {
  if (!state.run) return null;
  if (state.run_step === runStep) return null;
  const asked = new URLSearchParams(window.location.search).get("lang");
  const query =
    state.run_step === null
      ? { run: state.run, step: String(state.film_step) }
      : { run: state.run, run_step: String(state.run_step), step: String(state.step + 1) }; // the number people read
  if (asked) query.lang = asked;
  const page = state.run_step === null ? "/film" : "/walk";
  return `${page}?${new URLSearchParams(query)}#${new URLSearchParams({ follow: code })}`;
}
