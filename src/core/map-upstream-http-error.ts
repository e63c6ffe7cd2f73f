import { suggestVersionedBaseUrl } from './backend-url.ts';
import { isContextOverflowMessage } from './map-upstream-error.ts';
import { createOpenAiErrorBody, type OpenAiErrorBody } from './openai-error.ts';
import { isPlainObject, parseJson } from './parse-json.ts';
import { REDACTED } from './redact-secrets.ts';

/**
 * Turns a backend's non-2xx answer (before any stream started) into what Codex can act on:
 * 400 for permanent problems (Codex prints the body and does not retry),
 * `context_length_exceeded` for overflow, 429 always with Retry-After, 503 for transient failures.
 * Never 500: Codex hides a 500's body behind "high demand" and retries it 30 times.
 */
export interface MappedUpstreamError {
  status: number;
  headers: Record<string, string>;
  body: OpenAiErrorBody;
}

export interface UpstreamErrorContext {
  backendUrl: string;
  model: string;
  retryAfter: string | null;
}

/** Default wait we advertise on a 429 without the backend's own Retry-After (Codex fails at once without one). */
export const DEFAULT_RETRY_AFTER_SECONDS = '2';

export interface UpstreamErrorDetails {
  message: string;
  type: string | null;
}

/**
 * Reads the message out of every engine's envelope: nested `{"error":{message,type}}`
 * (vLLM ≥0.10.1, Ollama, llama.cpp), flat `{"object":"error","message"}` (SGLang, old vLLM),
 * `{"error":"<string>"}` (LM Studio, vLLM elastic-EP), or plain text.
 */
export function extractUpstreamErrorDetails(bodyText: string): UpstreamErrorDetails {
  const parsed = parseJson(bodyText);
  if (parsed.success && isPlainObject(parsed.value)) {
    const value = parsed.value;
    const nested = value.error;
    if (isPlainObject(nested) && typeof nested.message === 'string') {
      return { message: nested.message, type: typeof nested.type === 'string' ? nested.type : null };
    }
    if (typeof nested === 'string') return { message: nested, type: null };
    if (typeof value.message === 'string') return { message: value.message, type: typeof value.type === 'string' ? value.type : null };
    if (typeof value.detail === 'string') return { message: value.detail, type: null };
  }
  const trimmed = bodyText.trim();
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

export function mapUpstreamHttpError(status: number, bodyText: string, context: UpstreamErrorContext): MappedUpstreamError {
  const details = extractUpstreamErrorDetails(bodyText);
  const where = `${context.backendUrl}`;
  const hint = findHint(details.message);
  const withHint = (text: string): string => (hint ? `${text} (hint: ${hint.hint})` : text);

  if (isContextOverflowMessage(details.message, details.type)) {
    return {
      status: 400,
      headers: {},
      body: createOpenAiErrorBody(`the model's context window is exceeded (backend at ${where}): ${details.message}`, {
        code: 'context_length_exceeded',
        param: 'input',
      }),
    };
  }
  if (status === 401 || status === 403) {
    return {
      status: 400,
      headers: {},
      body: createOpenAiErrorBody(
        `backend at ${where} refused the credentials (HTTP ${status}): ${details.message} — set the backend API key (CLI: --backend-api-key-env NAME; extension: "Freeform Bridge: Set Backend API Key")`,
        { code: 'backend_unauthorized' },
      ),
    };
  }
  if (status === 404 && !endsInVersionSegment(context.backendUrl)) {
    // The commonest set-up mistake: `http://host:8000` instead of `http://host:8000/v1`. Named first,
    // because the engine's own 404 text ("Not Found", "File Not Found") says nothing about it.
    return {
      status: 400,
      headers: {},
      body: createOpenAiErrorBody(
        `the backend URL ${context.backendUrl} does not end in /v1, and the backend answered 404 for its /chat/completions — use its OpenAI-compatible base URL, e.g. ${suggestVersionedBaseUrl(context.backendUrl)} (the backend said: ${details.message})`,
        { code: 'backend_url_without_v1' },
      ),
    };
  }
  if (status === 404) {
    return {
      status: 400,
      headers: {},
      body: createOpenAiErrorBody(
        `backend at ${where} answered 404 for model '${context.model}': ${details.message} — check the model name (GET /v1/models on the bridge lists the backend's models) and that the backend URL ends in /v1`,
        { code: 'model_not_found', param: 'model' },
      ),
    };
  }
  if (status === 429) {
    return {
      status: 429,
      headers: { 'retry-after': context.retryAfter ?? DEFAULT_RETRY_AFTER_SECONDS },
      body: createOpenAiErrorBody(`backend at ${where} is rate limiting (HTTP 429): ${details.message}`, {
        type: 'rate_limit_error',
        code: 'rate_limit_exceeded',
      }),
    };
  }
  if (status >= 400 && status < 500) {
    return {
      status: 400,
      headers: {},
      body: createOpenAiErrorBody(withHint(`backend rejected the request (HTTP ${status} from ${where}): ${details.message}`), {
        code: 'backend_rejected_request',
      }),
    };
  }
  // 5xx: permanent causes (tool parsing, missing --jinja, vLLM's KeyError) become 400 so Codex shows
  // them instead of retrying; everything else is transient → 503, which Codex retries and prints.
  if (hint?.permanent) {
    return {
      status: 400,
      headers: {},
      body: createOpenAiErrorBody(withHint(`backend failed on the request (HTTP ${status} from ${where}): ${details.message}`), {
        code: 'backend_rejected_request',
      }),
    };
  }
  const headers: Record<string, string> = {};
  if (context.retryAfter) headers['retry-after'] = context.retryAfter;
  return {
    status: 503,
    headers,
    body: createOpenAiErrorBody(`backend unavailable (HTTP ${status} from ${where}): ${details.message}`, {
      type: 'server_error',
      code: 'backend_unavailable',
    }),
  };
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
