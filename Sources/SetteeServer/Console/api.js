// The HTTP API, as the console calls it: same origin, the session cookie, JSON in and out.
// A refusal comes back as an APIError carrying CouchDB's status, error and reason.

export class APIError extends Error {
  constructor(status, error, reason) {
    super(`${status} ${error}: ${reason}`);
    this.status = status;
    this.error = error;
    this.reason = reason;
  }
}

/** A database name or document id as one path segment (`_design/x` keeps its slash). */
export function segment(name) {
  if (name.startsWith("_design/")) return "_design/" + encodeURIComponent(name.slice(8));
  if (name.startsWith("_local/")) return "_local/" + encodeURIComponent(name.slice(7));
  return encodeURIComponent(name);
}

/** The path of database `db`, with more segments after it (already encoded). */
export function dbPath(db, ...rest) {
  return ["", encodeURIComponent(db), ...rest].join("/");
}

/**
 * Sends a request and answers its body: parsed JSON, or the text itself with
 * `{text: true}` (for documents, whose numbers must stay as written); `signal` ends it (a
 * long poll when its page is left).
 */
export async function request(method, path, { json, body, headers = {}, text = false, signal } = {}) {
  const init = { method, headers: { Accept: "application/json", ...headers }, credentials: "same-origin", signal };
  if (json !== undefined) {
    init.body = JSON.stringify(json);
    init.headers["Content-Type"] = "application/json";
  } else if (body !== undefined) {
    init.body = body;
  }
  const response = await fetch(path, init);
  const answer = await response.text();
  if (!response.ok) {
    let error = "error";
    let reason = answer || response.statusText;
    try {
      const parsed = JSON.parse(answer);
      error = parsed.error || error;
      reason = parsed.reason || reason;
    } catch {
      // Not JSON: the text is the reason.
    }
    throw new APIError(response.status, error, reason);
  }
  if (text) return answer;
  return answer ? JSON.parse(answer) : null;
}

export const get = (path, options) => request("GET", path, options);
export const post = (path, json) => request("POST", path, { json });
export const put = (path, options) => request("PUT", path, options);
export const del = (path) => request("DELETE", path);

/** Who the caller is: `{name, roles}` (`name` null when anonymous). */
export async function session() {
  const answer = await get("/_session");
  return answer.userCtx;
}

export const logIn = (name, password) => post("/_session", { name, password });
export const logOut = () => del("/_session");
