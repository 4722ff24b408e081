// The task page: what the task is, its live progress, the check ladder, the review, the diff with
// its SHA-256, and the decisions the state allows. Approval sends the SHA-256 shown in the confirm
// panel, so the server approves the exact diff the person read, or refuses.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiFailure, download } from "./api.js";
import { DiffView } from "./diff.js";
import { Ladder, ladderOf, ReviewPanel } from "./ladder.js";
import { Progress } from "./progress.js";
import { followEvents } from "./stream.js";
import { Shown } from "./text.js";
import { Action, dollars, html, LIVE, repoLine, tokens, words } from "./ui.js";

// The states in which the stored patch is the change decided on (the API's diff is there).
const WITH_DIFF = ["awaiting_approval", "approved", "rejected", "rolled_back"];
// Events after which the task's row has moved on.
const MOVES_TASK = ["state", "cancel_requested", "run_finished", "rolled_back"];
// One empty list, so the diff is not drawn again on every render of a review without notes.
const NO_NOTES = [];

/** Why each decision is not open now; `null` for one that is. */
export function reasons(task, diff) {
  const state = words(task.state);
  const awaiting = task.state === "awaiting_approval";
  return {
    approve: !awaiting
      ? `only a change awaiting approval can be approved; this task is ${state}`
      : !diff ? "the diff is still loading" : null,
    reject: awaiting ? null : `only a change awaiting approval can be rejected; this task is ${state}`,
    cancel: task.cancel_requested
      ? "a cancel was asked for; the worker is ending the run"
      : LIVE.includes(task.state) || awaiting ? null : `the task has ended (${state})`,
    rollback: awaiting || task.state === "approved"
      ? null
      : `only a change awaiting approval or approved can be rolled back; this task is ${state}`,
    patch: diff ? null : "the run has left no diff to download",
    bundle: diff ? null : "the run has left no change to bundle",
  };
}

