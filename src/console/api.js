// The public API, as any client calls it: the token the person signed in with (an access token or
// an API key, kept for this browser tab only), JSON in and out, DRF errors turned into one message.

const tokenKey = 'overmind.console.token';

export const session = {
  /** @returns {string | null} */
  get token() {
    return sessionStorage.getItem(tokenKey);
  },
  /** @param {string} token */
  signIn(token) {
    sessionStorage.setItem(tokenKey, token);
  },
  /** @param {string} [reason] what the sign-in page says (a session that ended by itself) */
  signOut(reason = 'Signed out.') {
    sessionStorage.removeItem(tokenKey);
    window.dispatchEvent(new CustomEvent('console:signed-out', { detail: reason }));
  },
};

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** @typedef {Record<string, string | number | boolean | null | undefined>} Query */
/** @typedef {{ method?: string, body?: unknown, query?: Query, signal?: AbortSignal, token?: string }} CallOptions */

/**
 * A path with its query string; empty values are left out (the API ignores them anyway).
 * @param {string} path
 * @param {Query} [query]
 */
export function withQuery(path, query = {}) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

/** @param {string | undefined} token */
export function authHeaders(token = session.token ?? undefined) {
  /** @type {Record<string, string>} */
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  return headers;
}

/**
 * Calls the API and answers the body's text. A 401 on a signed-in call ends the session (the
 * console goes back to sign-in).
 * @param {string} path
 * @param {CallOptions} [options]
 * @returns {Promise<string>}
 */
export async function callText(path, { method = 'GET', body, query, signal, token } = {}) {
  const headers = authHeaders(token);
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const init = { method, headers, ...(signal ? { signal } : {}), ...(body !== undefined ? { body: JSON.stringify(body) } : {}) };
  const response = await fetch(withQuery(path, query), init);
  const text = await response.text();
  if (response.ok) return text;
  if (response.status === 401 && token === undefined && session.token) session.signOut('Your session has ended: sign in again to see this page.');
  throw new ApiError(response.status, errorMessage(response.status, text));
}

/**
 * @template T
 * @param {string} path
 * @param {CallOptions} [options]
 * @returns {Promise<T>}
 */
export async function call(path, options) {
  const text = await callText(path, options);
  return text ? JSON.parse(text) : /** @type {T} */ (null);
}

/**
 * What an error answer says: DRF's `detail`, or its field map as "field: message" lines.
 * @param {number} status
 * @param {string} text
 */
function errorMessage(status, text) {
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    return `The service answered ${status}.`;
  }
  if (body && typeof body.detail === 'string') return body.detail;
  if (body && typeof body === 'object') {
    return Object.entries(body)
      .map(([field, messages]) => `${field}: ${Array.isArray(messages) ? messages.map((message) => (typeof message === 'string' ? message : JSON.stringify(message))).join(' ') : JSON.stringify(messages)}`)
      .join('\n');
  }
  return `The service answered ${status}.`;
}
