import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startMockBackend, type EngineProfile, type MockBackend } from '../../../mock-backend/create-mock-backend.ts';
import type { MidStreamErrorKind } from '../../../mock-backend/script.ts';
import { assertCodexAcceptsStream } from '../../support/codex-stream-oracle.ts';
import { findFreePort, startTestBridge, type StartedBridge } from '../../support/bridge-harness.ts';
import { failedStreamError, jsonError, runExchange, waitUntil, type ObservedExchange } from '../../support/exchange-outcome.ts';
import { renderChunkFrame, startScriptedBackend, startSseResponse, type ScriptedBackend } from '../../../mock-backend/scripted-backend.ts';

/**
 * Faults: every backend failure ends in a clear error to Codex — an HTTP status before the
 * SSE response is committed, `response.failed` after — and a failed exchange in the panel and the log.
 * Nothing hangs: the bridge's own watchdog ends silent backends (timeouts here are guards only).
 */

const STREAM = { model: 'qwen3-coder', input: 'hi', stream: true };
const JSON_ONLY = { ...STREAM, stream: false };

/** The panel and the log see a failed exchange carrying the same message Codex got. */
function assertLoggedFailure(observed: ObservedExchange, message: string): void {
  assert.equal(observed.end.outcome, 'failed');
  assert.equal(observed.end.error?.message, message);
}

function assertFailedStream(observed: ObservedExchange, expected: { code: string; message: RegExp }): void {
  const error = failedStreamError(observed.codex);
  assert.equal(error.code, expected.code);
  assert.match(error.message, expected.message);
  assert.equal(observed.codex.status, 200);
  if (observed.codex.kind === 'stream') assertCodexAcceptsStream(observed.codex.events, { expectedTerminal: 'response.failed' });
  assertLoggedFailure(observed, error.message);
}

describe('backend unreachable before anything was sent', () => {
  it('connection refused → 503 backend_unreachable with Retry-After, for streams too', async () => {
    const port = await findFreePort();
    const bridge = await startTestBridge({ backendUrl: `http://127.0.0.1:${port}/v1` });
    try {
      for (const body of [STREAM, JSON_ONLY]) {
        const observed = await runExchange(bridge, body);
        const error = jsonError(observed.codex);
        assert.equal(error.status, 503);
        assert.equal(error.retryAfter, '2');
        assert.equal(error.code, 'backend_unreachable');
        assert.equal(error.message, `backend unreachable at http://127.0.0.1:${port}/v1/chat/completions: ECONNREFUSED`);
        assertLoggedFailure(observed, error.message);
      }
    } finally {
      await bridge.close();
    }
  });

  it('DNS failure (an RFC 6761 .invalid name) → 503 naming the host', async () => {
    const bridge = await startTestBridge({ backendUrl: 'http://freeform-bridge-test.invalid:8000/v1' });
    try {
      const observed = await runExchange(bridge, STREAM);
      const error = jsonError(observed.codex);
      assert.equal(error.status, 503);
      assert.equal(error.code, 'backend_unreachable');
      assert.match(error.message, /^backend unreachable at http:\/\/freeform-bridge-test\.invalid:8000\/v1\/chat\/completions: (ENOTFOUND|EAI_AGAIN|EAI_FAIL)$/);
      assertLoggedFailure(observed, error.message);
    } finally {
      await bridge.close();
    }
  });

  it('TLS error (https:// to a plain-HTTP backend) → 503 naming the TLS failure', async () => {
    const backend = await startMockBackend({ profile: 'vllm-hermes' });
    const bridge = await startTestBridge({ backendUrl: backend.url.replace(/^http:/, 'https:') });
    try {
      const observed = await runExchange(bridge, STREAM);
      const error = jsonError(observed.codex);
      assert.equal(error.status, 503);
      assert.equal(error.code, 'backend_unreachable');
      assert.match(error.message, /^backend unreachable at https:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: (ERR_SSL_\w+|EPROTO|ECONNRESET)$/);
      assert.equal(backend.requests.length, 0, 'no request reached the backend in the clear');
      assertLoggedFailure(observed, error.message);
    } finally {
      await bridge.close();
      await backend.close();
    }
  });
});

