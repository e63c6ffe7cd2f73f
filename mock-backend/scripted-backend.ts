import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A bare backend whose answers are written by the test, byte for byte: for faults the engine-profile
 * mock does not model (a chunk that is not JSON, a frame cut at an exact byte) and for huge bodies,
 * which it records only by size.
 */
export interface ScriptedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  bodyBytes: number;
  /** Parsed JSON when the body is smaller than `parseLimitBytes`, else null. */
  body: unknown;
  aborted: boolean;
}

export type ScriptedHandler = (response: ServerResponse, request: ScriptedRequest) => void | Promise<void>;

export interface ScriptedBackend {
  url: string;
  requests: ScriptedRequest[];
  /** Handlers are used in order; the last one repeats. */
  setHandlers(...handlers: ScriptedHandler[]): void;
  close(): Promise<void>;
}

export const CHUNK_ID = 'chatcmpl-scripted';

/** One `data:` frame holding a chat chunk with the given delta and finish reason. */
export function renderChunkFrame(delta: Record<string, unknown>, finishReason: string | null = null): string {
  const chunk = { id: CHUNK_ID, object: 'chat.completion.chunk', created: 0, model: 'scripted', choices: [{ index: 0, delta, finish_reason: finishReason }] };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

export function startSseResponse(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  response.flushHeaders();
}

/** A complete, well-formed streamed answer. */
export const answerWithText =
  (text: string): ScriptedHandler =>
  (response) => {
    startSseResponse(response);
    response.write(renderChunkFrame({ role: 'assistant', content: '' }));
    response.write(renderChunkFrame({ content: text }));
    response.write(renderChunkFrame({}, 'stop'));
    response.end('data: [DONE]\n\n');
  };

export async function startScriptedBackend(options: { parseLimitBytes?: number } = {}): Promise<ScriptedBackend> {
  const parseLimitBytes = options.parseLimitBytes ?? 1024 * 1024;
  const requests: ScriptedRequest[] = [];
  let handlers: ScriptedHandler[] = [answerWithText('scripted answer')];
  let served = 0;
  const sockets = new Set<Socket>();

  const server = createServer((incoming, response) => {
    let bodyBytes = 0;
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => {
      bodyBytes += chunk.length;
      if (bodyBytes <= parseLimitBytes) chunks.push(chunk);
    });
    incoming.on('end', () => {
      let body: unknown = null;
      if (bodyBytes <= parseLimitBytes && bodyBytes > 0) {
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
        } catch {
          body = null;
        }
      }
      const recorded: ScriptedRequest = { path: incoming.url ?? '/', headers: incoming.headers, bodyBytes, body, aborted: false };
      requests.push(recorded);
      response.on('close', () => {
        if (!response.writableFinished) recorded.aborted = true;
      });
      const handler = handlers[Math.min(served, handlers.length - 1)]!;
      served += 1;
      Promise.resolve(handler(response, recorded)).catch(() => response.destroy());
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    setHandlers(...next: ScriptedHandler[]): void {
      handlers = next;
      served = 0;
    },
    async close(): Promise<void> {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
