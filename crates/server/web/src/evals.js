// The reports of evals run through this server's queue (`plumb eval --db` keeps them under the
// tenant `eval`): each eval's figures from its summary, and its HTML report to download. The
// report is the eval's own static page; it is saved as a file, never drawn inside this page.
import { useEffect, useState } from "preact/hooks";
import { api, download } from "./api.js";
import { Shown } from "./text.js";
import { age, dollars, html } from "./ui.js";

function percent(value) {
  return value == null ? "–" : `${Number(value).toFixed(1)} %`;
}

export function EvalList() {
  const [evals, setEvals] = useState(null);
  const [failure, setFailure] = useState(null);
  useEffect(() => {
    api("/api/evals").then((list) => setEvals(list.evals), (error) => setFailure(error.message));
  }, []);
  const save = (id) => async () => {
    try {
      await download(`/api/evals/${encodeURIComponent(id)}/report`, `plumb-eval-${id}.html`);
    } catch (error) {
      setFailure(error.message);
    }
  };

  return html`<section class="panel" aria-labelledby="evals-heading">
    <div class="bar"><h1 id="evals-heading">Evals</h1></div>
    <p class="muted">Evals run with <code>plumb eval --db</code> on this server's queue, as the tenant <code>eval</code> sees them.</p>
    ${failure && html`<p class="error" role="alert">${failure}</p>`}
    ${evals === null
      ? html`<p class="muted">Loading…</p>`
      : evals.length === 0
        ? html`<p class="muted" data-test="no-evals">No eval reports here.</p>`
        : html`<div class="table-wrap"><table class="tasks" data-test="eval-table">
            <thead><tr>
              <th scope="col">Eval</th><th scope="col">Model</th><th scope="col" class="num">Tasks</th>
              <th scope="col" class="num">Resolved</th><th scope="col" class="num">Cost</th>
              <th scope="col" class="num">Updated</th><th scope="col">Report</th>
            </tr></thead>
            <tbody>${evals.map((run) => {
              const summary = run.summary || {};
              return html`<tr data-eval=${run.id}>
                <td class="title"><${Shown} text=${run.title} line /></td>
                <td><${Shown} text=${summary.meta?.model ?? "–"} line /></td>
                <td class="num">${summary.total_instances ?? "–"}</td>
                <td class="num">${summary.resolved_instances ?? "–"} (${percent(summary.resolved_pct)})</td>
                <td class="num">${dollars(summary.totals?.usd)}</td>
                <td class="num" title=${new Date(run.updated_ms).toISOString()}>${age(run.updated_ms)}</td>
                <td><button type="button" onClick=${save(run.id)} data-action="download-report">Download report.html</button></td>
              </tr>`;
            })}</tbody>
          </table></div>`}
  </section>`;
}