describe('silent backends end in response.failed through the idle watchdog', () => {
  let backend: MockBackend;
  let scripted: ScriptedBackend;
  let bridge: StartedBridge;
  let scriptedBridge: StartedBridge;
  // Grace 100 ms, then keepalives every 200 ms; the watchdog gives up after 1 s of backend silence.
  const timing = { commitGraceMs: 100, keepaliveSeconds: 0.2, upstreamIdleTimeoutSeconds: 1 };
  before(async () => {
    backend = await startMockBackend({ profile: 'vllm-qwen3coder' });
    scripted = await startScriptedBackend();
    bridge = await startTestBridge({ backendUrl: backend.url, ...timing });
    scriptedBridge = await startTestBridge({ backendUrl: scripted.url, ...timing });
  });
  after(async () => {
    await bridge.close();
    await scriptedBridge.close();
    await backend.close();
    await scripted.close();
  });

  it('headers never arrive (stream): committed after the grace window, kept alive, then failed; the backend call is aborted', async () => {
    const index = backend.requests.length;
    backend.enqueue({ text: 'never', delayBeforeHeadersMs: 120_000 });
    const observed = await runExchange(bridge, STREAM);
    assertFailedStream(observed, { code: 'server_error', message: /^backend at http:\/\/127\.0\.0\.1:\d+\/v1 sent nothing for 1 s; giving up \(the backend timeout: --backend-timeout-seconds for serve, freeformBridge\.backendTimeoutSeconds in VS Code\)$/ });
    if (observed.codex.kind !== 'stream') return;
    assert.deepEqual(
      observed.codex.events.filter((event) => event.type !== 'response.in_progress').map((event) => event.type),
      ['response.created', 'response.failed'],
      'only keepalives between the start and the failure',
    );
    await waitUntil(() => backend.requests[index]?.aborted === true, 'the mock sees the upstream request aborted');
  });

  it('headers never arrive (JSON request): 503 instead of waiting forever', async () => {
    const index = backend.requests.length;
    backend.enqueue({ text: 'never', delayBeforeHeadersMs: 120_000 });
    const observed = await runExchange(bridge, JSON_ONLY);
    const error = jsonError(observed.codex);
    assert.equal(error.status, 503);
    assert.equal(error.code, 'server_error');
    assert.match(error.message, /sent nothing for 1 s; giving up/);
    assertLoggedFailure(observed, error.message);
    await waitUntil(() => backend.requests[index]?.aborted === true, 'the mock sees the upstream request aborted');
  });

  it('a non-streaming backend that takes forever to send its body → response.failed', async () => {
    backend.enqueue({ text: 'never', delayBeforeFirstByteMs: 120_000 });
    const observed = await runExchange(bridge, STREAM);
    assertFailedStream(observed, { code: 'server_error', message: /sent nothing for 1 s/ });
  });

  it('the body stalls mid-stream → response.failed; the open message is never delivered as done', async () => {
    scripted.setHandlers((response) => {
      startSseResponse(response);
      response.write(renderChunkFrame({ role: 'assistant', content: '' }));
      response.write(renderChunkFrame({ content: 'half an ans' }));
      // …and nothing more, with the socket open.
    });
    const index = scripted.requests.length;
    const observed = await runExchange(scriptedBridge, STREAM);
    assertFailedStream(observed, { code: 'server_error', message: /sent nothing for 1 s/ });
    if (observed.codex.kind !== 'stream') return;
    assert.ok(observed.codex.events.some((event) => event.type === 'response.output_text.delta' && event.delta === 'half an ans'));
    assert.equal(observed.codex.events.filter((event) => event.type === 'response.output_item.done').length, 0);
    await waitUntil(() => scripted.requests[index]?.aborted === true, 'the backend sees the request aborted');
  });
});

