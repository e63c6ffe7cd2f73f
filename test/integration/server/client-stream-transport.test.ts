import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import { startTestBridge, type StartedBridge } from '../../support/bridge-harness.ts';
import { renderChunkFrame, startScriptedBackend, startSseResponse, type ScriptedBackend, type ScriptedHandler } from '../../../mock-backend/scripted-backend.ts';

/**
 * The stream toward Codex as a transport: a client that stops reading must hold the backend back (TCP
 * backpressure through the bridge), not make the bridge buffer the whole generation in memory; a
 * client that reads slowly still gets every byte, in order; the connection is kept or closed as the
 * client asked.
 */

const FRAME_CONTENT = 'x'.repeat(64 * 1024);

/** How far the backend got: bytes of content written, and whether it wrote its last frame. */
interface Progress {
  contentBytes: number;
  finished: boolean;
}

function writeOrWait(response: ServerResponse, text: string): Promise<void> {
  if (response.write(text)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.once('drain', done);
    response.once('close', done);
  });
}

/** Streams `totalBytes` of content as fast as the bridge takes it, honouring its own backpressure. */
function streamContent(totalBytes: number, progress: Progress): ScriptedHandler {
  return async (response) => {
    startSseResponse(response);
    await writeOrWait(response, renderChunkFrame({ role: 'assistant', content: '' }));
    while (progress.contentBytes < totalBytes && !response.destroyed) {
      await writeOrWait(response, renderChunkFrame({ content: FRAME_CONTENT }));
      progress.contentBytes += FRAME_CONTENT.length;
    }
    if (response.destroyed) return;
    await writeOrWait(response, renderChunkFrame({}, 'stop'));
    response.end('data: [DONE]\n\n');
    progress.finished = true;
  };
}

function openStream(bridgeUrl: string, connection: 'close' | 'keep-alive' = 'close'): Socket {
  const { hostname, port } = new URL(bridgeUrl);
  const body = JSON.stringify({ model: 'scripted', input: 'write a lot', stream: true });
  const socket = connect(Number(port), hostname);
  socket.write(
    `POST /v1/responses HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: ${connection}\r\n\r\n${body}`,
  );
  return socket;
}

/** Reads until the response's last chunk (`0\r\n\r\n`) has arrived; returns the raw text so far. */
async function readUntilLastChunk(socket: Socket): Promise<string> {
  const chunks: Buffer[] = [];
  // Only the tail is checked per read: the text of a long stream is tens of MB.
  let tail = '';
  const text = (): string => Buffer.concat(chunks).toString('utf8');
  return new Promise((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      tail = (tail + chunk.toString('latin1')).slice(-16);
      if (tail.endsWith('\r\n0\r\n\r\n')) resolve(text());
    });
    socket.once('error', reject);
    socket.once('end', () => resolve(text()));
    // A 'data' listener does not restart a socket that was paused on purpose.
    socket.resume();
  });
}

/** Resolves once `read()` has stopped changing for `quietMs` (or after `limitMs`). */
async function waitUntilSteady(read: () => number, quietMs: number, limitMs: number): Promise<number> {
  const started = Date.now();
  let last = read();
  let lastChange = Date.now();
  while (Date.now() - started < limitMs) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = read();
    if (now !== last) {
      last = now;
      lastChange = Date.now();
    } else if (Date.now() - lastChange >= quietMs) break;
  }
  return last;
}

