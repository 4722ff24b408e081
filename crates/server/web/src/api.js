// The API as the page calls it: the tenant's token from this tab's session storage (never a URL,
// never a cookie), JSON in and out, and the API's errors as `ApiFailure`s that keep the field a
// refusal names.
const TOKEN_KEY = "plumb.token";

export const session = {
  token: () => sessionStorage.getItem(TOKEN_KEY),
  signIn: (token) => sessionStorage.setItem(TOKEN_KEY, token),
  signOut: () => sessionStorage.removeItem(TOKEN_KEY),
};

export class ApiFailure extends Error {
  constructor(status, body) {
    super(body.message || `the server answered ${status}`);
    this.status = status;
    this.code = body.error;
    this.field = body.field;
  }
}

function authorised(headers = {}) {
  const token = session.token();
  return token ? { ...headers, Authorization: `Bearer ${token}` } : headers;
}

/** Calls the API; the parsed JSON body (or the response itself with `raw`). */
export async function api(path, { method = "GET", json, body, headers, raw = false, signal } = {}) {
  let sent = body;
  let sentHeaders = authorised(headers);
  if (json !== undefined) {
    sent = JSON.stringify(json);
    sentHeaders = { ...sentHeaders, "Content-Type": "application/json" };
  }
  let response;
  try {
    response = await fetch(path, { method, headers: sentHeaders, body: sent, signal });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiFailure(0, { error: "offline", message: `the server did not answer (${error.message})` });
  }
  if (!response.ok) {
    let failure;
    try {
      failure = await response.json();
    } catch {
      failure = { error: "http", message: `the server answered ${response.status} ${response.statusText}` };
    }
    if (response.status === 401) window.dispatchEvent(new Event("plumb-signed-out"));
    throw new ApiFailure(response.status, failure);
  }
  if (raw) return response;
  return response.status === 204 ? null : response.json();
}

/** Fetches `path` and hands it to the browser as the download `filename`. */
export async function download(path, filename) {
  const response = await api(path, { raw: true });
  const blob = await response.blob();
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