export function TaskPage({ id }) {
  const [task, setTask] = useState(null);
  const [missing, setMissing] = useState(null);
  const [events, setEvents] = useState([]);
  const [stream, setStream] = useState("connecting");
  const [diff, setDiff] = useState(null);
  const [report, setReport] = useState(null);
  const [placed, setPlaced] = useState(new Set());
  const [message, setMessage] = useState(null);
  const [confirming, setConfirming] = useState(false);
  const [sha, setSha] = useState("");
  const [busy, setBusy] = useState(false);
  const shaInput = useRef(null);
  const path = `/api/tasks/${encodeURIComponent(id)}`;

  const refresh = async () => {
    try {
      setTask(await api(path));
    } catch (failure) {
      if (failure instanceof ApiFailure && failure.status === 404) setMissing(failure.message);
      else setMessage({ tone: "error", text: failure.message });
    }
  };

  useEffect(() => {
    setTask(null);
    setEvents([]);
    setDiff(null);
    setReport(null);
    setMissing(null);
    refresh();
    let first = true;
    const follower = followEvents(
      id,
      (event) => {
        setEvents((seen) => [...seen, event]);
        // For the page's benchmark: when the first line, and the first of each kind, reached the
        // screen (the frame after Preact drew it).
        const timings = window.plumbTimings;
        if (timings && timings.task === id) {
          const isFirst = first;
          requestAnimationFrame(() => {
            const now = performance.now();
            if (isFirst) timings.firstEvent = now;
            timings.kinds = timings.kinds || {};
            if (!(event.kind in timings.kinds)) timings.kinds[event.kind] = now;
          });
        }
        first = false;
        if (MOVES_TASK.includes(event.kind)) refresh();
      },
      setStream,
    );
    // The browser tests cut the connection as a network would, to see it resumed.
    window.plumbDebug = { dropStream: () => follower.drop(), resumes: () => follower.resumes() };
    return () => follower.stop();
  }, [id]);

  const state = task && task.state;
  useEffect(() => {
    if (!task || !task.diff_sha256 || !WITH_DIFF.includes(state)) return;
    if (diff && diff.sha256 === task.diff_sha256) return;
    api(`${path}/diff`).then(setDiff, (failure) => setMessage({ tone: "error", text: failure.message }));
  }, [task && task.diff_sha256, state]);
  useEffect(() => {
    // Figures are kept with the run's report: without them there is no report to ask for.
    if (!task || LIVE.includes(state) || task.rounds == null) return;
    api(`${path}/report`).then(setReport, (failure) => {
      // 409: the run left no report (a task cancelled before it ran).
      if (!(failure instanceof ApiFailure && failure.status === 409)) setMessage({ tone: "error", text: failure.message });
    });
  }, [state, task && task.rounds]);

  if (missing) {
    return html`<section class="panel" data-test="not-found"><h1>No such task</h1>
      <p><${Shown} text=${missing} /></p><p><a href="#/">Back to the tasks</a></p></section>`;
  }
  if (!task) return html`<p class="muted">Loading…</p>`;

  const decide = (action, body) => async () => {
    setBusy(true);
    setMessage(null);
    try {
      setTask(await api(`${path}/${action}`, { method: "POST", json: body ?? {} }));
      setConfirming(false);
      setMessage({ tone: "ok", text: { approve: "Approved.", reject: "Rejected.", cancel: "Cancel sent.", rollback: "Rolled back." }[action] });
    } catch (failure) {
      setMessage({ tone: "error", text: failure.message });
      refresh();
    } finally {
      setBusy(false);
    }
  };
  const save = (what, filename) => async () => {
    try {
      await download(`${path}/${what}`, filename);
    } catch (failure) {
      setMessage({ tone: "error", text: failure.message });
    }
  };
  const openConfirm = () => {
    setSha(diff.sha256);
    setConfirming(true);
    setTimeout(() => shaInput.current && shaInput.current.focus(), 0);
  };

  const why = reasons(task, diff);
  const lock = busy ? "a decision is being sent" : null;
  const review = report ? report.review : [...events].reverse().find((event) => event.kind === "reviewed")?.body?.review;
  const flags = report ? report.flags : [];

  return html`<div class="task">
    <section class="panel" aria-labelledby="task-heading">
      <div class="bar">
        <h1 id="task-heading" data-test="task-title"><${Shown} text=${task.title} line /></h1>
        <span class=${`state state-${task.state}`} data-test="task-state">${words(task.state)}</span>
      </div>
      <dl class="facts">
        <dt>Task</dt><dd><code>${task.id}</code></dd>
        <dt>Repository</dt><dd><${Shown} text=${repoLine(task.request)} line /></dd>
        <dt>Model</dt><dd>${task.request ? task.request.model : "–"}</dd>
        <dt>Outcome</dt><dd data-test="outcome">${task.outcome ? words(task.outcome) : "–"}</dd>
        <dt>Rounds</dt><dd>${task.rounds ?? "–"}</dd>
        <dt>Tokens</dt><dd>${tokens(task.tokens)}</dd>
        <dt>Cost</dt><dd>${dollars(task.cost_usd)}</dd>
        <dt>Attempt</dt><dd>${task.attempt} of ${task.max_attempts}</dd>
      </dl>
      ${task.reason && html`<p class="reason"><${Shown} text=${task.reason} /></p>`}
      <div class="actions" role="group" aria-label="Decisions">
        <${Action} label="Approve…" kind="primary" reason=${lock || why.approve} onClick=${openConfirm} testId="approve" />
        <${Action} label="Reject" reason=${lock || why.reject} onClick=${decide("reject")} testId="reject" />
        <${Action} label="Cancel" reason=${lock || why.cancel} onClick=${decide("cancel")} testId="cancel" />
        <${Action} label="Roll back" reason=${lock || why.rollback} onClick=${decide("rollback")} testId="rollback" />
        <${Action} label="Download patch" reason=${why.patch} onClick=${save("patch", `plumb-${task.id}.patch`)} testId="download-patch" />
        <${Action} label="Download bundle" reason=${why.bundle} onClick=${save("bundle", `plumb-${task.id}.bundle`)} testId="download-bundle" />
      </div>
      ${confirming && html`<form class="confirm" data-test="confirm" onSubmit=${(event) => { event.preventDefault(); decide("approve", { sha256: sha.trim() })(); }}>
        <label>Approve the diff whose SHA-256 is
          <input ref=${shaInput} name="sha256" value=${sha} onInput=${(event) => setSha(event.target.value)} spellcheck="false" autocomplete="off" /></label>
        <p class="muted">The server approves only if this is the SHA-256 of the diff it holds now.</p>
        <div class="bar end">
          <button type="button" onClick=${() => setConfirming(false)}>Back</button>
          <button type="submit" class="primary" disabled=${busy} data-action="confirm-approve">Approve this diff</button>
        </div>
      </form>`}
      ${message && html`<p class=${message.tone === "error" ? "error" : "notice"} role=${message.tone === "error" ? "alert" : "status"} data-test="message"><${Shown} text=${message.text} /></p>`}
    </section>
    <div class="columns">
      <${Progress} events=${events} stream=${stream} />
      <div>
        <${Ladder} steps=${ladderOf(events, report, review, task.state)} flags=${flags} />
        <${ReviewPanel} review=${review} placed=${placed} />
      </div>
    </div>
    ${diff && html`<${DiffView} diff=${diff} notes=${review ? review.notes : NO_NOTES} onPlaced=${setPlaced} />`}
  </div>`;
}
