import { suggestVersionedBaseUrl } from './backend-url.ts';
import { isPlainObject, parseJson } from './parse-json.ts';
import { REDACTED } from './redact-secrets.ts';

/*
 * What an engine says went wrong, and what kind of failure that is. The one reader of engine error
 * bodies and error frames: an HTTP error body, a streamed error frame, llama.cpp's `error:` SSE field
 * and the engine doctor's probes all come through here. It reports the kind of failure and never
 * an HTTP status: the answer Codex gets is chosen in src/server/failure-map.ts.
 */

/** The message and (when the engine names one) the error type an engine sent. */
export interface EngineError {
  message: string;
  type: string | null;
}

function typeOf(value: Record<string, unknown>): string | null {
  return typeof value.type === 'string' ? value.type : null;
}

/**
 * The error envelope inside a parsed JSON value, or null when the value is no error: nested
 * `{"error":{message,type}}` (vLLM ≥0.10.1, Ollama, llama.cpp), `{"error":"<text>"}` (LM Studio, vLLM
 * elastic-EP) and SGLang's flat `{"object":"error",message}`. A frame of a successful stream is read
 * with this alone, so a chunk that merely has a `message` field is not taken for an error.
 */
export function readEngineErrorEnvelope(value: unknown): EngineError | null {
  if (!isPlainObject(value)) return null;
  const nested = value.error;
  if (nested !== undefined && nested !== null) {
    if (typeof nested === 'string') return { message: nested, type: null };
    if (isPlainObject(nested)) return { message: typeof nested.message === 'string' ? nested.message : JSON.stringify(nested), type: typeOf(nested) };
    return { message: JSON.stringify(nested), type: null };
  }
  if (value.object === 'error') return { message: typeof value.message === 'string' ? value.message : JSON.stringify(value), type: typeOf(value) };
  return null;
}

/**
 * The error a text says that is known to be one (an error status's body, llama.cpp's `error:` SSE
 * field): any envelope, else a flat `message` (old vLLM) or `detail` (FastAPI), a JSON string, or the
 * text itself, cut to a readable length.
 */
export function readEngineErrorText(text: string): EngineError {
  const parsed = parseJson(text);
  if (parsed.success) {
    const envelope = readEngineErrorEnvelope(parsed.value);
    if (envelope !== null) return envelope;
    const value = parsed.value;
    if (typeof value === 'string') return { message: value, type: null };
    if (isPlainObject(value) && typeof value.message === 'string') return { message: value.message, type: typeOf(value) };
    if (isPlainObject(value) && typeof value.detail === 'string') return { message: value.detail, type: null };
  }
  const trimmed = text.trim();
  return { message: trimmed.length > 0 ? truncateForMessage(trimmed) : '(empty body)', type: null };
}

function truncateForMessage(text: string): string {
  const limit = 2000;
  if (text.length <= limit) return text;
  // The body arrives redacted: a cut through a marker would leave "[reda", which says nothing.
  const marker = text.lastIndexOf(REDACTED, limit - 1);
  const end = marker !== -1 && marker + REDACTED.length > limit ? marker + REDACTED.length : limit;
  return end >= text.length ? text : `${text.slice(0, end)}… (${text.length - end} more characters)`;
}

/**
 * Engine wordings for "the prompt does not fit the context window". Codex handles
 * `context_length_exceeded` specially (no retry, a dedicated message), so recognising every engine's
 * text is what turns a backend overflow into something the user can act on. Case-insensitive because
 * the wordings have changed casing between releases before; the phrases are specific enough.
 */
const CONTEXT_OVERFLOW_PATTERNS: readonly RegExp[] = [
  // vLLM: every wording since v0.10 contains one of these.
  /maximum context length|context length is only/i,
  // SGLang: input-only and input+completion variants.
  /longer than the model's context length|exceeds the model's maximum context length/i,
  // llama.cpp: current builds and the 2025 `error:` SSE field.
  /exceeds the available context size/i,
];

/** llama.cpp names the condition in `type`; its message wording has varied between builds. */
const CONTEXT_OVERFLOW_TYPES: ReadonlySet<string> = new Set(['exceed_context_size_error']);

export function isContextOverflow(error: EngineError): boolean {
  if (error.type !== null && CONTEXT_OVERFLOW_TYPES.has(error.type)) return true;
  return CONTEXT_OVERFLOW_PATTERNS.some((pattern) => pattern.test(error.message));
}

/**
 * What a backend's non-2xx answer (before any stream started) means for Codex, with the message the
 * user reads. `rejected` is permanent (Codex must print it and not retry), `unavailable` transient.
 */
