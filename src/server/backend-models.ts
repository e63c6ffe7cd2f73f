import { UpstreamConnectionError, UpstreamHttpError } from '../core/errors.ts';
import type { BackendModel } from '../core/doctor/model-list.ts';
import { parseModelListText } from '../core/doctor/model-list.ts';
import { readBoundedResponseText } from './read-bounded-response.ts';
import { MAX_SERVER_INFO_BYTES, type UpstreamClient } from './upstream-client.ts';
import { identifyBackend } from './engine-doctor.ts';
import { withTimeLimit } from './time-limit.ts';

export type { BackendModel } from '../core/doctor/model-list.ts';

/**
 * What the backend says about its models: the OpenAI list at `GET {base}/models`, and where an engine
 * keeps more facts elsewhere, its own endpoints (read by the engine doctor's identification).
 * One source for every caller: `codex-config`, the VS Code pickers and the bridge's live catalog.
 */

/** A model with what the engine-specific endpoints add; null = the backend did not say. */
export interface BackendModelFacts extends BackendModel {
  acceptsImages: boolean | null;
  takesReasoningEffort: boolean | null;
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null ? (error as { code?: string }).code : undefined;
}

export interface FetchBackendModelsOptions {
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/**
 * GET {baseUrl}/models (the bridge proxies it to the backend, so the bridge URL works as well as the
 * backend's). Ollama reports no context window on /v1/models; vLLM, SGLang, llama.cpp and LM Studio do.
 */
export async function fetchBackendModels(baseUrl: string, apiKey?: string | null, options: FetchBackendModelsOptions = {}): Promise<BackendModel[]> {
  const url = `${baseUrl.replace(/\/+$/, '')}/models`;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  let response: Response;
  let text: string;
  try {
    ({ response, text } = await withTimeLimit(options.timeoutMs ?? 5_000, undefined, async (signal) => {
      const answer = await (options.fetch ?? fetch)(url, { headers, signal });
      return { response: answer, text: await readBoundedResponseText(answer, MAX_SERVER_INFO_BYTES) };
    }));
  } catch (error) {
    const name = (error as Error).name;
    // fetch wraps the reason in its cause: a code (ECONNREFUSED) or, for a port fetch never dials, only a message ("bad port").
    const cause = (error as Error).cause;
    const code = name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : (errorCode(cause) ?? errorCode(error) ?? (cause instanceof Error ? cause.message : (error as Error).message));
    throw new UpstreamConnectionError(url, code, { cause: error });
  }
  if (!response.ok) throw new UpstreamHttpError(response.status, text.slice(0, 2_000));
  return parseModelListText(url, text).models;
}

/**
 * Lists the backend's models through the bridge's own upstream client (its key, its dispatcher) and
 * completes what `/v1/models` leaves out with what the engine doctor's identification reads from the
 * engine's own endpoints. Throws what `GET /models` throws; the extra endpoints only ever add facts.
 */
export async function discoverBackendModels(upstream: UpstreamClient, signal: AbortSignal): Promise<BackendModelFacts[]> {
  const identity = await identifyBackend(upstream, signal);
  return identity.models.map((model) => ({
    id: model.id,
    contextWindow: model.contextWindow,
    contextWindowSource: model.contextWindowSource,
    acceptsImages: model.acceptsImages,
    takesReasoningEffort: model.takesReasoningEffort,
  }));
}
