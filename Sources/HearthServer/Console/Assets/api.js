// Every call the console makes goes through here, so the CSRF header, the session-expiry handling and
// the wording of errors live in one place (docs/console-api.md).

let csrfToken = null;

export function setCsrf(token) { csrfToken = token; }
export function csrf() { return csrfToken; }

/// An error whose message is a sentence fit to show as is; `body` keeps the server's JSON for callers
/// that need more than the sentence (rules errors carry a line and column).
export class ApiError extends Error {
  constructor(message, { status = 0, code = null, body = null } = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

/// `/console/api/...?a=b` with empty parameters left out.
export function apiUrl(path, params = {}) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') query.set(name, String(value));
  }
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

/// The database's REST URL of `path`: each key is encoded on its own, since keys may hold characters
/// (spaces, `%`, `?`) that would otherwise change the URL's meaning. The root is `/.json`.
export function restUrl(ns, path, params = {}) {
  const keys = path.split('/').filter(Boolean).map(encodeURIComponent);
  return apiUrl(`/${keys.join('/')}.json`, { ns, ...params });
}

/// Firebase Auth's endpoints, forwarded by the console with the admin credential.
export function authUrl(project, endpoint) {
  return `/console/api/auth/identitytoolkit.googleapis.com/v1/projects/${encodeURIComponent(project)}/${endpoint}`;
}

export async function request(method, url, { json, body, headers = {}, raw = false } = {}) {
  const init = { method, headers: { ...headers }, credentials: 'same-origin', cache: 'no-store' };
  if (json !== undefined) {
    init.body = JSON.stringify(json);
    init.headers['Content-Type'] = 'application/json';
  } else if (body !== undefined) {
    init.body = body;
  }
  // On reads too: the cookie alone is refused, so a page of another site on this host (another port, a
  // sibling subdomain) cannot make the browser read data with it (a <script src=…?callback=…>).
  if (csrfToken) init.headers['X-Hearth-CSRF'] = csrfToken;
  let response;
  try {
    response = await fetch(url, init);
  } catch {
    throw new ApiError('Could not reach the Hearth server. Check that `hearth serve` is still running, then try again.');
  }
  if (!response.ok) throw await errorFrom(response, url);
  if (raw) return response;
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(`The server answered ${url} with something that is not JSON.`, { status: response.status });
  }
}

export const api = {
  get: (url) => request('GET', url),
  post: (url, json) => request('POST', url, { json }),
  put: (url, json) => request('PUT', url, { json }),
  patch: (url, json) => request('PATCH', url, { json }),
  delete: (url, json) => request('DELETE', url, { json }),
};

async function errorFrom(response, url) {
  let body = null;
  try {
    body = JSON.parse(await response.text());
  } catch { /* not JSON: the status alone has to explain it */ }
  const error = new ApiError(describe(body, response.status), { status: response.status, body, code: authCode(body) });
  // The session ran out or was ended elsewhere: the page goes back to its sign-in screen. The sign-in
  // call itself answers 401 for a wrong token, which its own form explains.
  if (response.status === 401 && !url.startsWith('/console/api/signin') && !url.startsWith('/console/api/session')) {
    window.dispatchEvent(new CustomEvent('hearth:signed-out'));
  }
  return error;
}

function describe(body, status) {
  const code = authCode(body);
  if (code) return authMessage(code, body.error.message);
  const error = body && body.error;
  if (typeof error === 'string' && error) return sentence(error);
  if (error && typeof error.message === 'string') return sentence(error.message);
  switch (status) {
    case 401: return 'You are signed out. Sign in again to continue.';
    case 403: return 'The server refused this change. Reload the console page and try again.';
    case 404: return 'The server does not know this address. Is the console newer than the server?';
    case 413: return 'That is too large for the server to accept in one request.';
    default: return `The server answered with status ${status}. Check the terminal running \`hearth serve\` for details.`;
  }
}

function sentence(text) {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

// Firebase Auth's errors are codes in `message`, sometimes followed by " : detail".
function authCode(body) {
  const message = body && body.error && typeof body.error === 'object' ? body.error.message : null;
  if (typeof message !== 'string') return null;
  const match = /^([A-Z][A-Z_]+)(\s*:.*)?$/.exec(message);
  return match ? match[1] : null;
}

const authMessages = {
  EMAIL_EXISTS: 'A user with this email already exists. Search for it, or use another email.',
  WEAK_PASSWORD: 'That password is too weak: use at least 6 characters.',
  INVALID_EMAIL: 'That is not a valid email address.',
  MISSING_EMAIL: 'Enter an email address.',
  MISSING_PASSWORD: 'Enter a password.',
  INVALID_PASSWORD: 'That password is not valid.',
  USER_NOT_FOUND: 'No user has that UID. It may have been deleted: reload the list.',
  EMAIL_NOT_FOUND: 'No user has that email address.',
  USER_DISABLED: 'That user is disabled. Enable the account first.',
  OPERATION_NOT_ALLOWED: 'This sign-in method is turned off. Turn it on under Sign-in methods.',
  DUPLICATE_LOCAL_ID: 'A user with this UID already exists.',
  TOO_MANY_ATTEMPTS_TRY_LATER: 'Too many attempts. Wait a moment and try again.',
  PROJECT_NOT_FOUND: 'The server does not know this Auth project. Reload the console page.',
};

function authMessage(code, raw) {
  if (authMessages[code]) return authMessages[code];
  const detail = raw.split(':').slice(1).join(':').trim();
  const words = code.toLowerCase().replace(/_/g, ' ');
  return sentence(detail ? `${words[0].toUpperCase()}${words.slice(1)}: ${detail}` : `${words[0].toUpperCase()}${words.slice(1)}`);
}
