/**
 * Engine profiles of the mock backend: which engine, build and tool parser it imitates, and the
 * per-engine error envelopes.
 */
import { randomBytes, randomInt } from 'node:crypto';

export type EngineProfile =
  | 'vllm-hermes'
  | 'vllm-qwen3coder'
  | 'vllm-gptoss'
  | 'vllm-0.10'
  | 'sglang'
  | 'ollama'
  | 'llamacpp'
  | 'lmstudio';

export const engineProfiles: readonly EngineProfile[] = [
  'vllm-hermes',
  'vllm-qwen3coder',
  'vllm-gptoss',
  'vllm-0.10',
  'sglang',
  'ollama',
  'llamacpp',
  'lmstudio',
];

export type EngineFamily = 'vllm' | 'sglang' | 'ollama' | 'llamacpp' | 'lmstudio';

/** Which reasoning key a build writes: ≤0.11.0 `reasoning_content`, 0.11.1–0.15 both, ≥0.16 `reasoning`. */
export type ReasoningKey = 'reasoning' | 'reasoning_content' | 'both';

/** vLLM `--tool-call-parser` flavours we replay. `hermes-legacy` = ≤ ~0.18 streaming. */
export type VllmToolParser = 'hermes' | 'hermes-legacy' | 'qwen3coder' | 'openai';

/** The `function.arguments` byte forms of arguments-matrix.json. */
export type ArgumentByteForm = 'python-spaced' | 'python-ascii' | 'go-compact' | 'compact';

export interface ProfileTraits {
  family: EngineFamily;
  /** vLLM only: `2026` = upstream U (2026 builds), `0.10` = v0.10.1–0.11.0. */
  vllmBuild: '2026' | '0.10' | null;
  vllmToolParser: VllmToolParser | null;
  reasoningKey: ReasoningKey;
  /**
   * Qwen3-Coder XML parameter handling: `legacy` = cut at `</parameter>`, one-newline trim and the
   * `null` coercion (vLLM qwen3_coder, SGLang, Ollama); `trim-only` = llama.cpp's Qwen3-Coder handler,
   * whose `arguments-matrix.json` entry also lacks the final newline; null = a JSON-style parser.
   */
  xmlParameterRules: 'legacy' | 'trim-only' | null;
  nonStreamArgumentForm: ArgumentByteForm;
  streamArgumentForm: ArgumentByteForm;
  defaultModel: string;
  /** Idle keep-alive close: uvicorn and cpp-httplib use 5 s; Go's server never closes idle sockets. */
  keepAliveTimeoutMs: number;
  /** The accepted `reasoning_effort` values (null = no check at this layer). */
  reasoningEfforts: readonly string[] | null;
  contextWindow: number;
}

const vllmEfforts2026 = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;
const qwenCoder = 'Qwen/Qwen3-Coder-30B-A3B-Instruct';

