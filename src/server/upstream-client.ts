import type { Agent as UndiciAgent, Dispatcher } from 'undici';
import { Agent, request } from './undici-lean.ts';
import { normaliseBackendUrl } from '../core/backend-url.ts';
import { UpstreamConnectionError } from '../core/errors.ts';

/**
 * The backend side: one undici Agent per bridge (never a global dispatcher) so tests and the
 * extension can inject their own and close it with the server.
 */
export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /**
   * Hands each piece of the body to `onBytes` as it arrives, until the body ends or `onBytes`
   * returns false. Rejects when the body breaks (socket reset, abort). Plain 'data' events, not an
   * async iterator: no promise per chunk, and stopping early creates no AbortError with its stack
   * trace.
   */
  consume(onBytes: (bytes: Buffer) => boolean): Promise<void>;
  /** Stops and restarts the flow of `consume` (backpressure from the client); TCP holds the backend back meanwhile. */
  pause(): void;
  resume(): void;
  /**
   * Reads the whole body as text, up to `maxBytes`: past it the body is cut (the socket with it) and
   * the promise rejects with a message naming `what` and the cap. Every answer the bridge holds whole
   * goes through here, so no backend can make it hold more than its cap.
   */
  text(maxBytes: number, what: string): Promise<string>;
  /**
   * The answer is complete (the stream said so): lets what is left of the body (`data: [DONE]`, the
   * chunk terminator) drain so the socket returns to the pool, instead of cutting it.
   */
  release(): void;
  /** Cuts the body off without reading the rest (errors, aborts). */
  discard(): void;
}

export interface UpstreamClient {
  readonly baseUrl: string;
  postChatCompletions(body: string | Uint8Array, signal: AbortSignal): Promise<UpstreamResponse>;
  getModels(signal: AbortSignal): Promise<UpstreamResponse>;
  /**
   * A request to the backend server's own endpoints beside its OpenAI ones (llama.cpp `/props`,
   * Ollama `/api/show`): `path` is resolved against the base URL without its trailing `/v1`.
   */
  requestServerRoot(method: 'GET' | 'POST', path: string, body: string | undefined, signal: AbortSignal): Promise<UpstreamResponse>;
  close(): Promise<void>;
}

export interface UpstreamClientOptions {
  /** OpenAI-compatible base URL ending in /v1. */
  baseUrl: string;
  /** Read at each request so a key changed in the extension applies at once; null sends no Authorization. */
  getApiKey: () => string | null;
  dispatcher?: Dispatcher;
}

export function createUpstreamAgent(): UndiciAgent {
  return new Agent({
    // vLLM closes idle keep-alive sockets after 5 s; stay below it so a pooled socket is never
    // reused just as the server closes it.
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 4_000,
    // Streams send headers at once but may stay silent through queueing and prefill; the bridge's
    // own watchdog decides when silence is a failure, so undici's timers are off.
    headersTimeout: 0,
    bodyTimeout: 0,
    connectTimeout: 10_000,
  });
}

/*
 * Caps on what the bridge holds in memory from one backend answer. A backend that never ends its
 * answer (a broken proxy, a runaway engine, a hostile server) would otherwise take the process's whole
 * memory, and in VS Code that memory is the extension host's. Each is far above anything real.
 */
const MIB = 1024 * 1024;
/** Engines' error bodies are a few hundred bytes; a proxy's error page a few kB. Only the first part is shown anyway. */
export const MAX_ERROR_BODY_BYTES = 1 * MIB;
/**
 * A whole chat completion sent as JSON to a stream request (a proxy that does not stream). It is held
 * as bytes, then as text, then parsed: three copies. 32 MB is far more than any model's output limit
 * (a 128k-token answer is about 0.5 MB) and keeps the three copies well under 300 MB.
 */
export const MAX_JSON_ANSWER_BYTES = 32 * MIB;
/** A model list (`GET /models`) or an engine's properties: kilobytes, even with hundreds of models. */
export const MAX_SERVER_INFO_BYTES = 8 * MIB;

function formatMegabytes(bytes: number): string {
  return bytes < MIB ? `${bytes} bytes` : `${Math.round((bytes / MIB) * 10) / 10} MB`;
}

/** Reads `body` to its end into one string, or cuts it (and rejects) once it passes `maxBytes`. */
function readBoundedText(body: Dispatcher.ResponseData['body'], maxBytes: number, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const stop = (): void => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
    };
    const onData = (chunk: Buffer): void => {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        stop();
        chunks.length = 0;
        // Destroying the body closes the socket: the backend stops sending, and nothing of it stays.
        body.destroy();
        reject(new Error(`the backend's ${what} is larger than ${formatMegabytes(maxBytes)} (the bridge's cap on an answer it holds whole); the bridge cut the connection`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      stop();
      resolve(Buffer.concat(chunks, bytes).toString('utf8'));
    };
    const onError = (error: Error): void => {
      stop();
      reject(error);
    };
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('error', onError);
  });
}

