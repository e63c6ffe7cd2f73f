/**
 * The mock backend: a scriptable fake OpenAI-compatible Chat Completions server whose profiles
 * imitate the wire of vLLM (several eras and tool parsers), SGLang, llama.cpp's llama-server, Ollama
 * and LM Studio: their answers, error envelopes, request validation and quirks. The tests, the demo
 * (`npm run demo`) and the bench (`npm run bench`) run against it; `cli.ts` starts it on a port.
 * Built on `node:http` only and importing nothing of the bridge (lint holds it to that), so it cannot
 * agree with the bridge by sharing its code.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { randomInt } from 'node:crypto';
import { checkChatTransportForProfile, validateChatRequestForProfile, type ProfileRejection } from './vllm-chat-validator.ts';
import {
  createHex,
  getProfileTraits,
  renderErrorEnvelope,
  renderFailure,
  renderWireBody,
  type EngineProfile,
  type ReasoningKey,
  type RenderedFailure,
} from './profiles.ts';
import { createCompletionId, describeToolChoice, findVllmEra, prepareTurn, type ResponseContext, type VllmEra } from './prepare-turn.ts';
import { renderChatBody } from './render-body.ts';
import { renderChatStream, renderMidStreamError } from './render-stream.ts';
import { isRecord } from './python-text.ts';
import { defaultMockTurn, type MockToolCall, type MockTurn } from './script.ts';

export type { EngineProfile } from './profiles.ts';
export type { MockTurn, MockToolCall } from './script.ts';

export interface RecordedRequest {
  /** 1-based, in arrival order. */
  id: number;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body; undefined when absent or not JSON. */
  body: unknown;
  rawBody: string;
  /** The client went away before the response was complete. */
  aborted: boolean;
  validationError: { status: number; message: string } | null;
  receivedAt: number;
}

