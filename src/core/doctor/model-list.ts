import * as z from '../schema/zod.ts';
import { InvalidRequestError } from '../errors.ts';
import { parseJson } from '../parse-json.ts';

/**
 * The OpenAI model list (`GET {base}/models`) as every engine writes it, and the small readers the
 * engine-specific answers share. Pure: the server fetches, this reads.
 */

export interface BackendModel {
  id: string;
  /** Context window in tokens, when the engine reports one. */
  contextWindow: number | null;
  /** The field it came from, e.g. `max_model_len` or `meta.n_ctx_train`. */
  contextWindowSource: string | null;
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

/** The model-list fields that name what a model was trained for, not what the server runs it with. */
export const TRAINING_CONTEXT_SOURCES: ReadonlySet<string> = new Set(['meta.n_ctx_train', 'max_context_length']);

export function readPath(data: unknown, path: readonly string[]): unknown {
  let current: unknown = data;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

export function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

export function readString(data: unknown, path: readonly string[]): string | null {
  const value = readPath(data, path);
  return typeof value === 'string' && value !== '' ? value : null;
}

/** A JSON object from an answer's text; null for anything else (HTML, plain text, an array). */
export function parseJsonObject(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  const json = parseJson(text);
  return json.success && typeof json.value === 'object' && json.value !== null && !Array.isArray(json.value) ? (json.value as Record<string, unknown>) : null;
}

function findContextWindow(entry: Record<string, unknown>): { contextWindow: number; contextWindowSource: string } | null {
  for (const path of CONTEXT_WINDOW_FIELDS) {
    const value = readPath(entry, path);
    if (isPositiveInteger(value)) return { contextWindow: value, contextWindowSource: path.join('.') };
  }
  return null;
}

export interface ParsedModelList {
  models: BackendModel[];
  /** Each entry as the engine wrote it, for the fields only one engine writes (`owned_by`, `meta`). */
  entries: ReadonlyArray<Record<string, unknown>>;
}

export function parseModelListText(url: string, text: string): ParsedModelList {
  const json = parseJson(text);
  const parsed = modelListSchema.safeParse(json.success ? json.value : null);
  if (!parsed.success) throw new InvalidRequestError(`GET ${url} did not return an OpenAI model list ({"data":[{"id":…}]})`);
  const models = parsed.data.data.map((entry) => {
    const found = findContextWindow(entry);
    return { id: entry.id, contextWindow: found?.contextWindow ?? null, contextWindowSource: found?.contextWindowSource ?? null };
  });
  return { models, entries: parsed.data.data };
}

/** llama.cpp `GET /props`: the context the server runs with, vision, and whether the template takes an effort. */
export function parseLlamaCppProps(text: string): { contextWindow: number | null; acceptsImages: boolean | null; takesReasoningEffort: boolean | null } {
  const props = parseJsonObject(text);
  const contextWindow = readPath(props, ['default_generation_settings', 'n_ctx']);
  const vision = readPath(props, ['modalities', 'vision']);
  const effort = readPath(props, ['chat_template_caps', 'supports_reasoning_effort']);
  return {
    contextWindow: isPositiveInteger(contextWindow) ? contextWindow : null,
    acceptsImages: typeof vision === 'boolean' ? vision : null,
    takesReasoningEffort: typeof effort === 'boolean' ? effort : null,
  };
}

export interface OllamaShowFacts {
  contextWindow: number | null;
  contextWindowSource: string | null;
  acceptsImages: boolean | null;
  takesReasoningEffort: boolean | null;
  /** `capabilities` lists `tools`: Ollama renders tools for this model (else 400 "does not support tools"). */
  supportsTools: boolean | null;
}

/**
 * Ollama `POST /api/show`: `num_ctx` in `parameters` is what the model runs with; without it only the
 * training context (`<architecture>.context_length`) is known, and Ollama may run with less
 * (OLLAMA_CONTEXT_LENGTH). `capabilities` says `vision`, `thinking` (the models that take an effort)
 * and `tools`.
 */
export function parseOllamaShow(text: string): OllamaShowFacts | null {
  const show = parseJsonObject(text);
  if (show === null) return null;
  const parameters = readPath(show, ['parameters']);
  const numCtx = typeof parameters === 'string' ? /^num_ctx\s+(\d+)\s*$/m.exec(parameters)?.[1] : undefined;
  const architecture = readPath(show, ['model_info', 'general.architecture']);
  const trained = typeof architecture === 'string' ? readPath(show, ['model_info', `${architecture}.context_length`]) : undefined;
  const capabilities = readPath(show, ['capabilities']);
  const capabilityList = Array.isArray(capabilities) ? capabilities.filter((item): item is string => typeof item === 'string') : null;
  if (numCtx === undefined && !isPositiveInteger(trained) && capabilityList === null) return null;
  const context =
    numCtx !== undefined && isPositiveInteger(Number(numCtx))
      ? { contextWindow: Number(numCtx), contextWindowSource: 'api/show parameters.num_ctx' }
      : isPositiveInteger(trained)
        ? { contextWindow: trained, contextWindowSource: `api/show model_info.${String(architecture)}.context_length` }
        : { contextWindow: null, contextWindowSource: null };
  return {
    ...context,
    acceptsImages: capabilityList === null ? null : capabilityList.includes('vision'),
    takesReasoningEffort: capabilityList === null ? null : capabilityList.includes('thinking'),
    supportsTools: capabilityList === null ? null : capabilityList.includes('tools'),
  };
}