describe('a backend stream that breaks', () => {
  let scripted: ScriptedBackend;
  let bridge: StartedBridge;
  before(async () => {
    scripted = await startScriptedBackend();
    bridge = await startTestBridge({ backendUrl: scripted.url, keepaliveSeconds: 0 });
  });
  after(async () => {
    await bridge.close();
    await scripted.close();
  });

  it('socket reset in the middle of an event → response.failed; a call in progress is never delivered', async () => {
    scripted.setHandlers((response) => {
      startSseResponse(response);
      response.write(renderChunkFrame({ role: 'assistant', content: '' }));
      response.write(renderChunkFrame({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'shell', arguments: '{"command":' } }] }));
      const frame = renderChunkFrame({ tool_calls: [{ index: 0, function: { arguments: '"rm -rf /tmp/x"}' } }] });
      response.write(frame.slice(0, 30), () => {
        // A TCP reset, not a clean FIN: what a crashed engine or a dropped proxy looks like.
        setTimeout(() => response.socket?.resetAndDestroy(), 20);
      });
    });
    const observed = await runExchange(bridge, STREAM);
    assertFailedStream(observed, { code: 'server_error', message: /^backend stream broke \(http:\/\/127\.0\.0\.1:\d+\/v1\): / });
    if (observed.codex.kind !== 'stream') return;
    assert.ok(observed.codex.events.some((event) => event.type === 'response.output_item.added'), 'the call was announced');
    assert.equal(observed.codex.events.filter((event) => event.type === 'response.output_item.done').length, 0, 'but never delivered');
  });

  it('the same reset under a JSON request → 503', async () => {
    scripted.setHandlers((response) => {
      startSseResponse(response);
      response.write(renderChunkFrame({ content: 'part' }).slice(0, 25), () => setTimeout(() => response.socket?.resetAndDestroy(), 20));
    });
    const observed = await runExchange(bridge, JSON_ONLY);
    const error = jsonError(observed.codex);
    assert.equal(error.status, 503);
    assert.match(error.message, /^backend stream broke/);
    assertLoggedFailure(observed, error.message);
  });

  const malformedFrames: Array<{ name: string; frame: string; message: RegExp }> = [
    { name: 'a chunk that is not JSON', frame: 'data: {"id":"c","choices":[{"index":0,"delta":{"content":"x"}tru\n\n', message: /unreadable stream frame .*not JSON/ },
    { name: 'a chunk of the wrong shape', frame: 'data: {"id":"c","object":"chat.completion.chunk","choices":"nope"}\n\n', message: /unreadable stream frame .*malformed chunk at choices/ },
    { name: 'a JSON string instead of a chunk', frame: 'data: "hello"\n\n', message: /unreadable stream frame/ },
  ];
  for (const { name, frame, message } of malformedFrames) {
    it(`${name} → response.failed naming the frame, not a silent success`, async () => {
      scripted.setHandlers((response) => {
        startSseResponse(response);
        response.write(renderChunkFrame({ role: 'assistant', content: '' }));
        response.write(renderChunkFrame({ content: 'before' }));
        response.write(frame);
        response.write(renderChunkFrame({}, 'stop'));
        response.end('data: [DONE]\n\n');
      });
      const observed = await runExchange(bridge, STREAM);
      assertFailedStream(observed, { code: 'server_error', message });
    });
  }

  it('a malformed chunk under a JSON request → 503 with the same message', async () => {
    scripted.setHandlers((response) => {
      startSseResponse(response);
      response.end('data: {not json}\n\ndata: [DONE]\n\n');
    });
    const observed = await runExchange(bridge, JSON_ONLY);
    const error = jsonError(observed.codex);
    assert.equal(error.status, 503);
    assert.match(error.message, /unreadable stream frame/);
    assertLoggedFailure(observed, error.message);
  });
});