export interface MockBackend {
  /** Base URL ending in `/v1`. */
  url: string;
  profile: EngineProfile;
  /** Every request, chat or not, in arrival order. */
  requests: RecordedRequest[];
  /** Queue turns; each chat request that passes validation consumes one. */
  enqueue(...turns: MockTurn[]): void;
  /** Answers chat requests once the queue is empty (before the default "mock answer" turn). */
  setResponder(responder: (request: RecordedRequest) => MockTurn | Promise<MockTurn>): void;
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface MockBackendOptions {
  profile: EngineProfile;
  port?: number;
  host?: string;
  /** Served model names. Without it every model name is accepted and `/v1/models` lists the profile default. */
  models?: string[];
  /** Idle keep-alive close (vLLM/uvicorn 5 s; Ollama never). */
  keepAliveTimeoutMs?: number;
  /** Engine request validation (default true). */
  validate?: boolean;
  /** vLLM: started with `--enable-auto-tool-choice --tool-call-parser` (default true). */
  toolParser?: boolean;
  /** Override the profile's reasoning key, e.g. `both` for vLLM 0.11.1–0.15. */
  reasoningKey?: ReasoningKey;
  /** vLLM: a Mistral-tokenizer model (9-alnum call ids, `chat_template_kwargs` refused). */
  mistralTokenizer?: boolean;
  /** Ollama capabilities of the served model (default true). */
  supportsTools?: boolean;
  supportsThinking?: boolean;
  /** When set, prompt (≈ body bytes / 4) plus max tokens over this window fails in the profile's wording. */
  contextWindow?: number;
  /** false: only the OpenAI endpoints answer, as behind a proxy that forwards `/v1` alone (default true). */
  engineEndpoints?: boolean;
}

interface ChatBody extends Record<string, unknown> {
  stream?: unknown;
}

function wait(milliseconds: number | undefined, signal: AbortSignal): Promise<void> {
  if (milliseconds === undefined || milliseconds <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function readRequestBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    // A client that disconnects mid-upload still gets recorded with what arrived.
    request.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('aborted', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/**
 * Closes a connection that stays idle for `idleMs` after a response (uvicorn's
 * `timeout_keep_alive`), without Node's `Keep-Alive: timeout=N` header: the engines send no
 * such hint, and clients such as undici shorten their reuse window when they see one, which would hide
 * the reuse race this exists to provoke. 0 = never close (Go's server).
 */
function installIdleClose(server: Server, idleMs: number): void {
  server.keepAliveTimeout = 0;
  if (idleMs <= 0) return;
  const timers = new Map<Socket, NodeJS.Timeout>();
  const disarm = (socket: Socket): void => {
    clearTimeout(timers.get(socket));
    timers.delete(socket);
  };
  const arm = (socket: Socket): void => {
    disarm(socket);
    const timer = setTimeout(() => {
      timers.delete(socket);
      socket.end();
    }, idleMs);
    timer.unref();
    timers.set(socket, timer);
  };
  server.on('connection', (socket: Socket) => {
    arm(socket);
    socket.once('close', () => disarm(socket));
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    disarm(request.socket);
    response.once('finish', () => {
      if (!request.socket.destroyed) arm(request.socket);
    });
  });
}

function createSystemFingerprint(profile: EngineProfile, vllmEra: VllmEra | null): string | null {
  const traits = getProfileTraits(profile);
  // vLLM populates system_fingerprint only since Apr 2026.
  if (traits.family === 'vllm') return vllmEra === '2026' ? `vllm-0.20.0-${createHex(8)}` : null;
  if (traits.family === 'llamacpp') return `b${randomInt(6000, 7000)}-${createHex(8)}`;
  return null;
}

function readMaxTokens(profile: EngineProfile, body: ChatBody): number | null {
  const family = getProfileTraits(profile).family;
  // Ollama ignores max_completion_tokens; vLLM lets it win over max_tokens.
  const value = family === 'ollama' ? body.max_tokens : (body.max_completion_tokens ?? body.max_tokens);
  return typeof value === 'number' ? value : null;
}

export async function startMockBackend(options: MockBackendOptions): Promise<MockBackend> {
  const profile = options.profile;
  const traits = getProfileTraits(profile);
  const host = options.host ?? '127.0.0.1';
  const servedModels = options.models ?? [traits.defaultModel];
  const reasoningKey = options.reasoningKey ?? traits.reasoningKey;
  const vllmEra = findVllmEra(traits, reasoningKey);
  const systemFingerprint = createSystemFingerprint(profile, vllmEra);
  const contextWindow = options.contextWindow ?? traits.contextWindow;
  const requests: RecordedRequest[] = [];
  const queue: MockTurn[] = [];
  const inFlight = new Set<AbortController>();
  const waiters = new Set<() => void>();
  let responder: ((request: RecordedRequest) => MockTurn | Promise<MockTurn>) | null = null;
  let nextRequestId = 1;
  let stopped = false;
  const loadedModels = new Set<string>();

  const server = createServer((request, response) => {
    handleRequest(request, response).catch(() => {
      // A bug in the mock must not crash the test process; cut the exchange so the client sees it.
      if (!response.headersSent) {
        response.writeHead(500, { 'content-type': 'text/plain' });
        response.end('mock backend failure');
      } else {
        response.destroy();
      }
    });
  });
  installIdleClose(server, options.keepAliveTimeoutMs ?? traits.keepAliveTimeoutMs);

  const shutDownListener = (): void => {
    // A dead vLLM engine takes the server down: next connects are refused.
    stopped = true;
    server.close();
    server.closeIdleConnections();
  };

  const sendJson = (response: ServerResponse, status: number, body: unknown, extraHeaders: Record<string, string> = {}): void => {
    const text = renderWireBody(profile, body);
    const contentType = traits.family === 'ollama' || traits.family === 'llamacpp' ? 'application/json; charset=utf-8' : 'application/json';
    response.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text), ...extraHeaders });
    response.end(text);
  };

  const sendRejection = (response: ServerResponse, recorded: RecordedRequest, rejection: ProfileRejection): void => {
    recorded.validationError = { status: rejection.status, message: rejection.message };
    sendJson(response, rejection.status, rejection.body);
  };

  const sendFailure = (response: ServerResponse, failure: RenderedFailure, headers: Record<string, string> = {}): void => {
    sendJson(response, failure.status, failure.body, headers);
    if (failure.shutDownAfter) response.on('finish', shutDownListener);
  };

  async function handleRequest(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (stopped) {
      response.destroy();
      return;
    }
    const rawBody = await readRequestBody(request);
    const url = new URL(request.url ?? '/', 'http://mock.invalid');
    const recorded: RecordedRequest = {
      id: nextRequestId,
      method: request.method ?? 'GET',
      path: url.pathname,
      headers: { ...request.headers },
      body: undefined,
      rawBody,
      aborted: false,
      validationError: null,
      receivedAt: Date.now(),
    };
    nextRequestId += 1;
    requests.push(recorded);
    for (const waiter of [...waiters]) waiter();

    const controller = new AbortController();
    inFlight.add(controller);
    let cutByServer = false;
    response.on('close', () => {
      inFlight.delete(controller);
      if (!response.writableFinished && !cutByServer) recorded.aborted = true;
      controller.abort();
    });

    if (recorded.method === 'GET' && (url.pathname === '/v1/models' || url.pathname === '/models')) {
      sendJson(response, 200, renderModelList(profile, servedModels, contextWindow));
      return;
    }
    // The engines' own endpoints beside the OpenAI ones, where they say more about the model.
    if (recorded.method === 'GET' && url.pathname === '/props' && traits.family === 'llamacpp' && options.engineEndpoints !== false) {
      sendJson(response, 200, renderLlamaCppProps(contextWindow));
      return;
    }
    if (recorded.method === 'POST' && url.pathname === '/api/show' && traits.family === 'ollama' && options.engineEndpoints !== false) {
      const showRequest = safeParseJson(rawBody);
      const requested = isRecord(showRequest) ? showRequest.model : undefined;
      if (typeof requested !== 'string' || !servedModels.includes(requested)) {
        sendJson(response, 404, { error: `model '${String(requested)}' not found` });
        return;
      }
      sendJson(response, 200, renderOllamaShow(contextWindow, options.supportsThinking !== false, options.supportsTools !== false));
      return;
    }
    const engineAnswer = options.engineEndpoints === false ? null : renderEngineEndpoint(profile, recorded.method, url.pathname, { contextWindow, servedModels, loadedModels, toolParser: options.toolParser !== false });
    if (engineAnswer !== null) {
      sendJson(response, 200, engineAnswer);
      return;
    }
    if (recorded.method === 'GET' && url.pathname === '/health') {
      sendJson(response, 200, traits.family === 'llamacpp' ? { status: 'ok' } : {});
      return;
    }
    if (recorded.method !== 'POST' || url.pathname !== '/v1/chat/completions') {
      sendJson(response, 404, renderErrorEnvelope(profile, { status: 404, message: 'Not Found', type: 'NotFoundError' }));
      return;
    }

    const transport = checkChatTransportForProfile(profile, request.headers['content-type'], rawBody);
    recorded.body = transport.body;
    if (transport.rejection !== null) {
      sendRejection(response, recorded, transport.rejection);
      return;
    }
    const body: ChatBody = isRecord(transport.body) ? transport.body : {};
    if (options.validate !== false) {
      const rejection = validateChatRequestForProfile(profile, transport.body, {
        toolParser: options.toolParser,
        models: options.models,
        mistralTokenizer: options.mistralTokenizer,
        supportsTools: options.supportsTools,
        supportsThinking: options.supportsThinking,
      });
      if (rejection !== null) {
        sendRejection(response, recorded, rejection);
        return;
      }
    }

    const promptTokensEstimate = Math.max(1, Math.ceil(Buffer.byteLength(rawBody) / 4));
    const maxTokens = readMaxTokens(profile, body);
    const requestedModel = typeof body.model === 'string' && body.model !== '' ? body.model : undefined;
    const model = requestedModel ?? servedModels[0] ?? traits.defaultModel;
    const failureContext = { model, promptTokens: promptTokensEstimate, maxTokens, contextWindow };

    if (options.contextWindow !== undefined && promptTokensEstimate + (maxTokens ?? 0) > options.contextWindow) {
      const failure = renderFailure(profile, 'context-length', failureContext);
      if (failure !== null) {
        recorded.validationError = { status: failure.status, message: describeFailureMessage(failure.body) };
        sendFailure(response, failure);
        return;
      }
    }

    // Ollama loads a model at its first request; /api/ps lists it from then on.
    loadedModels.add(model);
    const turn = queue.shift() ?? (responder !== null ? await responder(recorded) : defaultMockTurn);
    await wait(turn.delayBeforeHeadersMs, controller.signal);
    if (controller.signal.aborted) return;

    const headers = turn.headers ?? {};
    let promptTokens = promptTokensEstimate;
    if (turn.failure !== undefined) {
      // A scripted prompt size (usage.prompt_tokens) makes the error text predictable.
      const failure = renderFailure(profile, turn.failure, { ...failureContext, promptTokens: turn.usage?.prompt_tokens ?? promptTokensEstimate });
      if (failure !== null) {
        await wait(turn.delayBeforeFirstByteMs, controller.signal);
        if (!controller.signal.aborted) sendFailure(response, failure, headers);
        return;
      }
      // Ollama's answer to an oversized prompt: silently drop history and report fewer prompt tokens.
      promptTokens = Math.max(1, Math.min(Math.floor(promptTokensEstimate / 4), contextWindow));
    }
    if (turn.status !== undefined || (turn.errorBody !== undefined && turn.midStreamError === undefined)) {
      const status = turn.status ?? 500;
      const errorBody =
        turn.errorBody ?? renderErrorEnvelope(profile, { status, message: `mock failure (HTTP ${status})` });
      await wait(turn.delayBeforeFirstByteMs, controller.signal);
      if (!controller.signal.aborted) sendJson(response, status, errorBody, headers);
      return;
    }

    const context: ResponseContext = {
      profile,
      traits,
      reasoningKey,
      vllmEra,
      model,
      created: Math.floor(Date.now() / 1000),
      completionId: createCompletionId(profile),
      systemFingerprint,
      includeUsage: body.stream === true && isRecord(body.stream_options) && body.stream_options.include_usage === true,
      // Ollama ignores tool_choice; llama.cpp turns a named choice into "auto".
      toolChoiceMode:
        traits.family === 'ollama' || (traits.family === 'llamacpp' && isRecord(body.tool_choice))
          ? 'auto'
          : describeToolChoice(body.tool_choice ?? (Array.isArray(body.tools) && body.tools.length > 0 ? 'auto' : 'none')),
      parallelToolCalls: traits.family === 'ollama' || body.parallel_tool_calls !== false,
      mistralTokenizer: options.mistralTokenizer === true,
      promptTokensEstimate: traits.family === 'ollama' ? Math.min(promptTokens, contextWindow) : promptTokens,
    };
    // SGLang started without --tool-call-parser renders the tools but parses no call: "No tool parser
    // configured: no error", the model's call text comes back as content (sgl-project/sglang,
    // python/sglang/srt/entrypoints/openai/serving_chat.py parses calls only with a tool_call_parser).
    const unparsed = traits.family === 'sglang' && options.toolParser === false && turn.toolCalls !== undefined;
    const prepared = prepareTurn(context, unparsed ? { ...turn, toolCalls: undefined, text: renderUnparsedToolCalls(turn.toolCalls ?? []), finishReason: 'stop' } : turn);

    if (body.stream !== true) {
      // Non-stream: nothing at all until the whole body is ready (exercises headersTimeout).
      await wait(turn.delayBeforeFirstByteMs, controller.signal);
      if (controller.signal.aborted) return;
      sendJson(response, 200, renderChatBody(context, prepared), headers);
      return;
    }

    // llama-server names no charset on its event stream.
    const streamType = traits.family === 'llamacpp' ? 'text/event-stream' : 'text/event-stream; charset=utf-8';
    response.writeHead(200, { 'content-type': streamType, ...headers });
    response.flushHeaders();
    // No engine writes anything while it queues or prefills: a silent gap, no comments.
    await wait(turn.delayBeforeFirstByteMs, controller.signal);
    const stream = renderChatStream(context, prepared, {
      argumentsInFinishChunk: turn.argumentsInFinishChunk,
      packParallelCalls: turn.packParallelCalls,
    });
    const tail = turn.midStreamError === undefined
      ? { frames: stream.endFrames, cutSocket: false }
      : renderMidStreamError(turn.midStreamError, context, turn.errorBody, stream.endFrames[0] ?? '');
    const frames = [...stream.bodyFrames, ...tail.frames];
    for (const [index, frame] of frames.entries()) {
      if (controller.signal.aborted) return;
      if (index > 0) await wait(turn.delayBetweenChunksMs, controller.signal);
      if (controller.signal.aborted) return;
      const flushed = response.write(frame);
      if (!flushed) await new Promise<void>((resolve) => {
        response.once('drain', resolve);
        controller.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    if (controller.signal.aborted) return;
    if (tail.cutSocket) {
      cutByServer = true;
      // Let the partial frame leave before the reset, so the client sees a cut mid-event.
      await new Promise<void>((resolve) => setTimeout(resolve, 20));
      response.socket?.destroy();
      return;
    }
    response.end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${urlHost}:${address.port}/v1`,
    profile,
    requests,
    enqueue(...turns: MockTurn[]): void {
      queue.push(...turns);
    },
    setResponder(nextResponder): void {
      responder = nextResponder;
    },
    waitForRequests(count: number, timeoutMs = 5_000): Promise<void> {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`mock backend: expected ${count} request(s) within ${timeoutMs} ms, got ${requests.length}`));
        }, timeoutMs);
        const check = (): void => {
          if (requests.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
    async close(): Promise<void> {
      stopped = true;
      for (const controller of inFlight) controller.abort();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function describeFailureMessage(body: unknown): string {
  if (!isRecord(body)) return '';
  if (typeof body.error === 'string') return body.error;
  if (isRecord(body.error) && typeof body.error.message === 'string') return body.error.message;
  return typeof body.message === 'string' ? body.message : '';
}

function safeParseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** llama.cpp `GET /props`, trimmed to the fields of the recorded answer a client reads (fixtures llama-server/wire/hermes/GET_props.body). */
function renderLlamaCppProps(contextWindow: number): unknown {
  return {
    default_generation_settings: { params: { temperature: 0.800000011920929, n_predict: -1, stream: false, chat_format: 'Content-only' }, n_ctx: contextWindow },
    total_slots: 4,
    model_alias: 'models/tiny-hermes.gguf',
    model_path: 'models/tiny-hermes.gguf',
    modalities: { vision: false, video: false, audio: false },
    chat_template: "{%- if tools %}{{- '<|im_start|>system\\n# Tools\\n<tools>' }}{%- endif %}… <tool_call>\\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\\n</tool_call>",
    chat_template_caps: { supports_object_arguments: true, supports_parallel_tool_calls: true, supports_preserve_reasoning: false, supports_reasoning_effort: false, supports_string_content: true, supports_system_role: true, supports_tool_calls: true, supports_tools: true, supports_typed_content: false },
    build_info: 'b1-de3ff81',
  };
}

/** Ollama `POST /api/show` for a served model: the training context in `model_info`, `num_ctx` in `parameters`. */
function renderOllamaShow(contextWindow: number, thinking: boolean, tools: boolean): unknown {
  return {
    modelfile: '# Modelfile generated by "ollama show"',
    parameters: `num_ctx                        ${contextWindow}\nstop                           "<|im_end|>"`,
    template: '{{ .Prompt }}',
    details: { parent_model: '', format: 'gguf', family: 'qwen3', families: ['qwen3'], parameter_size: '8.2B', quantization_level: 'Q4_K_M' },
    model_info: { 'general.architecture': 'qwen3', 'general.parameter_count': 8190735360, 'qwen3.context_length': 40960 },
    capabilities: ['completion', ...(tools ? ['tools'] : []), ...(thinking ? ['thinking'] : [])],
    modified_at: '2026-11-30T10:00:00.000000000Z',
  };
}

/** `GET /v1/models` in each engine's shape. */
function renderModelList(profile: EngineProfile, models: readonly string[], contextWindow: number): unknown {
  const traits = getProfileTraits(profile);
  const created = Math.floor(Date.now() / 1000);
  switch (traits.family) {
    case 'vllm':
      return {
        object: 'list',
        data: models.map((id) => ({
          id,
          object: 'model',
          created,
          owned_by: 'vllm',
          root: id,
          parent: null,
          max_model_len: contextWindow,
          permission: [
            {
              id: `modelperm-${createHex(32)}`,
              object: 'model_permission',
              created,
              allow_create_engine: false,
              allow_sampling: true,
              allow_logprobs: true,
              allow_search_indices: false,
              allow_view: true,
              allow_fine_tuning: false,
              organization: '*',
              group: null,
              is_blocking: false,
            },
          ],
        })),
      };
    case 'sglang':
      return { object: 'list', data: models.map((id) => ({ id, object: 'model', created, owned_by: 'sglang', root: id, max_model_len: contextWindow })) };
    case 'ollama':
      return { object: 'list', data: models.map((id) => ({ id, object: 'model', created, owned_by: 'library' })) };
    case 'llamacpp':
      return {
        models: models.map((id) => ({ name: id, model: id, modified_at: '', size: '', digest: '', type: 'model', description: '', tags: [''], capabilities: ['completion'], parameters: '', details: { parent_model: '', format: 'gguf', family: '', families: [''], parameter_size: '', quantization_level: '' } })),
        object: 'list',
        data: models.map((id) => ({ id, object: 'model', created, owned_by: 'llamacpp', meta: { vocab_type: 2, n_vocab: 151936, n_ctx: contextWindow, n_ctx_train: 262144, n_embd: 2048, n_params: 30532122624, size: 18556686336 } })),
      };
    case 'lmstudio':
      return { data: models.map((id) => ({ id, object: 'model', owned_by: 'organization_owner' })), object: 'list' };
    default: {
      const unreachable: never = traits.family;
      throw new Error(`unknown engine family ${String(unreachable)}`);
    }
  }
}

interface EngineEndpointContext {
  contextWindow: number;
  servedModels: readonly string[];
  loadedModels: ReadonlySet<string>;
  toolParser: boolean;
}

/**
 * The endpoints an engine has beside its OpenAI ones, where it says its version, its server settings
 * and what a model runs with; null for a path this profile's engine does not have (a 404 follows).
 * Shapes as the engines write them:
 * - vLLM `GET /version` → `{"version": VLLM_VERSION}` (vllm-project/vllm, vllm/entrypoints/openai/api_server.py, `show_version`).
 * - SGLang `GET /server_info` (and the deprecated `/get_server_info`): the server arguments merged with
 *   the scheduler's info and `version` (sgl-project/sglang, python/sglang/srt/entrypoints/http_server.py, `server_info`).
 * - Ollama `GET /api/version` → `{"version":"0.12.6"}` (docs.ollama.com/api-reference/get-version);
 *   `GET /api/ps` lists loaded models with `context_length` (ollama/ollama#11331).
 * - LM Studio `GET /api/v1/models` (0.4+): `models[]` with `key`, `loaded_instances[].config.context_length`,
 *   `max_context_length`, `capabilities` (lmstudio-ai/lmstudio-bug-tracker#1659); `GET /api/v0/models`
 *   (0.3.6+): `data[]` with `type`, `state`, `max_context_length` (lmstudio-ai/docs 1_developer/2_rest/endpoints.mdx).
 */
function renderEngineEndpoint(profile: EngineProfile, method: string, path: string, context: EngineEndpointContext): unknown {
  const traits = getProfileTraits(profile);
  if (method !== 'GET') return null;
  switch (traits.family) {
    case 'vllm':
      return path === '/version' ? { version: traits.vllmBuild === '0.10' ? '0.10.1.1' : '0.20.0' } : null;
    case 'sglang':
      if (path !== '/server_info' && path !== '/get_server_info') return null;
      return {
        model_path: context.servedModels[0],
        tokenizer_path: context.servedModels[0],
        served_model_name: context.servedModels[0],
        context_length: null,
        tool_call_parser: context.toolParser ? 'qwen3_coder' : null,
        reasoning_parser: null,
        port: 30000,
        max_total_num_tokens: context.contextWindow * 4,
        max_req_input_len: context.contextWindow - 5,
        internal_states: [{ last_gen_throughput: 0 }],
        version: '0.5.4',
      };
    case 'ollama':
      if (path === '/api/version') return { version: '0.12.6' };
      if (path === '/api/ps') {
        return { models: [...context.loadedModels].map((name) => ({ name, model: name, size: 6654289920, digest: 'a'.repeat(64), expires_at: '2026-12-04T22:00:00Z', size_vram: 6654289920, context_length: context.contextWindow })) };
      }
      return null;
    case 'lmstudio':
      if (path === '/api/v1/models') {
        return {
          models: context.servedModels.map((key) => ({
            type: 'llm',
            publisher: 'qwen',
            key,
            display_name: key,
            architecture: 'qwen3moe',
            loaded_instances: [{ id: key, config: { context_length: context.contextWindow, eval_batch_size: 512, flash_attention: true } }],
            max_context_length: 262144,
            format: 'gguf',
            capabilities: { vision: false, trained_for_tool_use: true },
          })),
        };
      }
      if (path === '/api/v0/models') {
        return { object: 'list', data: context.servedModels.map((id) => ({ id, object: 'model', type: 'llm', publisher: 'qwen', arch: 'qwen3moe', compatibility_type: 'gguf', quantization: 'Q4_K_M', state: 'loaded', max_context_length: 262144 })) };
      }
      return null;
    case 'llamacpp':
      return null;
    default: {
      const unreachable: never = traits.family;
      throw new Error(`unknown engine family ${String(unreachable)}`);
    }
  }
}

/** The Qwen3-Coder XML a model writes for its calls, as an engine without a tool parser hands it back. */
function renderUnparsedToolCalls(calls: readonly MockToolCall[]): string {
  return calls
    .map((call) => {
      const parameters = call.input !== undefined ? { input: call.input } : typeof call.arguments === 'object' ? call.arguments : {};
      const body = Object.entries(parameters).map(([name, value]) => `<parameter=${name}>\n${typeof value === 'string' ? value : JSON.stringify(value)}\n</parameter>\n`).join('');
      return `<tool_call>\n<function=${call.name}>\n${body}</function>\n</tool_call>`;
    })
    .join('\n');
}
