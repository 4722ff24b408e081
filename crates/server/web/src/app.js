// The page's frame: sign-in with a tenant token, the header, and a router over the location's
// hash (`#/` the tasks, `#/new` the form, `#/tasks/ID` a task, `#/evals` the eval reports), so
// the token never rides in a URL and every view is a link a person can keep.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, session } from "./api.js";
import { EvalList } from "./evals.js";
import { NewTask } from "./form.js";
import { TaskList } from "./list.js";
import { TaskPage } from "./task.js";
import { Shown } from "./text.js";
import { html } from "./ui.js";

function SignIn({ onSignedIn }) {
  const [token, setToken] = useState("");
  const [failure, setFailure] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setFailure(null);
    session.signIn(token.trim());
    try {
      onSignedIn(await api("/api/tenant"));
    } catch (error) {
      session.signOut();
      setFailure(error.status === 401 ? "This token is not live on this server: ask its operator for one (plumb token create)." : error.message);
    } finally {
      setBusy(false);
    }
  };
  return html`<main class="signin"><section class="panel narrow" aria-labelledby="signin-heading">
    <h1 id="signin-heading">Sign in to plumb</h1>
    <form onSubmit=${submit} data-test="sign-in">
      <label>Tenant token
        <input type="password" name="token" value=${token} onInput=${(event) => setToken(event.target.value)}
          autocomplete="off" spellcheck="false" required aria-describedby="signin-error" /></label>
      <p class="muted">Kept in this tab's session only; closing the tab signs you out.</p>
      ${failure && html`<p class="error" role="alert" id="signin-error">${failure}</p>`}
      <div class="bar end"><button type="submit" class="primary" disabled=${busy || !token.trim()}>Sign in</button></div>
    </form>
  </section></main>`;
}

function Header({ tenant, onSignOut }) {
  return html`<header class="top">
    <a class="brand" href="#/">plumb</a>
    <nav aria-label="Main"><a href="#/">Tasks</a><a href="#/new">New task</a><a href="#/evals">Evals</a></nav>
    <span class="tenant" data-test="tenant">${tenant ? html`<${Shown} text=${tenant.tenant} line />` : ""}</span>
    <button type="button" onClick=${onSignOut} data-action="sign-out">Sign out</button>
  </header>`;
}

function currentHash() {
  return window.location.hash || "#/";
}

function App() {
  const [tenant, setTenant] = useState(null);
  const [signedIn, setSignedIn] = useState(Boolean(session.token()));
  const [capabilities, setCapabilities] = useState(null);
  const [failure, setFailure] = useState(null);
  const [hash, setHash] = useState(currentHash());

  useEffect(() => {
    const follow = () => setHash(currentHash());
    const signedOut = () => {
      session.signOut();
      setSignedIn(false);
      setTenant(null);
    };
    window.addEventListener("hashchange", follow);
    window.addEventListener("plumb-signed-out", signedOut);
    return () => {
      window.removeEventListener("hashchange", follow);
      window.removeEventListener("plumb-signed-out", signedOut);
    };
  }, []);

  useEffect(() => {
    if (!signedIn) return;
    if (!tenant) api("/api/tenant").then(setTenant, (error) => setFailure(error.message));
    api("/api/capabilities").then(setCapabilities, (error) => setFailure(error.message));
  }, [signedIn]);

  if (!signedIn) {
    return html`<${SignIn} onSignedIn=${(view) => {
      setTenant(view);
      setSignedIn(true);
    }} />`;
  }

  const navigate = (target) => {
    window.location.hash = target;
  };
  const signOut = () => window.dispatchEvent(new Event("plumb-signed-out"));
  const task = hash.match(/^#\/tasks\/([^/]+)$/);
  let view;
  if (task) view = html`<${TaskPage} id=${decodeURIComponent(task[1])} />`;
  else if (hash === "#/new") view = capabilities ? html`<${NewTask} capabilities=${capabilities} navigate=${navigate} />` : html`<p class="muted">Loading…</p>`;
  else if (hash === "#/evals") view = html`<${EvalList} />`;
  else if (hash === "#/" || hash === "#") view = html`<${TaskList} />`;
  else view = html`<section class="panel"><h1>No such page</h1><p><a href="#/">Back to the tasks</a></p></section>`;

  return html`<${Header} tenant=${tenant} onSignOut=${signOut} />
    ${failure && html`<p class="error" role="alert">${failure}</p>`}
    <main>${view}</main>`;
}

render(html`<${App} />`, document.getElementById("app"));
