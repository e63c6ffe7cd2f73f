import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createUpstreamClient, type UpstreamClient, type UpstreamResponse } from '../../../src/server/upstream-client.ts';
import { Agent } from 'undici';

/**
 * How the bridge reads a backend's answer: by 'data' events until the body ends or the
 * reader says stop; a complete answer's rest is drained so the pooled socket is reused, anything
 * else is cut.
 */

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

describe('UpstreamResponse: consume, release, discard', () => {
  let server: Server;
  let client: UpstreamClient;
  let handler: Handler = (_request, response) => response.end();
  /** Every socket the backend accepted, in order. */
  const connections: Socket[] = [];
  /** The socket each request arrived on, as the backend sees it. */
  const requestSockets: Socket[] = [];

  before(async () => {
    server = createServer((request, response) => {
      // The body is read so that keep-alive can reuse the connection.
      requestSockets.push(request.socket);
      request.resume();
      request.on('end', () => handler(request, response));
    });
    server.on('connection', (socket) => connections.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    client = createUpstreamClient({ baseUrl: `http://127.0.0.1:${port}/v1`, getApiKey: () => null });
  });
  after(async () => {
    // The backend's sockets go first: a request a failing test left waiting then fails instead of
    // holding the client's close open.
    server.closeAllConnections();
    await client.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** Writes `parts` one by one, a few milliseconds apart, so each arrives as its own read. */
  function answerInParts(parts: string[], ending: 'end' | 'cut' = 'end'): Handler {
    return (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      let index = 0;
      const next = (): void => {
        if (index < parts.length) {
          response.write(parts[index++]);
          setTimeout(next, 5);
        } else if (ending === 'end') response.end();
        else response.socket?.destroy();
      };
      next();
    };
  }

  async function post(): Promise<UpstreamResponse> {
    return client.postChatCompletions('{}', new AbortController().signal);
  }

  function closed(socket: Socket): Promise<void> {
    return socket.destroyed ? Promise.resolve() : new Promise((resolve) => socket.once('close', () => resolve()));
  }

  it('hands every piece over in order and resolves when the body ends', async () => {
    handler = answerInParts(['data: 1\n\n', 'data: 2\n\n', 'data: [DONE]\n\n']);
    const response = await post();
    let text = '';
    await response.consume((bytes) => {
      text += bytes.toString('utf8');
      return true;
    });
    assert.equal(text, 'data: 1\n\ndata: 2\n\ndata: [DONE]\n\n');
  });

  it('stops when told, and release() drains the rest so the connection stays open for reuse', async () => {
    handler = answerInParts(['data: 1\n\n', 'data: [DONE]\n\n', ': trailing comment\n\n']);
    const first = await post();
    const firstSocket = requestSockets.at(-1) as Socket;
    let pieces = 0;
    await first.consume(() => {
      pieces += 1;
      return false;
    });
    assert.equal(pieces, 1, 'nothing is handed over after the reader said stop');
    first.release();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(firstSocket.destroyed, false, 'the connection is still open: it went back to the pool');
    // Both pooled connections are idle now; whichever undici picks, the answer is whole.
    handler = answerInParts(['data: again\n\n']);
    const second = await post();
    assert.equal(await second.text(1024, 'body'), 'data: again\n\n');
    assert.equal(firstSocket.destroyed, false);
  });

  it('text() reads a body up to its cap, and past it cuts the socket and names the cap', async () => {
    handler = answerInParts(['x'.repeat(600), 'y'.repeat(600)]);
    const response = await post();
    await assert.rejects(response.text(1000, 'error body'), /the backend's error body is larger than 1000 bytes \(the bridge's cap on an answer it holds whole\); the bridge cut the connection/);
    await closed(connections.at(-1) as Socket);
  });

  it('discard() cuts a body that is still streaming, without an unhandled error', async () => {
    handler = answerInParts(Array.from({ length: 20 }, (_, index) => `data: ${index}\n\n`));
    const response = await post();
    await response.consume(() => false);
    const socket = connections.at(-1) as Socket;
    response.discard();
    await closed(socket);
    handler = answerInParts(['data: after\n\n']);
    assert.equal(await (await post()).text(1024, 'body'), 'data: after\n\n', 'the client keeps working on a new socket');
  });

  it('aborts a request in flight through its signal, before and after the answer started', { timeout: 10_000 }, async () => {
    // The backend never answers: only the abort can end the first call.
    let arrived: () => void = () => {};
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    handler = () => arrived();
    const waiting = new AbortController();
    const pending = client.postChatCompletions('{}', waiting.signal);
    await requestArrived;
    const socket = requestSockets[requestSockets.length - 1] as Socket;
    waiting.abort(new Error('client disconnected'));
    await assert.rejects(pending, /client disconnected/);
    await closed(socket);

    // Aborted while the body streams: the body fails with the same reason.
    handler = answerInParts(['data: 1\n\n', 'data: 2\n\n', 'data: [DONE]\n\n']);
    const streaming = new AbortController();
    const response = await client.postChatCompletions('{}', streaming.signal);
    await assert.rejects(
      response.consume(() => {
        streaming.abort(new Error('backend idle timeout'));
        return true;
      }),
      /backend idle timeout/,
    );

    // Aborted before it is sent: undici never sends it.
    const requestsSoFar = requestSockets.length;
    const early = new AbortController();
    early.abort(new Error('bridge stopping'));
    await assert.rejects(client.postChatCompletions('{}', early.signal), /bridge stopping/);
    assert.equal(requestSockets.length, requestsSoFar);
  });

  it('rejects when the backend cuts the body short', async () => {
    handler = answerInParts(['data: 1\n\n'], 'cut');
    const response = await post();
    await assert.rejects(response.consume(() => true));
  });

  it("rejects with the reader's own error when the reader throws, and stops reading", async () => {
    handler = answerInParts(['data: 1\n\n', 'data: 2\n\n']);
    const response = await post();
    let calls = 0;
    await assert.rejects(
      response.consume(() => {
        calls += 1;
        throw new Error('translator broke');
      }),
      /translator broke/,
    );
    assert.equal(calls, 1);
    response.discard();
  });
});

describe('UpstreamClient: the request body', () => {
  it('hands a text body to undici as its UTF-8 bytes, so no string of it stays in the heap through the answer', async () => {
    const received: string[] = [];
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push(Buffer.concat(chunks).toString('utf8'));
        response.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    // What undici is given: it keeps that object until the answer has been read.
    const given: unknown[] = [];
    const agent = new Agent().compose((dispatch) => (options, handler) => {
      given.push(options.body);
      return dispatch(options, handler);
    });
    const client = createUpstreamClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, getApiKey: () => null, dispatcher: agent });
    try {
      const text = '{"model":"m","messages":[{"role":"user","content":"naïve — ✓"}]}';
      const response = await client.postChatCompletions(text, new AbortController().signal);
      await response.text(1024, 'body');
      assert.deepEqual(received, [text]);
      assert.equal(given.length, 1);
      assert.ok(Buffer.isBuffer(given[0]), 'the body went to undici as bytes');
      assert.equal((given[0] as Buffer).toString('utf8'), text);
    } finally {
      await client.close();
      await agent.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('a base URL with a query string', () => {
  it('keeps the query after the request path', async () => {
    const paths: string[] = [];
    const server = createServer((request, response) => {
      paths.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"data":[]}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = createUpstreamClient({ baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}/openai/v1?api-version=2024-10-01`, getApiKey: () => null });
    try {
      await (await client.getModels(new AbortController().signal)).text(1024, 'model list');
      await (await client.requestServerRoot('GET', '/props', undefined, new AbortController().signal)).text(1024, 'props');
      assert.deepEqual(paths, ['/openai/v1/models?api-version=2024-10-01', '/openai/props?api-version=2024-10-01']);
    } finally {
      await client.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
