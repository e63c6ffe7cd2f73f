import { DEFAULT_BACKEND_URL } from './defaults.ts';

/**
 * The one check of an HTTP base URL (a backend's, or the bridge's own as Codex sees it): it must parse
 * and use http or https. Callers name the URL in their message ("backend URL …", "base URL …") and
 * add their own rules on top.
 */
export type HttpUrlCheck = { ok: true; url: URL } | { ok: false; problem: string };

export function checkHttpUrl(text: string, example: string): HttpUrlCheck {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, problem: `'${text}' is not a valid URL (expected e.g. ${example})` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, problem: `'${text}' must start with http:// or https://` };
  return { ok: true, url };
}

/** Query parameters that carry a credential (`?api-key=…`, `?token=…`), by name. */
const CREDENTIAL_PARAMETER = /key|token|secret|password|passwd|auth|signature|sig$/i;

/**
 * A backend URL is shown on the unauthenticated /healthz, in the panel, the log and every error, and
 * is never used for authentication: a credential written into it (`user:pass@`, `?api-key=`) would be
 * published, not used. It is refused, naming where the key belongs, without repeating it.
 */
function describeCredentialsInUrl(url: URL): string | null {
  const where = url.username !== '' || url.password !== '' ? 'user:password@' : [...url.searchParams.keys()].find((name) => CREDENTIAL_PARAMETER.test(name));
  if (where === undefined) return null;
  const shown = new URL(url.toString());
  shown.username = '';
  shown.password = '';
  shown.search = '';
  const label = where === 'user:password@' ? 'a user name or password (user:password@)' : `a credential in its query string (${where}=…)`;
  return `'${shown.toString()}' carries ${label}; the bridge would show it on /healthz and in errors and never send it as a key. Remove it and set it as the backend API key instead (serve --backend-api-key-env, or Freeform Bridge: Set Backend API Key)`;
}

/** What is wrong with a backend URL, or null when the bridge can use it. */
export function describeInvalidBackendUrl(text: string): string | null {
  const check = checkHttpUrl(text, DEFAULT_BACKEND_URL);
  return check.ok ? describeCredentialsInUrl(check.url) : check.problem;
}

/**
 * The backend URL as the upstream client uses it (no trailing slash on the path, a query string kept
 * after it); throws on a URL it cannot use.
 */
export function normaliseBackendUrl(text: string): string {
  const check = checkHttpUrl(text, DEFAULT_BACKEND_URL);
  if (!check.ok) throw new Error(`backend URL ${check.problem}`);
  const credentials = describeCredentialsInUrl(check.url);
  if (credentials !== null) throw new Error(`backend URL ${credentials}`);
  const url = check.url;
  url.hash = '';
  url.pathname = url.pathname.replace(/\/+$/, '');
  return url.toString().replace(/\/+(\?|$)/, '$1');
}

/**
 * Where a base URL without a version segment most likely should point. Engines serve their
 * OpenAI-compatible API at `/v1` off the server's root, so a path such as Ollama's native `/api` is
 * replaced, not extended (`…/api/v1` does not exist); another path may also be a reverse proxy's
 * prefix, so that reading is offered second. A full endpoint pasted by mistake is cut back to `/v1`.
 */
export function suggestVersionedBaseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${text.replace(/\/+$/, '')}/v1`;
  }
  const path = url.pathname.replace(/\/+$/, '');
  const versionAt = path.search(/\/v\d+(?:beta\d*)?(?=\/)/);
  if (versionAt !== -1) return `${url.origin}${path.slice(0, path.indexOf('/', versionAt + 1))}`;
  const atRoot = `${url.origin}/v1`;
  // `/api` is Ollama's native API, never a mount point for an OpenAI-compatible one.
  return path === '' || path === '/api' ? atRoot : `${atRoot} (or ${url.origin}${path}/v1 if the server is mounted under ${path})`;
}