describe('the stream toward Codex: backpressure and connection handling', () => {
  let backend: ScriptedBackend;
  let bridge: StartedBridge;
  before(async () => {
    backend = await startScriptedBackend({});
    bridge = await startTestBridge({ backendUrl: backend.url, keepaliveSeconds: 0 });
  });
  after(async () => {
    await bridge.close();
    await backend.close();
  });

  it('a client that stops reading stalls the backend instead of filling the bridge', async () => {
    const total = 256 * 1024 * 1024;
    const progress: Progress = { contentBytes: 0, finished: false };
    backend.setHandlers(streamContent(total, progress));
    const socket = openStream(bridge.url);
    // Never read: the bytes pile up in the socket buffers, then in nobody's memory.
    socket.pause();
    const stalledAt = await waitUntilSteady(() => progress.contentBytes, 500, 20_000);
    assert.equal(progress.finished, false, 'the backend could write everything: the bridge buffered the whole generation');
    // Socket buffers on both loopback hops hold a few MB each; far below the answer's size.
    assert.ok(stalledAt < total / 4, `the backend wrote ${stalledAt} bytes before stalling`);
    const requestsBefore = backend.requests.length;
    socket.destroy();
    const recorded = backend.requests[requestsBefore - 1];
    await waitUntilSteady(() => Number(recorded?.aborted === true), 200, 5_000);
    assert.equal(recorded?.aborted, true, 'closing the stalled client aborts the backend request');
  });

  it('a client that reads slowly still gets every byte, in order, and the stream completes', async () => {
    const total = 8 * 1024 * 1024;
    const progress: Progress = { contentBytes: 0, finished: false };
    backend.setHandlers(streamContent(total, progress));
    const socket = openStream(bridge.url);
    const chunks: Buffer[] = [];
    let reads = 0;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // Read a little, then nothing for a while: the bridge pauses and resumes the backend many times.
      if (++reads % 8 === 0) {
        socket.pause();
        setTimeout(() => socket.resume(), 5);
      }
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('end', resolve);
      socket.once('error', reject);
    });
    const text = Buffer.concat(chunks).toString('utf8');
    const deltas = [...text.matchAll(/"type":"response\.output_text\.delta"[^\n]*"delta":"(x+)"/g)].map((match) => match[1]?.length ?? 0);
    assert.equal(
      deltas.reduce((sum, length) => sum + length, 0),
      total,
      'every content byte arrived as a delta',
    );
    assert.match(text, /event: response\.completed/);
    assert.equal(progress.finished, true);
  });

  it('keeps a keep-alive connection open and closes one whose client asked to close', async () => {
    backend.setHandlers(streamContent(64 * 1024, { contentBytes: 0, finished: false }));
    const kept = openStream(bridge.url, 'keep-alive');
    const keptText = await readUntilLastChunk(kept);
    assert.match(keptText, /^HTTP\/1\.1 200[^]*\r\nConnection: keep-alive\r\n/i);
    assert.equal(kept.readableEnded, false, 'the bridge keeps the connection for the next turn');
    kept.destroy();

    backend.setHandlers(streamContent(64 * 1024, { contentBytes: 0, finished: false }));
    const closing = openStream(bridge.url, 'close');
    const closedText = await readUntilLastChunk(closing);
    assert.match(closedText, /^HTTP\/1\.1 200[^]*\r\nConnection: close\r\n/i);
    await new Promise<void>((resolve) => (closing.readableEnded ? resolve() : closing.once('end', () => resolve())));
  });

  it("a client that stops reading for longer than the backend idle timeout does not fail the backend's stream", async () => {
    // The backend is silent only because the bridge stopped reading it: the watchdog must not blame it.
    const strictBridge = await startTestBridge({ backendUrl: backend.url, keepaliveSeconds: 0, upstreamIdleTimeoutSeconds: 1 });
    try {
      const total = 12 * 1024 * 1024;
      const progress: Progress = { contentBytes: 0, finished: false };
      backend.setHandlers(streamContent(total, progress));
      const socket = openStream(strictBridge.url);
      socket.pause();
      await waitUntilSteady(() => progress.contentBytes, 2_500, 20_000);
      assert.equal(progress.finished, false, 'the backend was held back while the client did not read');
      const text = await readUntilLastChunk(socket);
      assert.match(text, /event: response\.completed/);
      assert.doesNotMatch(text, /event: response\.failed/);
      assert.equal(progress.finished, true);
      socket.destroy();
    } finally {
      await strictBridge.close();
    }
  });
});
