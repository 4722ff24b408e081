// The new-task form: where the repository comes from (the kinds the server takes), the ticket in
// Markdown with a preview, the model from the server's capabilities, round and dollar limits. The
// server checks the request; a refusal that names a field is shown beside that field.
import { marked } from "marked";
import { useState } from "preact/hooks";
import { api } from "./api.js";
import { html } from "./ui.js";

export function NewTask({ capabilities, navigate }) {
  const intake = capabilities.intake;
  const kinds = [
    intake.git && ["git", "Git URL"],
    intake.uploads && ["upload", "Archive upload"],
    intake.server_paths && ["path", "Folder on the server"],
  ].filter(Boolean);
  const [kind, setKind] = useState(kinds.length ? kinds[0][0] : "");
  const [values, setValues] = useState({ url: "", rev: "", path: "", ticket: "", model: capabilities.default_model, max_rounds: "", max_usd: "", test_command: "" });
  const [archive, setArchive] = useState(null);
  const [preview, setPreview] = useState(false);
  const [errors, setErrors] = useState({});
  const [busy, setBusy] = useState(false);

  // Editing a field clears the refusal shown beside it.
  const set = (name) => (event) => {
    setValues({ ...values, [name]: event.target.value });
    const field = ["url", "rev", "path"].includes(name) ? `repo.${name}` : name;
    if (errors[field]) setErrors({ ...errors, [field]: undefined });
  };
  const error = (...names) => {
    const name = names.find((candidate) => errors[candidate]);
    return name ? html`<p class="field-error" role="alert" id=${`error-${name}`} data-error-for=${name}>${errors[name]}</p>` : null;
  };

  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setErrors({});
    try {
      const request = { ticket: values.ticket, model: values.model };
      if (kind === "git") request.repo = { kind, url: values.url.trim(), ...(values.rev.trim() ? { rev: values.rev.trim() } : {}) };
      if (kind === "path") request.repo = { kind, path: values.path.trim() };
      if (kind === "upload") {
        if (!archive) {
          setErrors({ "repo.id": "choose a zip, tar or tar.gz archive of the repository" });
          return;
        }
        const upload = await api("/api/uploads", { method: "POST", body: archive, headers: { "Content-Type": "application/octet-stream" } });
        request.repo = { kind, id: upload.id };
      }
      if (values.max_rounds !== "") request.max_rounds = Number(values.max_rounds);
      if (values.max_usd !== "") request.max_usd = Number(values.max_usd);
      if (values.test_command.trim()) request.test_command = values.test_command.trim();
      const started = performance.now();
      const task = await api("/api/tasks", { method: "POST", json: request });
      window.plumbTimings = { task: task.id, created: started };
      navigate(`#/tasks/${task.id}`);
    } catch (failure) {
      setErrors({ [failure.field || "form"]: failure.message });
    } finally {
      setBusy(false);
    }
  };

  const limits = capabilities.limits;
  return html`<section class="panel narrow" aria-labelledby="new-heading">
    <h1 id="new-heading">New task</h1>
    <form onSubmit=${submit} novalidate data-test="new-task">
      ${error("form")}
      <fieldset>
        <legend>Repository</legend>
        <div class="choices" role="radiogroup">
          ${kinds.map(([value, label]) => html`<label class="choice"><input type="radio" name="kind" value=${value}
            checked=${kind === value} onChange=${() => setKind(value)} /> ${label}</label>`)}
        </div>
        ${error("repo.kind")}
        ${kind === "git" && html`<label>Clone URL (https)<input name="url" type="url" value=${values.url} onInput=${set("url")}
          placeholder="https://github.com/acme/billing.git" autocomplete="off" aria-describedby="error-repo.url" /></label>
          ${error("repo.url")}
          <label>Branch or tag <span class="muted">(optional)</span><input name="rev" value=${values.rev} onInput=${set("rev")} /></label>
          ${error("repo.rev")}`}
        ${kind === "upload" && html`<label>Archive (zip, tar, tar.gz; at most ${Math.round(limits.max_upload_bytes / 1048576)} MiB)
          <input name="archive" type="file" accept=".zip,.tar,.tgz,.tar.gz" onChange=${(event) => setArchive(event.target.files[0] || null)} /></label>
          ${error("repo.id")}`}
        ${kind === "path" && html`<label>Absolute path on the server<input name="path" value=${values.path} onInput=${set("path")}
          placeholder="/srv/repos/billing" autocomplete="off" aria-describedby="error-repo.path" /></label>
          ${error("repo.path")}`}
      </fieldset>
      <fieldset>
        <legend>Ticket</legend>
        <div class="tabs" role="tablist">
          <button type="button" role="tab" aria-selected=${!preview} onClick=${() => setPreview(false)}>Write</button>
          <button type="button" role="tab" aria-selected=${preview} onClick=${() => setPreview(true)} data-test="preview-tab">Preview</button>
        </div>
        ${preview
          ? html`<div class="markdown" data-test="preview" dangerouslySetInnerHTML=${{ __html: window.DOMPurify.sanitize(marked.parse(values.ticket || "*Nothing to preview.*")) }}></div>`
          : html`<textarea name="ticket" rows="10" value=${values.ticket} onInput=${set("ticket")} aria-label="Ticket (Markdown)"
              aria-describedby="error-ticket" placeholder="What is wrong, how to see it, what should happen instead."></textarea>`}
        ${error("ticket")}
      </fieldset>
      <fieldset>
        <legend>Model and limits</legend>
        <label>Model<select name="model" value=${values.model} onChange=${set("model")}>
          ${capabilities.models.map((model) => html`<option value=${model.id}>${model.id} — ${model.description}</option>`)}
        </select></label>
        ${error("model")}
        <div class="row">
          <label>Rounds <span class="muted">(at most ${limits.max_rounds})</span>
            <input name="max_rounds" type="number" min="1" max=${limits.max_rounds} value=${values.max_rounds} onInput=${set("max_rounds")} placeholder=${String(limits.max_rounds)} /></label>
          <label>Budget in dollars <span class="muted">(optional)</span>
            <input name="max_usd" type="number" min="0" step="0.01" value=${values.max_usd} onInput=${set("max_usd")} /></label>
        </div>
        ${error("max_rounds", "max_usd")}
        <label>Test command <span class="muted">(optional; detected when empty)</span>
          <input name="test_command" value=${values.test_command} onInput=${set("test_command")} placeholder="python -m pytest -q" autocomplete="off" /></label>
        ${error("test_command")}
      </fieldset>
      <div class="bar end">
        <a class="button" href="#/">Back</a>
        <button type="submit" class="primary" disabled=${busy}>${busy ? "Starting…" : "Start task"}</button>
      </div>
    </form>
  </section>`;
}