const RETRYABLE_SOCKET_CODES = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

function errorCode(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const withCause = error as { code?: unknown; cause?: { code?: unknown } };
    if (typeof withCause.code === 'string') return withCause.code;
    if (typeof withCause.cause?.code === 'string') return withCause.cause.code;
  }
  return error instanceof Error ? error.message : String(error);
}

/** A complete answer's remainder is a few bytes; a backend that keeps talking past its end is cut after this. */
const RELEASE_DRAIN_MS = 2_000;

function wrapResponse(response: Dispatcher.ResponseData): UpstreamResponse {
  const body = response.body;
  // Between two readers (consume has stopped, release or discard not yet called) and after them, an
  // abort still makes the body emit 'error'; with no listener that would crash the process. Whoever
  // reads hears errors through consume's rejection or text()'s.
  body.on('error', () => undefined);
  return {
    status: response.statusCode,
    headers: response.headers,
    consume(onBytes) {
      return new Promise<void>((resolve, reject) => {
        const stop = (): void => {
          body.off('data', onData);
          body.off('end', onEnd);
          body.off('error', onError);
          body.off('close', onClose);
        };
        const onData = (bytes: Buffer): void => {
          let keepReading: boolean;
          try {
            keepReading = onBytes(bytes);
          } catch (error) {
            stop();
            body.pause();
            reject(error);
            return;
          }
          if (!keepReading) {
            stop();
            body.pause();
            resolve();
          }
        };
        const onEnd = (): void => {
          stop();
          resolve();
        };
        const onError = (error: Error): void => {
          stop();
          reject(error);
        };
        // A close without 'end' or 'error' is a body cut short all the same.
        const onClose = (): void => {
          stop();
          reject(new Error('the backend closed the response before its end'));
        };
        body.on('data', onData);
        body.once('end', onEnd);
        body.once('error', onError);
        body.once('close', onClose);
      });
    },
    pause: () => {
      body.pause();
    },
    resume: () => {
      body.resume();
    },
    text: (maxBytes, what) => readBoundedText(body, maxBytes, what),
    release() {
      if (body.readableEnded || body.destroyed) return;
      const timer = setTimeout(() => body.destroy(), RELEASE_DRAIN_MS);
      timer.unref();
      body.once('close', () => clearTimeout(timer));
      body.resume();
    },
    discard() {
      body.destroy();
    },
  };
}

export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const baseUrl = normaliseBackendUrl(options.baseUrl);
  const ownsDispatcher = options.dispatcher === undefined;
  const dispatcher = options.dispatcher ?? createUpstreamAgent();

  function buildHeaders(extra: Record<string, string>): Record<string, string> {
    const headers: Record<string, string> = { ...extra };
    const apiKey = options.getApiKey();
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    return headers;
  }

  // A query string in the base URL (a proxy's `?api-version=`) goes after each request's path.
  const queryStart = baseUrl.indexOf('?');
  const basePath = queryStart === -1 ? baseUrl : baseUrl.slice(0, queryStart);
  const query = queryStart === -1 ? '' : baseUrl.slice(queryStart);
  const serverRoot = basePath.replace(/\/v1$/, '');

  async function send(
    method: 'GET' | 'POST',
    path: string,
    body: string | Uint8Array | undefined,
    signal: AbortSignal,
    root: string = basePath,
  ): Promise<UpstreamResponse> {
    const url = `${root}${path}${query}`;
    const headers = buildHeaders(body === undefined ? { accept: 'application/json' } : { 'content-type': 'application/json', accept: 'text/event-stream, application/json' });
    // A pooled socket closed by the server at the moment we reuse it fails before any response
    // byte; retrying once is safe because the backend never saw the request.
    for (let attempt = 0; ; attempt++) {
      try {
        const response = await request(url, { method, headers, body, signal, dispatcher });
        return wrapResponse(response);
      } catch (error) {
        if (signal.aborted) throw error;
        const code = errorCode(error);
        if (attempt === 0 && RETRYABLE_SOCKET_CODES.has(code)) continue;
        throw new UpstreamConnectionError(url, code, { cause: error });
      }
    }
  }

  return {
    baseUrl,
    // The request leaves as bytes, encoded here: undici and the retry above keep the body until the
    // answer ends, and bytes outside the JavaScript heap cost it nothing meanwhile (docs/PERFORMANCE.md).
    postChatCompletions: (body, signal) => send('POST', '/chat/completions', typeof body === 'string' ? Buffer.from(body) : body, signal),
    getModels: (signal) => send('GET', '/models', undefined, signal),
    requestServerRoot: (method, path, body, signal) => send(method, path, body, signal, serverRoot),
    async close() {
      if (ownsDispatcher) await dispatcher.close();
    },
  };
}
