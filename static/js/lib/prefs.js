// Type size for projectors: a class on <html>, remembered across pages; and the language
// switch's links follow the page's URL (a walk rewrites its step as it moves: the switch keeps it). A classic script (not
// a module) in <head> so the class is set before the first paint; the button is wired once the
// DOM exists. Wrapped in a function so that its names stay out of the page's global scope.
(() => {
  // biome-ignore lint/suspicious/noRedundantUseStrict: a classic script is not strict by itself
  "use strict";
  const KEY = "xt.largeType";
  const root = document.documentElement;

  function stored() {
    try {
      return window.localStorage.getItem(KEY) === "1";
    } catch {
      return false;
    }
  }

  function apply(large) {
    root.classList.toggle("large-type", large);
    const button = document.getElementById("type-size");
    if (button) button.setAttribute("aria-pressed", large ? "true" : "false");
    // Figures size their fonts from this class; they listen for the change.
    document.dispatchEvent(new CustomEvent("xt:typesize", { detail: { large } }));
  }

  /** The switch's link gets the page's URL as it is now, with its own ?lang=, as it is followed. */
  function followPage(event) {
    const link = event.target.closest?.(".lang-switch a[data-lang]");
    if (!link) return;
    const url = new URL(window.location.href);
    url.searchParams.set("lang", link.dataset.lang);
    link.href = url.pathname + url.search + url.hash;
  }

  root.classList.toggle("large-type", stored());
  document.addEventListener("click", followPage, true);
  document.addEventListener("DOMContentLoaded", () => {
    const button = document.getElementById("type-size");
    if (!button) return;
    button.setAttribute("aria-pressed", stored() ? "true" : "false");
    button.addEventListener("click", () => {
      const large = !root.classList.contains("large-type");
      try {
        window.localStorage.setItem(KEY, large ? "1" : "0");
      } catch {
        // private mode: the choice lasts for this page only
      }
      apply(large);
    });
  });
})();