const traitsByProfile: Record<EngineProfile, ProfileTraits> = {
  'vllm-hermes': {
    family: 'vllm',
    vllmBuild: '2026',
    vllmToolParser: 'hermes',
    reasoningKey: 'reasoning',
    xmlParameterRules: null,
    nonStreamArgumentForm: 'python-spaced',
    streamArgumentForm: 'python-spaced',
    defaultModel: qwenCoder,
    keepAliveTimeoutMs: 5_000,
    reasoningEfforts: vllmEfforts2026,
    contextWindow: 32_768,
  },
  'vllm-qwen3coder': {
    family: 'vllm',
    vllmBuild: '2026',
    vllmToolParser: 'qwen3coder',
    reasoningKey: 'reasoning',
    xmlParameterRules: 'legacy',
    nonStreamArgumentForm: 'python-spaced',
    streamArgumentForm: 'python-spaced',
    defaultModel: qwenCoder,
    keepAliveTimeoutMs: 5_000,
    reasoningEfforts: vllmEfforts2026,
    contextWindow: 32_768,
  },
  'vllm-gptoss': {
    family: 'vllm',
    vllmBuild: '2026',
    vllmToolParser: 'openai',
    reasoningKey: 'reasoning',
    xmlParameterRules: null,
    // Harmony re-dumps non-stream arguments ASCII-escaped but streams the model's compact raw JSON.
    nonStreamArgumentForm: 'python-ascii',
    streamArgumentForm: 'compact',
    defaultModel: 'openai/gpt-oss-20b',
    keepAliveTimeoutMs: 5_000,
    reasoningEfforts: vllmEfforts2026,
    contextWindow: 131_072,
  },
  'vllm-0.10': {
    family: 'vllm',
    vllmBuild: '0.10',
    vllmToolParser: 'hermes-legacy',
    reasoningKey: 'reasoning_content',
    xmlParameterRules: null,
    nonStreamArgumentForm: 'python-spaced',
    streamArgumentForm: 'python-spaced',
    defaultModel: qwenCoder,
    keepAliveTimeoutMs: 5_000,
    reasoningEfforts: ['low', 'medium', 'high'],
    contextWindow: 32_768,
  },
  sglang: {
    family: 'sglang',
    vllmBuild: null,
    vllmToolParser: null,
    reasoningKey: 'reasoning_content',
    xmlParameterRules: 'legacy',
    nonStreamArgumentForm: 'python-spaced',
    streamArgumentForm: 'python-spaced',
    defaultModel: qwenCoder,
    keepAliveTimeoutMs: 5_000,
    reasoningEfforts: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'],
    contextWindow: 32_768,
  },
  ollama: {
    family: 'ollama',
    vllmBuild: null,
    vllmToolParser: null,
    reasoningKey: 'reasoning',
    xmlParameterRules: 'legacy',
    nonStreamArgumentForm: 'go-compact',
    streamArgumentForm: 'go-compact',
    defaultModel: 'qwen3-coder:30b',
    keepAliveTimeoutMs: 0,
    reasoningEfforts: ['minimal', 'low', 'medium', 'high', 'xhigh', 'ultra', 'max', 'none'],
    contextWindow: 32_768,
  },
  llamacpp: {
    family: 'llamacpp',
    vllmBuild: null,
    vllmToolParser: null,
    reasoningKey: 'reasoning_content',
    xmlParameterRules: 'trim-only',
    nonStreamArgumentForm: 'compact',
    streamArgumentForm: 'compact',
    defaultModel: 'qwen3-coder-30b-a3b-instruct-q4_k_m.gguf',
    keepAliveTimeoutMs: 5_000,
    // llama-server only honours "none" and ignores every other value.
    reasoningEfforts: null,
    contextWindow: 8_192,
  },
  lmstudio: {
    family: 'lmstudio',
    vllmBuild: null,
    vllmToolParser: null,
    reasoningKey: 'reasoning_content',
    xmlParameterRules: null,
    nonStreamArgumentForm: 'compact',
    streamArgumentForm: 'compact',
    defaultModel: 'qwen/qwen3-coder-30b',
    keepAliveTimeoutMs: 5_000,
    reasoningEfforts: null,
    contextWindow: 32_768,
  },
};

export function getProfileTraits(profile: EngineProfile): ProfileTraits {
  return traitsByProfile[profile];
}

export function isEngineProfile(value: string): value is EngineProfile {
  return (engineProfiles as readonly string[]).includes(value);
}

/** Go's encoder escapes `<`, `>`, `&`, U+2028 and U+2029 in every string (Ollama). */
export function renderGoJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Compact JSON as the engine serialises a chunk or body (pydantic, Go, nlohmann, Node all compact). */
export function renderWireJson(profile: EngineProfile, value: unknown): string {
  return getProfileTraits(profile).family === 'ollama' ? renderGoJson(value) : JSON.stringify(value);
}

/** A whole non-stream body: Go's `json.Encoder` ends it with a newline (`ollama-*.json`). */
export function renderWireBody(profile: EngineProfile, value: unknown): string {
  if (typeof value === 'string') return value;
  const text = renderWireJson(profile, value);
  return getProfileTraits(profile).family === 'ollama' ? `${text}\n` : text;
}