describe('engine mid-stream error frames', () => {
  const cases: Array<{ kind: MidStreamErrorKind; profile: EngineProfile; code: string; message: RegExp }> = [
    { kind: 'vllm', profile: 'vllm-hermes', code: 'server_error', message: /^backend stream failed \(.*\): Internal server error$/ },
    { kind: 'sglang', profile: 'sglang', code: 'server_error', message: /^backend stream failed \(.*\): Internal server error$/ },
    { kind: 'llamacpp', profile: 'llamacpp', code: 'server_error', message: /^backend stream failed \(.*\): Internal server error$/ },
    { kind: 'llamacpp-2025', profile: 'llamacpp', code: 'context_length_exceeded', message: /exceeds the available context size/ },
    { kind: 'ollama', profile: 'ollama', code: 'server_error', message: /ended before a finish reason/ },
    { kind: 'socket-cut', profile: 'vllm-hermes', code: 'server_error', message: /^backend stream broke/ },
  ];
  for (const { kind, profile, code, message } of cases) {
    it(`${kind} (${profile} profile) → response.failed ${code}; as JSON → ${code === 'context_length_exceeded' ? 400 : 503}`, async () => {
      const backend = await startMockBackend({ profile });
      const bridge = await startTestBridge({ backendUrl: backend.url, keepaliveSeconds: 0 });
      try {
        backend.enqueue({ text: 'Partial answer', midStreamError: kind });
        const streamed = await runExchange(bridge, STREAM);
        assertFailedStream(streamed, { code, message });
        if (streamed.codex.kind === 'stream') {
          assert.equal(streamed.codex.events.filter((event) => event.type === 'response.completed').length, 0);
        }
        backend.enqueue({ text: 'Partial answer', midStreamError: kind });
        const whole = await runExchange(bridge, JSON_ONLY);
        const error = jsonError(whole.codex);
        assert.equal(error.status, code === 'context_length_exceeded' ? 400 : 503);
        assert.equal(error.code, code);
        assert.match(error.message, message);
        assertLoggedFailure(whole, error.message);
      } finally {
        await bridge.close();
        await backend.close();
      }
    });
  }
});

describe('backend 429 and 503, with and without Retry-After', () => {
  let backend: MockBackend;
  let bridge: StartedBridge;
  before(async () => {
    backend = await startMockBackend({ profile: 'vllm-hermes' });
    // The default grace window (1.5 s): an immediate error status is still an HTTP status for Codex.
    bridge = await startTestBridge({ backendUrl: backend.url, keepaliveSeconds: 0 });
  });
  after(async () => {
    await bridge.close();
    await backend.close();
  });

  const cases: Array<{ status: number; retryAfter: string | null; expectedStatus: number; expectedRetryAfter: string | null; code: string }> = [
    { status: 429, retryAfter: null, expectedStatus: 429, expectedRetryAfter: '2', code: 'rate_limit_exceeded' },
    { status: 429, retryAfter: '7', expectedStatus: 429, expectedRetryAfter: '7', code: 'rate_limit_exceeded' },
    { status: 503, retryAfter: null, expectedStatus: 503, expectedRetryAfter: null, code: 'backend_unavailable' },
    { status: 503, retryAfter: '9', expectedStatus: 503, expectedRetryAfter: '9', code: 'backend_unavailable' },
  ];
  for (const { status, retryAfter, expectedStatus, expectedRetryAfter, code } of cases) {
    it(`${status} ${retryAfter === null ? 'without' : `with Retry-After ${retryAfter}`} → ${expectedStatus}, Retry-After ${String(expectedRetryAfter)}`, async () => {
      for (const body of [STREAM, JSON_ONLY]) {
        backend.enqueue({ status, headers: retryAfter === null ? {} : { 'retry-after': retryAfter } });
        const observed = await runExchange(bridge, body);
        const error = jsonError(observed.codex);
        assert.equal(error.status, expectedStatus);
        assert.equal(error.retryAfter, expectedRetryAfter);
        assert.equal(error.code, code);
        assert.match(error.message, new RegExp(`HTTP ${status}`));
        assert.equal(observed.end.httpStatus, expectedStatus);
        assertLoggedFailure(observed, error.message);
      }
    });
  }

  it('a 429 that arrives after the stream was committed → response.failed naming it', async () => {
    const slow = await startTestBridge({ backendUrl: backend.url, keepaliveSeconds: 0, commitGraceMs: 50 });
    try {
      backend.enqueue({ status: 429, headers: { 'retry-after': '7' }, delayBeforeHeadersMs: 400 });
      const observed = await runExchange(slow, STREAM);
      assertFailedStream(observed, { code: 'server_error', message: /rate limiting \(HTTP 429\)/ });
    } finally {
      await slow.close();
    }
  });
});
