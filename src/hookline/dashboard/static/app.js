// hookline dashboard: small progressive enhancements. Every page works without this file.
"use strict";

// Dates in the viewer's terms: <time datetime="...Z"> is rewritten in the local time zone.
function localizeTimes(root) {
  const format = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
  for (const el of root.querySelectorAll("time[datetime]")) {
    const when = new Date(el.getAttribute("datetime"));
    if (Number.isNaN(when.getTime())) continue;
    el.title = el.getAttribute("datetime");
    el.textContent = format.format(when);
  }
}

// Copy buttons: data-copy="<id of the input holding the text>".
function enableCopyButtons(root) {
  for (const button of root.querySelectorAll("button[data-copy]")) {
    button.addEventListener("click", async () => {
      const source = document.getElementById(button.dataset.copy);
      if (!source) return;
      const label = button.textContent;
      try {
        await navigator.clipboard.writeText(source.value);
        button.textContent = "Copied";
      } catch (err) {
        // No clipboard access (e.g. plain http): select the text so Ctrl+C works.
        source.focus();
        source.select();
        button.textContent = "Press Ctrl+C";
      }
      setTimeout(() => { button.textContent = label; }, 2000);
    });
  }
}

// A shown-once secret is selected on focus, so it is easy to copy by hand too.
function selectOnFocus(root) {
  for (const input of root.querySelectorAll("input[readonly]")) {
    input.addEventListener("focus", () => input.select());
  }
}

document.addEventListener("DOMContentLoaded", () => {
  localizeTimes(document);
  enableCopyButtons(document);
  selectOnFocus(document);
});