export function createHex(length: number): string {
  return randomBytes(Math.ceil(length / 2)).toString('hex').slice(0, length);
}

export function createAlphanumeric(length: number, alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'): string {
  let output = '';
  for (let index = 0; index < length; index += 1) output += alphabet[randomInt(alphabet.length)];
  return output;
}

/** An error the engine reports before streaming (or instead of a body), in neutral form. */
export interface EngineError {
  status: number;
  message: string;
  /** vLLM/SGLang/llama.cpp `type`; derived from the status when absent. */
  type?: string;
  param?: string | null;
}

function mapVllmErrorType(status: number): string {
  if (status === 404) return 'NotFoundError';
  if (status === 501) return 'NotImplementedError';
  if (status >= 500) return 'InternalServerError';
  return 'BadRequestError';
}

function mapOllamaErrorType(status: number): string {
  if (status === 400) return 'invalid_request_error';
  if (status === 404) return 'not_found_error';
  return 'api_error';
}

function mapLlamacppErrorType(status: number): string {
  if (status === 400) return 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 404) return 'not_found_error';
  if (status === 501) return 'not_supported_error';
  if (status === 503) return 'unavailable_error';
  return 'server_error';
}

/** The profile's error envelope: how its engine wraps an error message. */
export function renderErrorEnvelope(profile: EngineProfile, error: EngineError): unknown {
  const family = getProfileTraits(profile).family;
  switch (family) {
    case 'vllm':
      return {
        error: {
          message: error.message,
          type: error.type ?? mapVllmErrorType(error.status),
          param: error.param ?? null,
          code: error.status,
        },
      };
    case 'sglang':
      return {
        object: 'error',
        message: error.message,
        type: error.type ?? mapVllmErrorType(error.status),
        param: error.param ?? null,
        code: error.status,
      };
    case 'ollama':
      return { error: { message: error.message, type: mapOllamaErrorType(error.status), param: null, code: null } };
    case 'llamacpp':
      return { error: { code: error.status, message: error.message, type: error.type ?? mapLlamacppErrorType(error.status) } };
    case 'lmstudio':
      // LM Studio's chat endpoint answers `{"error":"<string>"}`.
      return { error: error.message };
    default: {
      const unreachable: never = family;
      throw new Error(`unknown engine family ${String(unreachable)}`);
    }
  }
}

/** Named failures a turn can ask for; rendered in the profile's wording. */
export type MockFailure = 'context-length' | 'overloaded' | 'engine-dead' | 'model-not-found';

export interface FailureContext {
  model: string;
  promptTokens: number;
  maxTokens: number | null;
  contextWindow: number;
}

export interface RenderedFailure {
  status: number;
  body: unknown;
  /** vLLM's dead engine: the server stops listening after answering (connection refused next). */
  shutDownAfter: boolean;
}

/** Builds the profile's body for a named failure; null when the engine reports no error (Ollama context). */
export function renderFailure(profile: EngineProfile, failure: MockFailure, context: FailureContext): RenderedFailure | null {
  const traits = getProfileTraits(profile);
  const envelope = (error: EngineError, shutDownAfter = false): RenderedFailure => ({
    status: error.status,
    body: renderErrorEnvelope(profile, error),
    shutDownAfter,
  });
  switch (failure) {
    case 'model-not-found':
      return renderModelNotFound(profile, context.model);
    case 'engine-dead':
      if (traits.family === 'vllm') {
        return envelope(
          { status: 500, message: 'EngineCore encountered an issue. See stack trace (above) for the root cause.' },
          true,
        );
      }
      if (traits.family === 'sglang') return envelope({ status: 500, message: 'Internal server error: scheduler process died' });
      return envelope({ status: 500, message: 'the model runner has unexpectedly stopped' });
    case 'overloaded':
      if (traits.family === 'vllm') {
        // The elastic-EP middleware answers with a string `error`; vLLM has no other admission control.
        return { status: 503, body: { error: 'The model is currently scaling. Please try again later.' }, shutDownAfter: false };
      }
      if (traits.family === 'ollama') {
        return envelope({ status: 503, message: 'server busy, please try again.  maximum pending requests exceeded' });
      }
      if (traits.family === 'llamacpp') {
        // Answered by the server's loading gate, not its error formatter: another field order.
        return { status: 503, body: { error: { message: 'Loading model', type: 'unavailable_error', code: 503 } }, shutDownAfter: false };
      }
      if (traits.family === 'sglang') return envelope({ status: 503, message: 'Service Unavailable', type: 'ServiceUnavailable' });
      return envelope({ status: 503, message: 'Model is loading, please try again later.' });
    case 'context-length':
      return renderContextLengthFailure(profile, context, envelope);
    default: {
      const unreachable: never = failure;
      throw new Error(`unknown failure ${String(unreachable)}`);
    }
  }
}

