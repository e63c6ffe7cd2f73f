import * as z from '../core/schema/zod.ts';
import { InvalidRequestError, UpstreamConnectionError, UpstreamHttpError } from '../core/errors.ts';
import { parseJson } from '../core/parse-json.ts';
import { readBoundedResponseText } from './read-bounded-response.ts';
import { MAX_SERVER_INFO_BYTES, type UpstreamClient } from './upstream-client.ts';

/**
 * What the backend says about its models: the OpenAI list at `GET {base}/models`, and where an engine
 * keeps more facts elsewhere, its own endpoint (llama.cpp `GET /props`, Ollama `POST /api/show`).
 * One parser for every caller: `codex-config`, the VS Code pickers and the bridge's live catalog.
 */

export interface BackendModel {
  id: string;
  /** Context window in tokens, when the engine reports one. */
  contextWindow: number | null;
  /** The field it came from, e.g. `max_model_len` or `meta.n_ctx_train`. */
  contextWindowSource: string | null;
}

/** A model with what the engine-specific endpoints add; null = the backend did not say. */
export interface BackendModelFacts extends BackendModel {
  acceptsImages: boolean | null;
  takesReasoningEffort: boolean | null;
}

const modelListSchema = z.object({ data: z.array(z.looseObject({ id: z.string().check(z.minLength(1)) })) });

/** In order of preference: what the server runs with before what the model was trained for. */
const CONTEXT_WINDOW_FIELDS: readonly (readonly string[])[] = [
  ['max_model_len'], // vLLM, SGLang
  ['loaded_context_length'], // LM Studio (REST API shape): the context actually loaded
  ['max_context_length'], // LM Studio
  ['context_length'], // OpenRouter-style listings
  ['context_window'],
  ['meta', 'n_ctx'], // llama.cpp builds that report the runtime context
  ['meta', 'n_ctx_train'], // llama.cpp: the training context; the server may run with less
];

function readPath(data: unknown, path: readonly string[]): unknown {
  let current: unknown = data;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function findContextWindow(entry: Record<string, unknown>): { contextWindow: number; contextWindowSource: string } | null {
  for (const path of CONTEXT_WINDOW_FIELDS) {
    const value = readPath(entry, path);
    if (isPositiveInteger(value)) return { contextWindow: value, contextWindowSource: path.join('.') };
  }
  return null;
}

interface ParsedModelList {
  models: BackendModel[];
  /** llama.cpp marks its entries (`owned_by: "llamacpp"`, a `meta` object): its `/props` knows more. */
  looksLikeLlamaCpp: boolean;
}

function parseModelListText(url: string, text: string): ParsedModelList {
  const json = parseJson(text);
  const parsed = modelListSchema.safeParse(json.success ? json.value : null);
  if (!parsed.success) throw new InvalidRequestError(`GET ${url} did not return an OpenAI model list ({"data":[{"id":…}]})`);
  const models = parsed.data.data.map((entry) => {
    const found = findContextWindow(entry);
    return { id: entry.id, contextWindow: found?.contextWindow ?? null, contextWindowSource: found?.contextWindowSource ?? null };
  });
  const looksLikeLlamaCpp = parsed.data.data.some((entry) => entry.owned_by === 'llamacpp' || (typeof entry.meta === 'object' && entry.meta !== null));
  return { models, looksLikeLlamaCpp };
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
    response = await (options.fetch ?? fetch)(url, { headers, signal: AbortSignal.timeout(options.timeoutMs ?? 5_000) });
    text = await readBoundedResponseText(response, MAX_SERVER_INFO_BYTES);
  } catch (error) {
    const name = (error as Error).name;
    const code = name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : (errorCode((error as Error).cause) ?? errorCode(error) ?? (error as Error).message);
    throw new UpstreamConnectionError(url, code, { cause: error });
  }
  if (!response.ok) throw new UpstreamHttpError(response.status, text.slice(0, 2_000));
  return parseModelListText(url, text).models;
}

// ---------------------------------------------------------------------------------------------
// Engine-specific facts

/** llama.cpp `GET /props`: the context the server runs with, vision, and whether the template takes an effort. */
export function parseLlamaCppProps(text: string): { contextWindow: number | null; acceptsImages: boolean | null; takesReasoningEffort: boolean | null } {
  const json = parseJson(text);
  const props = json.success ? json.value : null;
  const contextWindow = readPath(props, ['default_generation_settings', 'n_ctx']);
  const vision = readPath(props, ['modalities', 'vision']);
  const effort = readPath(props, ['chat_template_caps', 'supports_reasoning_effort']);
  return {
    contextWindow: isPositiveInteger(contextWindow) ? contextWindow : null,
    acceptsImages: typeof vision === 'boolean' ? vision : null,
    takesReasoningEffort: typeof effort === 'boolean' ? effort : null,
  };
}

