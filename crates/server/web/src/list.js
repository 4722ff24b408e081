// The task list: the tenant's tasks newest first, a page at a time, filtered by state, read again
// every two seconds so it follows the workers.
import { useEffect, useState } from "preact/hooks";
import { api } from "./api.js";
import { Shown } from "./text.js";
import { age, dollars, html, repoLine, tokens, words } from "./ui.js";

const STATES = [
  "queued", "preparing", "running", "checking", "reviewing", "awaiting_approval",
  "approved", "rejected", "failed", "cancelled", "rolled_back", "scored",
];
const PAGE = 20;
const REFRESH_MS = 2000;

export function TaskList() {
  const [state, setState] = useState("");
  // The cursors of the pages walked through; the last is the page shown.
  const [cursors, setCursors] = useState([null]);
  const [page, setPage] = useState(null);
  const [failure, setFailure] = useState(null);
  const cursor = cursors[cursors.length - 1];

  useEffect(() => {
    let current = true;
    const load = async () => {
      const query = new URLSearchParams({ limit: String(PAGE) });
      if (state) query.set("state", state);
      if (cursor) query.set("before", cursor);
      try {
        const next = await api(`/api/tasks?${query}`);
        if (current) {
          setPage(next);
          setFailure(null);
        }
      } catch (error) {
        if (current) setFailure(error.message);
      }
    };
    load();
    const timer = setInterval(load, REFRESH_MS);
    return () => {
      current = false;
      clearInterval(timer);
    };
  }, [state, cursor]);

  const choose = (event) => {
    setState(event.target.value);
    setCursors([null]);
  };

  return html`<section class="panel" aria-labelledby="tasks-heading">
    <div class="bar">
      <h1 id="tasks-heading">Tasks</h1>
      <label class="inline">State
        <select value=${state} onChange=${choose} data-test="state-filter">
          <option value="">all</option>
          ${STATES.map((name) => html`<option value=${name}>${words(name)}</option>`)}
        </select>
      </label>
      <a class="button primary" href="#/new">New task</a>
    </div>
    ${failure && html`<p class="error" role="alert">${failure}</p>`}
    ${page === null ? html`<p class="muted">Loading…</p>` : html`<${Table} tasks=${page.tasks} />`}
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled=${cursors.length === 1} onClick=${() => setCursors(cursors.slice(0, -1))}>Newer</button>
      <button type="button" disabled=${!page || !page.next} onClick=${() => setCursors([...cursors, page.next])}>Older</button>
    </nav>
  </section>`;
}

function Table({ tasks }) {
  if (tasks.length === 0) return html`<p class="muted" data-test="no-tasks">No tasks here yet.</p>`;
  return html`<div class="table-wrap"><table class="tasks" data-test="task-table">
    <thead><tr>
      <th scope="col">State</th><th scope="col">Ticket</th><th scope="col">Repository</th>
      <th scope="col">Outcome</th><th scope="col" class="num">Rounds</th>
      <th scope="col" class="num">Tokens</th><th scope="col" class="num">Cost</th><th scope="col" class="num">Age</th>
    </tr></thead>
    <tbody>${tasks.map((task) => html`<tr data-task=${task.id}>
      <td><span class=${`state state-${task.state}`}>${words(task.state)}</span></td>
      <td class="title"><a href=${`#/tasks/${task.id}`}><${Shown} text=${task.title} line /></a></td>
      <td class="repo"><${Shown} text=${repoLine(task.request)} line /></td>
      <td>${task.outcome ? words(task.outcome) : "–"}</td>
      <td class="num">${task.rounds ?? "–"}</td>
      <td class="num">${tokens(task.tokens)}</td>
      <td class="num">${dollars(task.cost_usd)}</td>
      <td class="num" title=${new Date(task.created_ms).toISOString()}>${age(task.created_ms)}</td>
    </tr>`)}</tbody>
  </table></div>`;
}
