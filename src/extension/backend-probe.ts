import { STATUS_CODES } from 'node:http';
import { InvalidRequestError, UpstreamConnectionError, UpstreamHttpError } from '../core/errors.ts';
import { fetchBackendModels } from '../server/backend-models.ts';

/**
 * After a start, ask the backend for its models once, so "backend unreachable" is said right away
 * with the URL and the reason, instead of at Codex's first turn. The bridge keeps running either
 * way: the backend may simply not be up yet. The asking is the one GET /models client
 * (`fetchBackendModels`); this only words its failures for the start-up warning.
 */
export type BackendProbeResult = { reachable: true; modelCount: number } | { reachable: false; url: string; reason: string };

const PROBE_TIMEOUT_MS = 5_000;

export async function probeBackend(backendUrl: string, apiKey: string | null): Promise<BackendProbeResult> {
  const url = `${backendUrl.replace(/\/+$/, '')}/models`;
  try {
    const models = await fetchBackendModels(backendUrl, apiKey, { timeoutMs: PROBE_TIMEOUT_MS });
    return { reachable: true, modelCount: models.length };
  } catch (error) {
    if (UpstreamHttpError.is(error)) {
      const hint = error.status === 401 || error.status === 403 ? ' (check the key: Freeform Bridge: Set Backend API Key)' : '';
      return { reachable: false, url, reason: `HTTP ${error.status} ${STATUS_CODES[error.status] ?? ''}`.trimEnd() + hint };
    }
    // It answered, just not with a model list: reachable, and Codex's turns will say the rest.
    if (InvalidRequestError.is(error)) return { reachable: true, modelCount: 0 };
    return { reachable: false, url, reason: describeFetchError(error) };
  }
}

/** fetch() says only "fetch failed"; the useful part (ECONNREFUSED, ENOTFOUND …) is in the cause. */
function describeFetchError(error: unknown): string {
  if (UpstreamConnectionError.is(error) && error.code === 'timeout') return `no answer within ${PROBE_TIMEOUT_MS / 1000} s`;
  const fetchError = UpstreamConnectionError.is(error) ? error.cause : error;
  const cause = fetchError instanceof Error ? (fetchError.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (cause && typeof cause.code === 'string') return typeof cause.message === 'string' ? cause.message : cause.code;
  return fetchError instanceof Error ? fetchError.message : String(error);
}
