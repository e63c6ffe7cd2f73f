/**
 * After a start, ask the backend for its models once, so "backend unreachable" is said right away
 * with the URL and the reason, instead of at Codex's first turn. The bridge keeps running either
 * way: the backend may simply not be up yet.
 */
export type BackendProbeResult = { reachable: true; modelCount: number } | { reachable: false; url: string; reason: string };

const PROBE_TIMEOUT_MS = 5_000;

export async function probeBackend(backendUrl: string, apiKey: string | null): Promise<BackendProbeResult> {
  const url = `${backendUrl.replace(/\/+$/, '')}/models`;
  try {
    const response = await fetch(url, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    if (!response.ok) {
      await response.body?.cancel();
      const hint = response.status === 401 || response.status === 403 ? ' (check the key: Freeform Bridge: Set Backend API Key)' : '';
      return { reachable: false, url, reason: `HTTP ${response.status} ${response.statusText}${hint}` };
    }
    const body = (await response.json()) as { data?: unknown };
    return { reachable: true, modelCount: Array.isArray(body.data) ? body.data.length : 0 };
  } catch (error) {
    return { reachable: false, url, reason: describeFetchError(error) };
  }
}

/** fetch() says only "fetch failed"; the useful part (ECONNREFUSED, ENOTFOUND …) is in the cause. */
export function describeFetchError(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${PROBE_TIMEOUT_MS / 1000} s`;
  const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (cause && typeof cause.code === 'string') return typeof cause.message === 'string' ? cause.message : cause.code;
  return error instanceof Error ? error.message : String(error);
}
