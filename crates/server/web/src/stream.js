// A task's event stream (`text/event-stream`) read with fetch, because EventSource cannot send the
// bearer token. Each event's id is its sequence number: after a dropped connection the stream is
// opened again with `Last-Event-ID` set to the last event handled, and an event at or below it is
// never handed on twice, so no line is lost or repeated. The server ends the stream once the task
// is final and every event was sent; an end while the task is still live (a server restarting)
// is a drop like any other.
import { api, session } from "./api.js";

// The states a task never leaves (an approved change may still be rolled back).
const FINAL = ["rejected", "failed", "cancelled", "rolled_back", "scored"];

/** Reads `body` as server-sent events, calling `onEvent` with each parsed `data`. */
async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop();
    for (const line of lines) {
      if (line === "") {
        if (data.length) onEvent(JSON.parse(data.join("\n")));
        data = [];
      } else if (line.startsWith("data:")) {
        data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
      }
      // `id:` repeats data.seq, `event:` data.kind; `:` lines keep the connection alive.
    }
  }
}

/**
 * Follows task `id`'s events: `onEvent(event)` once per event in order, `onStatus(status)` with
 * `live`, `reconnecting` or `ended`. Returns `{stop(), drop(), resumes()}`: `drop` cuts the
 * connection as a network would (it is then resumed), `stop` ends following, `resumes` counts the
 * connections opened again after an event (with `Last-Event-ID`).
 */
export function followEvents(id, onEvent, onStatus) {
  let last = 0;
  let stopped = false;
  let controller = null;
  let delay = 250;
  let resumes = 0;
  const path = `/api/tasks/${encodeURIComponent(id)}/events`;

  const handle = (event) => {
    if (event.seq <= last) return;
    last = event.seq;
    onEvent(event);
  };

  (async () => {
    while (!stopped) {
      controller = new AbortController();
      try {
        const headers = { Accept: "text/event-stream", Authorization: `Bearer ${session.token()}` };
        if (last > 0) headers["Last-Event-ID"] = String(last);
        const response = await fetch(path, { headers, signal: controller.signal });
        if (response.status === 401 || response.status === 404) {
          onStatus("ended");
          return;
        }
        if (!response.ok) throw new Error(`the stream answered ${response.status}`);
        if (last > 0) resumes += 1;
        onStatus("live");
        delay = 250;
        await readEvents(response.body, handle);
        const task = await api(`/api/tasks/${encodeURIComponent(id)}`);
        if (FINAL.includes(task.state)) {
          onStatus("ended");
          return;
        }
      } catch {
        // A dropped connection or a server away: resume below.
      }
      if (stopped) return;
      onStatus("reconnecting");
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 8000);
    }
  })();

  return {
    stop() {
      stopped = true;
      if (controller) controller.abort();
    },
    drop() {
      if (controller) controller.abort();
    },
    resumes: () => resumes,
  };
}
