/**
 * A tiny Chat Completions backend for the real-VS-Code tier: it records what the bridge sends and
 * answers /v1/models and /v1/chat/completions (streamed or not) with one short text. The full mock
 * backend (mock-backend/) imitates engines; here only the extension's wiring is under test.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeBackend {
  /** Base URL ending in /v1, as the extension's backendUrl setting wants it. */
  url: string;
  requests: RecordedRequest[];
  /** When set, chat completions are held open (never answered) until the bridge aborts them. */
  holdChatCompletions: boolean;
  /** How many held chat completions the bridge has abandoned (their connection closed). */
  abortedRequests: number;
  /** A streamed answer is sent this many times, one content delta each (default 1). */
  streamedDeltas: number;
  /** Milliseconds between two streamed deltas (0: all at once), so a stream lasts as a real one does. */
  deltaIntervalMs: number;
  /** When false, request bodies are not kept (a load test's megabytes), only method, path and headers. */
  recordBodies: boolean;
  close(): Promise<void>;
}

export const FAKE_MODEL = 'fake-coder';

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolveBody(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

export async function startFakeBackend(answer = 'pong'): Promise<FakeBackend> {
  const backend: Omit<FakeBackend, 'url' | 'close'> = { requests: [], holdChatCompletions: false, abortedRequests: 0, streamedDeltas: 1, deltaIntervalMs: 0, recordBodies: true };
  const server = createServer((request, response) => {
    void (async () => {
      const body = await readBody(request);
      const path = (request.url ?? '/').split('?')[0] ?? '/';
      backend.requests.push({ method: request.method ?? 'GET', path, headers: request.headers, body: backend.recordBodies ? body : '' });
      if (request.method === 'GET' && path === '/v1/models') {
        sendJson(response, 200, { object: 'list', data: [{ id: FAKE_MODEL, object: 'model', owned_by: 'fake', max_model_len: 32768 }] });
        return;
      }
      if (request.method === 'POST' && path === '/v1/chat/completions') {
        if (backend.holdChatCompletions) {
          response.on('close', () => {
            backend.abortedRequests += 1;
          });
          response.writeHead(200, { 'content-type': 'text/event-stream' });
          response.flushHeaders();
          return;
        }
        const parsed = JSON.parse(body) as { stream?: boolean; model?: string };
        const model = parsed.model ?? FAKE_MODEL;
        if (parsed.stream) {
          response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          const chunk = (delta: unknown, finishReason: string | null): string =>
            `data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
          response.write(chunk({ role: 'assistant', content: answer }, null));
          for (let delta = 1; delta < backend.streamedDeltas; delta++) {
            if (backend.deltaIntervalMs > 0) await new Promise((wake) => setTimeout(wake, backend.deltaIntervalMs));
            response.write(chunk({ content: answer }, null));
          }
          response.write(chunk({}, 'stop'));
          response.end('data: [DONE]\n\n');
          return;
        }
        sendJson(response, 200, {
          id: 'chatcmpl-fake',
          object: 'chat.completion',
          created: 0,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
        });
        return;
      }
      sendJson(response, 404, { error: { message: `fake backend has no route ${request.method} ${path}` } });
    })();
  });
  await new Promise<void>((resolveListening) => server.listen(0, '127.0.0.1', resolveListening));
  const { port } = server.address() as AddressInfo;
  return Object.assign(backend, {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolveClosed) => {
        server.closeAllConnections();
        server.close(() => resolveClosed());
      }),
  });
}
