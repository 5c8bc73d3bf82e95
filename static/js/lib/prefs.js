// Type size for projectors: a class on <html>, remembered across pages. A classic script in
// <head> so the class is set before the first paint; the button is wired once the DOM exists.
(function () {
  "use strict";
  var KEY = "xt.largeType";
  var root = document.documentElement;

  function stored() {
    try { return window.localStorage.getItem(KEY) === "1"; } catch (e) { return false; }
  }

  function apply(large) {
    root.classList.toggle("large-type", large);
    var button = document.getElementById("type-size");
    if (button) button.setAttribute("aria-pressed", large ? "true" : "false");
    // Figures size their fonts from this class; they listen for the change.
    document.dispatchEvent(new CustomEvent("xt:typesize", { detail: { large: large } }));
  }

  root.classList.toggle("large-type", stored());
  document.addEventListener("DOMContentLoaded", function () {
    var button = document.getElementById("type-size");
    if (!button) return;
    button.setAttribute("aria-pressed", stored() ? "true" : "false");
    button.addEventListener("click", function () {
      var large = !root.classList.contains("large-type");
      try { window.localStorage.setItem(KEY, large ? "1" : "0"); } catch (e) { /* private mode */ }
      apply(large);
    });
  });
})();