/**
 * Ollama `POST /api/show`: `num_ctx` in `parameters` is what the model runs with; without it only the
 * training context (`<architecture>.context_length`) is known, and Ollama may run with less
 * (OLLAMA_CONTEXT_LENGTH). `capabilities` says `vision` and `thinking` (the models that take an effort).
 */
export function parseOllamaShow(text: string): { contextWindow: number | null; contextWindowSource: string | null; acceptsImages: boolean | null; takesReasoningEffort: boolean | null } | null {
  const json = parseJson(text);
  const show = json.success ? json.value : null;
  if (typeof show !== 'object' || show === null) return null;
  const parameters = readPath(show, ['parameters']);
  const numCtx = typeof parameters === 'string' ? /^num_ctx\s+(\d+)\s*$/m.exec(parameters)?.[1] : undefined;
  const architecture = readPath(show, ['model_info', 'general.architecture']);
  const trained = typeof architecture === 'string' ? readPath(show, ['model_info', `${architecture}.context_length`]) : undefined;
  const capabilities = readPath(show, ['capabilities']);
  const capabilityList = Array.isArray(capabilities) ? capabilities.filter((item): item is string => typeof item === 'string') : null;
  if (numCtx === undefined && !isPositiveInteger(trained) && capabilityList === null) return null;
  const context = numCtx !== undefined && isPositiveInteger(Number(numCtx)) ? { contextWindow: Number(numCtx), contextWindowSource: 'api/show parameters.num_ctx' } : isPositiveInteger(trained) ? { contextWindow: trained, contextWindowSource: `api/show model_info.${String(architecture)}.context_length` } : { contextWindow: null, contextWindowSource: null };
  return {
    ...context,
    acceptsImages: capabilityList === null ? null : capabilityList.includes('vision'),
    takesReasoningEffort: capabilityList === null ? null : capabilityList.includes('thinking'),
  };
}

/** The most models asked about one by one (Ollama's /api/show); a bigger list keeps what /v1/models said. */
const MAXIMUM_SHOWN_MODELS = 16;

async function readText(upstream: UpstreamClient, method: 'GET' | 'POST', path: string, body: string | undefined, signal: AbortSignal): Promise<string | null> {
  try {
    const response = await upstream.requestServerRoot(method, path, body, signal);
    const text = await response.text(MAX_SERVER_INFO_BYTES, `answer to ${method} ${path}`);
    return response.status === 200 ? text : null;
  } catch (error) {
    if (signal.aborted) throw error;
    // An engine without this endpoint (or refusing it) just tells us nothing more.
    return null;
  }
}

/**
 * Lists the backend's models through the bridge's own upstream client (its key, its dispatcher) and
 * completes what `/v1/models` leaves out. Throws what `GET /models` throws; the extra endpoints only
 * ever add facts.
 */
export async function discoverBackendModels(upstream: UpstreamClient, signal: AbortSignal): Promise<BackendModelFacts[]> {
  const url = `${upstream.baseUrl}/models`;
  const response = await upstream.getModels(signal);
  const text = await response.text(MAX_SERVER_INFO_BYTES, 'model list');
  if (response.status !== 200) throw new UpstreamHttpError(response.status, text.slice(0, 2_000));
  const list = parseModelListText(url, text);
  const facts: BackendModelFacts[] = list.models.map((model) => ({ ...model, acceptsImages: null, takesReasoningEffort: null }));
  if (list.looksLikeLlamaCpp) {
    const propsText = await readText(upstream, 'GET', '/props', undefined, signal);
    if (propsText !== null) {
      const props = parseLlamaCppProps(propsText);
      for (const model of facts) {
        if (props.contextWindow !== null) Object.assign(model, { contextWindow: props.contextWindow, contextWindowSource: 'props default_generation_settings.n_ctx' });
        model.acceptsImages = props.acceptsImages;
        model.takesReasoningEffort = props.takesReasoningEffort;
      }
    }
    return facts;
  }
  const unknown = facts.filter((model) => model.contextWindow === null).slice(0, MAXIMUM_SHOWN_MODELS);
  await Promise.all(
    unknown.map(async (model) => {
      const showText = await readText(upstream, 'POST', '/api/show', JSON.stringify({ model: model.id }), signal);
      const show = showText === null ? null : parseOllamaShow(showText);
      if (show === null) return;
      Object.assign(model, show);
    }),
  );
  return facts;
}
