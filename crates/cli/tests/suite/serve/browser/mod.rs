//! The web page of `plumb serve` in a real headless Chromium (Debian's `chromium`), driven over
//! WebDriver (`chromedriver`, through fantoccini) as a person would use it: `approve.rs` signing
//! in, starting BILL-412 from the form, watching it, reading the diff, refusing a stale SHA,
//! approving the right one, downloading the patch, a dropped event stream resumed without a line
//! lost or repeated, another tenant seeing nothing; `decisions.rs` cancelling and rejecting, a bidi
//! character in a file name and a ticket shown escaped, a review note on its line; `evals.rs` the
//! eval reports. Every page must end with no error in `window.plumbErrors` (scripts, promises,
//! assets, console errors, Content-Security-Policy violations). `driver.rs` is the browser.

mod approve;
mod decisions;
mod driver;
mod evals;
