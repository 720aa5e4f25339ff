// The Pack explorer's one script (wolfie/ui/, docs/explorer.md): progressive only, the
// pages work without it. A confirmation page's submit asks once more.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const button of document.querySelectorAll("button.confirm")) {
    button.addEventListener("click", (event) => {
      if (!window.confirm(button.textContent + "?")) event.preventDefault();
    });
  }
});