function renderContextLengthFailure(
  profile: EngineProfile,
  context: FailureContext,
  envelope: (error: EngineError) => RenderedFailure,
): RenderedFailure | null {
  const traits = getProfileTraits(profile);
  const window = context.contextWindow;
  const outputTokens = context.maxTokens ?? 4096;
  // Make the numbers overflow even when the caller's prompt is small.
  const promptTokens = Math.max(context.promptTokens, window - outputTokens + 1);
  const total = promptTokens + outputTokens;
  switch (traits.family) {
    case 'vllm':
      if (traits.vllmBuild === '0.10') {
        return envelope({
          status: 400,
          message: `This model's maximum context length is ${window} tokens. However, your request has ${promptTokens} input tokens. Please reduce the length of the input messages.`,
        });
      }
      return envelope({
        status: 400,
        message: `This model's maximum context length is ${window} tokens. However, you requested ${outputTokens} output tokens and your prompt contains at least ${promptTokens} input tokens, for a total of at least ${total} tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=${promptTokens})`,
        param: 'input_tokens',
      });
    case 'sglang':
      return envelope({
        status: 400,
        message: `The input (${promptTokens} tokens) is longer than the model's context length (${window} tokens).`,
      });
    case 'llamacpp':
      return {
        status: 400,
        body: {
          error: {
            code: 400,
            message: `request (${promptTokens} tokens) exceeds the available context size (${window} tokens), try increasing it`,
            type: 'exceed_context_size_error',
            n_prompt_tokens: promptTokens,
            n_ctx: window,
          },
        },
        shutDownAfter: false,
      };
    case 'ollama':
      // Ollama silently drops the oldest messages instead: no error at all.
      return null;
    case 'lmstudio':
      return envelope({
        status: 400,
        message: `Trying to keep the first ${promptTokens} tokens when context the overflows. However, the model is loaded with context length of only ${window} tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input`,
      });
    default: {
      const unreachable: never = traits.family;
      throw new Error(`unknown engine family ${String(unreachable)}`);
    }
  }
}

/** Unknown `model`: vLLM 404 with `param:"model"`, Ollama 404 `not_found_error`. */
export function renderModelNotFound(profile: EngineProfile, model: string): RenderedFailure {
  const traits = getProfileTraits(profile);
  const body = (error: EngineError): RenderedFailure => ({
    status: error.status,
    body: renderErrorEnvelope(profile, error),
    shutDownAfter: false,
  });
  switch (traits.family) {
    case 'vllm':
      return body({ status: 404, message: `The model \`${model}\` does not exist.`, type: 'NotFoundError', param: 'model' });
    case 'ollama':
      return body({ status: 404, message: `model "${model}" not found, try pulling it first` });
    case 'sglang':
      return body({ status: 404, message: `The model \`${model}\` does not exist.`, type: 'NotFoundError' });
    case 'llamacpp':
      return body({ status: 404, message: `model '${model}' not found` });
    case 'lmstudio':
      return body({ status: 404, message: `Invalid model identifier "${model}". Please specify a valid downloaded model.` });
    default: {
      const unreachable: never = traits.family;
      throw new Error(`unknown engine family ${String(unreachable)}`);
    }
  }
}
