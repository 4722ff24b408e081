// The check ladder as it fills in, step by step, each with its evidence (the reproduction failing
// then passing, the suite's counts, lint), tamper flags in the warning colour, and the review: its
// verdict, summary and the notes that name no line of the diff (those that do sit on the diff).
import { Shown } from "./text.js";
import { toneOf, verdictTone } from "./progress.js";
import { html, words } from "./ui.js";

const STEPS = ["syntax", "tamper", "reproduce", "pass", "full_suite", "lint", "review", "approval"];

const REVIEW_STATUS = { approve: "passed", request_changes: "failed", needs_attention: "flagged", not_reviewed: "not_run" };
const APPROVAL_STATUS = { approved: "passed", rejected: "failed", rolled_back: "failed", awaiting_approval: "waiting" };

/**
 * The latest report of each step, from the run's events and, once there, its final report; the
 * review step from the review when no check names it, the approval step from the task's state.
 */
export function ladderOf(events, report, review, state) {
  const steps = new Map();
  for (const event of events) {
    if (event.kind === "check" && event.body?.check) steps.set(event.body.check.step, event.body.check);
  }
  for (const check of report?.checks || []) steps.set(check.step, check);
  if (review && !steps.has("review")) {
    steps.set("review", { step: "review", status: REVIEW_STATUS[review.verdict] || "flagged", evidence: review.summary });
  }
  if (!steps.has("approval") && APPROVAL_STATUS[state]) {
    steps.set("approval", { step: "approval", status: APPROVAL_STATUS[state], evidence: "" });
  }
  return steps;
}

export function Ladder({ steps, flags }) {
  return html`<section class="panel" aria-labelledby="ladder-heading">
    <h2 id="ladder-heading">Checks</h2>
    ${flags.length > 0 && html`<ul class="flags" data-test="flags">${flags.map((flag) => html`<li class="warn"><${Shown} text=${flag} /></li>`)}</ul>`}
    <ol class="ladder" data-test="ladder">${STEPS.map((step) => {
      const check = steps.get(step);
      const status = check ? check.status : "pending";
      return html`<li class=${`step ${check ? toneOf(status) : "pending"}`} data-step=${step} data-status=${status}>
        <span class="step-name">${words(step)}</span>
        <span class="step-status">${words(status)}</span>
        ${check && check.evidence && html`<details><summary>evidence</summary><pre><${Shown} text=${check.evidence} /></pre></details>`}
      </li>`;
    })}</ol>
  </section>`;
}

export function ReviewPanel({ review, placed }) {
  if (!review) return null;
  const loose = review.notes.filter((note) => !placed.has(note));
  return html`<section class="panel" aria-labelledby="review-heading" data-test="review">
    <h2 id="review-heading">Review <span class=${`verdict ${verdictTone(review.verdict)}`} data-test="verdict">${words(review.verdict)}</span></h2>
    <p class="muted">by <${Shown} text=${review.reviewer} line /></p>
    ${review.summary && html`<p><${Shown} text=${review.summary} /></p>`}
    ${(review.attention || []).length > 0 && html`<ul class="flags">${review.attention.map((item) => html`<li class="warn"><${Shown} text=${item} /></li>`)}</ul>`}
    ${loose.length > 0 && html`<ul class="notes">${loose.map((note) => html`<li><${Shown}
      text=${note.file ? `${note.file}${note.line ? `:${note.line}` : ""}: ${note.note}` : note.note} /></li>`)}</ul>`}
  </section>`;
}
