// A run's events as lines a person reads: each round's tool call and a short result, the checks,
// the review, every change of state. One line per event, keyed by its sequence number.
import { Shown } from "./text.js";
import { html, tokens, words } from "./ui.js";

const MAX_ARGUMENT = 120;

function shortArguments(value) {
  if (value == null) return "";
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > MAX_ARGUMENT ? `${text.slice(0, MAX_ARGUMENT)}…` : text;
}

function firstLine(text) {
  const line = String(text ?? "").split("\n").find((part) => part.trim()) || "";
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/** [tone, text] for one event. */
export function describe(event) {
  const body = event.body || {};
  const round = body.round != null ? `round ${body.round}: ` : "";
  switch (event.kind) {
    case "state":
      return ["change", `${words(body.state)}${body.reason ? ` — ${firstLine(body.reason)}` : ""}`];
    case "cancel_requested":
      return ["warn", "cancel requested"];
    case "run_started":
      return ["", `run started: model ${body.meta?.model ?? "?"}, sandbox ${body.meta?.sandbox ?? "?"}`];
    case "warning":
      return ["warn", `warning: ${firstLine(body.message)}`];
    case "helpers": {
      const on = (body.helpers || []).filter((helper) => helper.on).map((helper) => helper.name);
      return ["muted", `helpers on: ${on.length ? on.join(", ") : "none"}`];
    }
    case "setup":
      return ["", `setup ${(body.argv || []).join(" ")} → exit ${body.exit_code ?? "none"}`];
    case "baseline_tests": {
      const counts = body.counts || {};
      return ["", `tests before the change: ${counts.passed ?? 0} passed, ${counts.failed ?? 0} failed, ${counts.errors ?? 0} errors`];
    }
    case "model_request":
      return ["muted", `${round}asked the model`];
    case "model_reply": {
      const usage = body.reply?.usage || {};
      const seconds = ((body.duration_ms ?? 0) / 1000).toFixed(1);
      return ["muted", `${round}the model answered in ${seconds} s (${tokens(usage.output_tokens ?? 0)} tokens out)`];
    }
    case "candidate_tried":
      return ["muted", `${round}candidate ${body.attempt}${body.used ? " (used)" : ""}: ${firstLine(body.verdict)}`];
    case "tool_started":
      return ["tool", `${round}▶ ${body.name} ${shortArguments(body.arguments)}`];
    case "tool_finished":
      return [body.ok ? "ok" : "bad", `${round}${body.ok ? "✓" : "✗"} ${body.name}: ${firstLine(body.summary)}`];
    case "checkpoint":
      return ["muted", `checkpoint ${body.label}`];
    case "check":
      return [toneOf(body.check?.status), `check ${words(body.check?.step)}: ${words(body.check?.status)}`];
    case "note":
      return ["muted", `${round}note: ${firstLine(body.text)}`];
    case "compacted":
      return ["muted", `${round}history compacted: ${body.replaced_turns} earlier turns replaced by ${body.by_model ? "the model's" : "plumb's"} summary`];
    case "reviewed":
      return [verdictTone(body.review?.verdict), `review: ${words(body.review?.verdict)}`];
    case "rolled_back":
      return ["warn", "rolled back"];
    case "run_finished":
      return ["change", `run finished: ${words(body.outcome)}`];
    default:
      return ["muted", words(event.kind)];
  }
}

export function toneOf(status) {
  return { passed: "ok", failed: "bad", flagged: "warn", not_run: "muted", waiting: "muted" }[status] || "muted";
}

export function verdictTone(verdict) {
  return { approve: "ok", request_changes: "bad", needs_attention: "warn" }[verdict] || "muted";
}

export function Progress({ events, stream }) {
  return html`<section class="panel" aria-labelledby="progress-heading">
    <div class="bar">
      <h2 id="progress-heading">Progress</h2>
      <span class=${`stream stream-${stream}`} data-test="stream" role="status">${{ live: "live", reconnecting: "reconnecting…", ended: "ended", connecting: "connecting…" }[stream]}</span>
    </div>
    ${events.length === 0
      ? html`<p class="muted">No events yet.</p>`
      : html`<ol class="events" data-test="events">${events.map((event) => {
          const [tone, text] = describe(event);
          return html`<li key=${event.seq} data-seq=${event.seq} class=${`event ${tone}`}>
            <time datetime=${new Date(event.at_ms).toISOString()}>${new Date(event.at_ms).toLocaleTimeString()}</time>
            <span><${Shown} text=${text} line /></span></li>`;
        })}</ol>`}
  </section>`;
}
