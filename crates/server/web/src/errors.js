// Collects every error the page meets — a script that throws, a promise nobody caught, an asset
// that failed to load, a Content-Security-Policy violation, a library's `console.error` — into
// `window.plumbErrors`, before any other script runs, so the browser tests can require a page
// without errors.
"use strict";
window.plumbErrors = [];
window.addEventListener(
  "error",
  (event) => {
    const target = event.target;
    const what = target && target !== window && (target.src || target.href);
    window.plumbErrors.push(what ? `failed to load ${what}` : String(event.message));
  },
  true,
);
window.addEventListener("unhandledrejection", (event) => {
  window.plumbErrors.push(`unhandled: ${event.reason && event.reason.stack ? event.reason.stack : event.reason}`);
});
document.addEventListener("securitypolicyviolation", (event) => {
  window.plumbErrors.push(`content security policy: ${event.violatedDirective} ${event.blockedURI}`);
});
const consoleError = console.error.bind(console);
console.error = (...parts) => {
  window.plumbErrors.push(`console: ${parts.map(String).join(" ")}`);
  consoleError(...parts);
};
