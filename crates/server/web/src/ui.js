// What every view shares: htm bound to Preact, and small formatters.
import { h } from "preact";
import htm from "htm";

export const html = htm.bind(h);

/** "12 s", "5 min", "3 h", "2 d" since `ms`. */
export function age(ms, now = Date.now()) {
  const seconds = Math.max(0, Math.round((now - ms) / 1000));
  if (seconds < 90) return `${seconds} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 36 * 3600) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86400)} d`;
}

/** A number of tokens as people read it: 950, 12.3k, 1.2M. */
export function tokens(count) {
  if (count == null) return "–";
  if (count < 1000) return String(count);
  if (count < 1e6) return `${(count / 1000).toFixed(count < 1e4 ? 1 : 0)}k`;
  return `${(count / 1e6).toFixed(1)}M`;
}

export function dollars(usd) {
  if (usd == null) return "–";
  return usd === 0 ? "$0" : `$${usd < 0.01 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

/** A state's words: `awaiting_approval` → "awaiting approval". */
export function words(name) {
  return String(name ?? "").replaceAll("_", " ");
}

/** The states a task may still move from. */
export const LIVE = ["queued", "preparing", "running", "checking", "reviewing"];

/** Where a task's repository comes from, in a line. */
export function repoLine(request) {
  const repo = request && request.repo;
  if (!repo) return "–";
  if (repo.kind === "git") return repo.rev ? `${repo.url} @ ${repo.rev}` : repo.url;
  if (repo.kind === "upload") return `upload ${repo.id}`;
  return repo.path;
}

/**
 * A button that is either usable or disabled with the reason as its tooltip. A disabled one stays
 * focusable (`aria-disabled`, not `disabled`), so a keyboard reaches it and its reason shows on
 * focus as on hover; a click on it does nothing.
 */
export function Action({ label, reason, onClick, kind = "", testId }) {
  return html`<button type="button" class=${`action ${kind}`} title=${reason || ""}
    aria-disabled=${reason ? "true" : "false"} data-reason=${reason || undefined} data-action=${testId}
    onClick=${reason ? undefined : onClick}>${label}</button>`;
}