export type EngineRefusal =
  | { kind: 'context_overflow'; message: string }
  | { kind: 'unauthorized'; message: string }
  | { kind: 'url_without_v1'; message: string }
  | { kind: 'model_not_found'; message: string }
  | { kind: 'rate_limited'; message: string; retryAfter: string | null }
  | { kind: 'rejected'; message: string }
  | { kind: 'unavailable'; message: string; retryAfter: string | null };

export interface EngineRefusalContext {
  backendUrl: string;
  model: string;
  /** The backend's own Retry-After header, if it sent one. */
  retryAfter: string | null;
}

/** Known permanent causes with what the user should change; matched on engine texts. */
const HINTS: ReadonlyArray<{ pattern: RegExp; hint: string; permanent: boolean }> = [
  {
    pattern: /tool choice requires --enable-auto-tool-choice|requires --tool-call-parser/,
    hint: 'start vLLM with --enable-auto-tool-choice and a --tool-call-parser matching the model (e.g. qwen3_coder, hermes)',
    permanent: true,
  },
  { pattern: /requires --jinja flag/, hint: 'start llama-server with --jinja (tools need the chat template)', permanent: true },
  {
    pattern: /Failed to parse tools|'type' of tool must be 'function'|Unsupported tool type/,
    hint: 'the backend rejected a tool definition; check the strategy (function_bridge lowers custom tools to functions)',
    permanent: true,
  },
  { pattern: /^'function'$/, hint: 'vLLM failed on a tool without a `function` key; use the function_bridge strategy', permanent: true },
  { pattern: /does not support tools/, hint: 'pick a model whose template supports tool calling', permanent: true },
  { pattern: /does not support thinking|reasoning_effort|Harmony does not support/, hint: 'set the reasoning-effort mode to clamp or drop for this backend', permanent: true },
];

function findHint(message: string): { hint: string; permanent: boolean } | null {
  for (const entry of HINTS) if (entry.pattern.test(message)) return entry;
  return null;
}

/** Reads a backend's error answer: `status` is what the engine answered, `bodyText` its body (redacted). */
export function classifyEngineRefusal(status: number, bodyText: string, context: EngineRefusalContext): EngineRefusal {
  const error = readEngineErrorText(bodyText);
  const where = context.backendUrl;
  const hint = findHint(error.message);
  const withHint = (text: string): string => (hint ? `${text} (hint: ${hint.hint})` : text);

  if (isContextOverflow(error)) return { kind: 'context_overflow', message: `the model's context window is exceeded (backend at ${where}): ${error.message}` };
  if (status === 401 || status === 403) {
    return {
      kind: 'unauthorized',
      message: `backend at ${where} refused the credentials (HTTP ${status}): ${error.message} — set the backend API key (CLI: --backend-api-key-env NAME; extension: "Freeform Bridge: Set Backend API Key")`,
    };
  }
  if (status === 404 && !endsInVersionSegment(context.backendUrl)) {
    // The commonest set-up mistake: `http://host:8000` instead of `http://host:8000/v1`. Named first,
    // because the engine's own 404 text ("Not Found", "File Not Found") says nothing about it.
    return {
      kind: 'url_without_v1',
      message: `the backend URL ${context.backendUrl} does not end in /v1, and the backend answered 404 for its /chat/completions — use its OpenAI-compatible base URL, e.g. ${suggestVersionedBaseUrl(context.backendUrl)} (the backend said: ${error.message})`,
    };
  }
  if (status === 404) {
    return {
      kind: 'model_not_found',
      message: `backend at ${where} answered 404 for model '${context.model}': ${error.message} — check the model name (GET /v1/models on the bridge lists the backend's models) and that the backend URL ends in /v1`,
    };
  }
  if (status === 429) return { kind: 'rate_limited', message: `backend at ${where} is rate limiting (HTTP 429): ${error.message}`, retryAfter: context.retryAfter };
  if (status >= 400 && status < 500) return { kind: 'rejected', message: withHint(`backend rejected the request (HTTP ${status} from ${where}): ${error.message}`) };
  // 5xx: permanent causes (tool parsing, missing --jinja, vLLM's KeyError) are rejections, so Codex
  // shows them instead of retrying; everything else may pass.
  if (hint?.permanent) return { kind: 'rejected', message: withHint(`backend failed on the request (HTTP ${status} from ${where}): ${error.message}`) };
  return { kind: 'unavailable', message: `backend unavailable (HTTP ${status} from ${where}): ${error.message}`, retryAfter: context.retryAfter };
}

/** Whether the base URL's path ends in a version segment such as `/v1` (or `/api/v1`, `/openai/v1`). */
export function endsInVersionSegment(url: string): boolean {
  let pathname: string;
  try {
    pathname = new URL(url).pathname;
  } catch {
    return true;
  }
  return /\/v\d+(?:beta\d*)?\/?$/.test(pathname);
}
