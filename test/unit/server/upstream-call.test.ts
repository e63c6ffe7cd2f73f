import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { UpstreamCall, type UpstreamCallOptions } from '../../../src/server/upstream-call.ts';
import type { UpstreamClient, UpstreamResponse } from '../../../src/server/upstream-client.ts';

/**
 * The backend call around the bytes: the commit grace window, the silence watchdog, the abort and the
 * shutdown, the backpressure. The backend here is an in-memory client whose answer the test releases.
 */

interface ScriptedBackend {
  client: UpstreamClient;
  /** The signal of the last call. */
  signal: () => AbortSignal;
  answer: (response: UpstreamResponse) => void;
  sentBodies: string[];
}

function createBackend(): ScriptedBackend {
  let resolveAnswer: (response: UpstreamResponse) => void = () => {};
  let lastSignal: AbortSignal | null = null;
  const sentBodies: string[] = [];
  const client = {
    baseUrl: 'http://backend.test/v1',
    postChatCompletions(body: string, signal: AbortSignal) {
      sentBodies.push(body);
      lastSignal = signal;
      return new Promise<UpstreamResponse>((resolve, reject) => {
        resolveAnswer = resolve;
        signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
      });
    },
    getModels: () => Promise.reject(new Error('not used')),
    requestServerRoot: () => Promise.reject(new Error('not used')),
    close: () => Promise.resolve(),
  } as unknown as UpstreamClient;
  return {
    client,
    sentBodies,
    signal: () => {
      assert.ok(lastSignal, 'no call was made');
      return lastSignal;
    },
    answer: (response) => resolveAnswer(response),
  };
}

/** A body whose pieces the test pushes; it records pauses and resumes. */
function createBody(): UpstreamResponse & { pushPiece: (text: string) => boolean; endBody: () => void; log: string[] } {
  const log: string[] = [];
  let onBytes: ((bytes: Buffer) => boolean) | null = null;
  let finish: () => void = () => {};
  return {
    status: 200,
    headers: {},
    log,
    consume(reader) {
      onBytes = reader;
      return new Promise<void>((resolve) => {
        finish = resolve;
      });
    },
    pushPiece(text) {
      assert.ok(onBytes, 'nobody reads the body');
      const more = onBytes(Buffer.from(text));
      if (!more) finish();
      return more;
    },
    endBody: () => finish(),
    pause: () => log.push('pause'),
    resume: () => log.push('resume'),
    text: () => Promise.resolve('{"choices":[]}'),
    release: () => log.push('release'),
    discard: () => log.push('discard'),
  };
}

function createCall(backend: ScriptedBackend, overrides: Partial<UpstreamCallOptions> = {}): UpstreamCall & { events: string[] } {
  const events: string[] = [];
  const call = new UpstreamCall({
    upstream: backend.client,
    idleTimeoutSeconds: 0,
    commitGraceMs: 0,
    onGraceElapsed: () => events.push('grace'),
    onSilence: (message) => events.push(`silence: ${message}`),
    onShutdown: (message) => events.push(`shutdown: ${message}`),
    ...overrides,
  });
  return Object.assign(call, { events });
}

describe('UpstreamCall', () => {
  it('sends the text and resolves with the answer; without a grace window nothing is committed early', async () => {
    const backend = createBackend();
    const call = createCall(backend);
    const pending = call.send('{"model":"m"}');
    const body = createBody();
    backend.answer(body);
    assert.equal(await call.response(pending), body);
    assert.deepEqual(backend.sentBodies, ['{"model":"m"}']);
    assert.deepEqual(call.events, []);
    call.dispose();
  });

  it('calls onGraceElapsed when the backend is slower than the window, then still waits for its answer', async () => {
    const backend = createBackend();
    const call = createCall(backend, { commitGraceMs: 5 });
    const waiting = call.response(call.send('{}'));
    while (call.events.length === 0) await delay(5);
    assert.deepEqual(call.events, ['grace']);
    const body = createBody();
    backend.answer(body);
    assert.equal(await waiting, body);
    assert.deepEqual(call.events, ['grace']);
    call.dispose();
  });

  it('gives up on a backend silent for the idle timeout: aborts the call, then says so', async () => {
    const backend = createBackend();
    const call = createCall(backend, { idleTimeoutSeconds: 0.01 });
    const waiting = call.response(call.send('{}'));
    await assert.rejects(waiting, /backend idle timeout/);
    assert.equal(backend.signal().aborted, true);
    assert.deepEqual(call.events, ['silence: backend at http://backend.test/v1 sent nothing for 0.01 s; giving up (the backend timeout: --backend-timeout-seconds for serve, freeformBridge.backendTimeoutSeconds in VS Code)']);
    call.dispose();
  });

  it('answers a shutdown first and aborts the call right after; dispose() stops listening for it', async () => {
    const backend = createBackend();
    const shutdown = new AbortController();
    const call = createCall(backend, { shutdown: shutdown.signal });
    const waiting = call.response(call.send('{}'));
    shutdown.abort();
    assert.equal(call.events.length, 1);
    assert.match(call.events[0] ?? '', /^shutdown: freeform-bridge stopped while this request was in flight/);
    await assert.rejects(waiting, /bridge stopping/);

    const other = new AbortController();
    const disposed = createCall(createBackend(), { shutdown: other.signal });
    disposed.dispose();
    other.abort();
    assert.deepEqual(disposed.events, []);
  });

  it('abort() rejects the pending call with its reason (Codex gone)', async () => {
    const backend = createBackend();
    const call = createCall(backend);
    const waiting = call.response(call.send('{}'));
    call.abort(new Error('client disconnected'));
    await assert.rejects(waiting, /client disconnected/);
    call.dispose();
  });

  it('reads the body piece by piece until the reader says stop', async () => {
    const backend = createBackend();
    const call = createCall(backend);
    const body = createBody();
    const pieces: string[] = [];
    const reading = call.read(body, (bytes) => {
      pieces.push(bytes.toString());
      return pieces.length < 2;
    });
    assert.equal(body.pushPiece('a'), true);
    assert.equal(body.pushPiece('b'), false);
    await reading;
    assert.deepEqual(pieces, ['a', 'b']);
    call.dispose();
  });

  it('pauses the body while Codex is full, once, and resumes it on drain', async () => {
    const backend = createBackend();
    const call = createCall(backend);
    const body = createBody();
    const client = new EventEmitter();
    call.holdUntilDrained(client);
    assert.deepEqual(body.log, [], 'nothing to pause before the body is read');
    const reading = call.read(body, () => true);
    call.holdUntilDrained(client);
    call.holdUntilDrained(client);
    assert.deepEqual(body.log, ['pause']);
    client.emit('drain');
    assert.deepEqual(body.log, ['pause', 'resume']);
    body.endBody();
    await reading;
    call.dispose();
  });

  it('does not count its own pause as backend silence', async () => {
    const backend = createBackend();
    const call = createCall(backend, { idleTimeoutSeconds: 0.01 });
    const body = createBody();
    const client = new EventEmitter();
    const reading = call.read(body, () => true);
    call.holdUntilDrained(client);
    // Several idle timeouts pass while Codex is not reading.
    await delay(50);
    assert.deepEqual(call.events, []);
    client.emit('drain');
    body.endBody();
    await reading;
    call.stopTimers();
    await delay(30);
    assert.deepEqual(call.events, [], 'a stopped watchdog stays quiet');
    call.dispose();
  });
});
