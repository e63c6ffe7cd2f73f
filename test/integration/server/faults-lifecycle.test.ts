import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMockBackend } from '../../../mock-backend/create-mock-backend.ts';
import { assertCodexAcceptsStream } from '../../support/codex-stream-oracle.ts';
import { postResponses, readSseEvents, startTestBridge, terminalEvent } from '../../support/bridge-harness.ts';
import { runExchange, waitForExchangeEnd, waitUntil } from '../../support/exchange-outcome.ts';
import { startBridgeServer } from '../../../src/server/start-server.ts';
import { makeTempDir } from '../../support/cleanup.ts';

/**
 * Faults on the Codex side and in the bridge's own lifecycle: Codex going away during a
 * silent prefill, the bridge stopped with requests in flight, the port already taken.
 */

const STREAM = { model: 'qwen3-coder', input: 'hi', stream: true };
const JSON_ONLY = { ...STREAM, stream: false };

describe('Codex disconnects during a silent prefill', () => {
  for (const body of [STREAM, JSON_ONLY]) {
    it(`aborts the backend request and records the exchange as aborted (${body.stream ? 'stream' : 'JSON'})`, async () => {
      const backend = await startMockBackend({ profile: 'vllm-qwen3coder' });
      const bridge = await startTestBridge({ backendUrl: backend.url, keepaliveSeconds: 0.2, commitGraceMs: 50 });
      try {
        backend.enqueue({ text: 'never read', delayBeforeFirstByteMs: 120_000 });
        const controller = new AbortController();
        const pending = postResponses(bridge.url, body, { signal: controller.signal });
        let reading: Promise<unknown> = pending;
        if (body.stream) {
          // Let the stream start (response.created arrives) before walking away.
          const response = await pending;
          assert.equal(response.status, 200);
          const reader = response.body!.getReader();
          await reader.read();
          reading = (async () => {
            let chunk = await reader.read();
            while (!chunk.done) chunk = await reader.read();
          })();
        }
        await backend.waitForRequests(1);
        controller.abort();
        await assert.rejects(reading, /abort/i);
        await waitUntil(() => backend.requests[0]?.aborted === true, 'the mock sees the upstream request aborted');
        const end = await waitForExchangeEnd(bridge.traffic, 0);
        assert.equal(end.outcome, 'aborted');
        assert.equal(end.httpStatus, 499);

        // The bridge carries on.
        backend.enqueue({ text: 'next turn' });
        const next = await runExchange(bridge, STREAM);
        assert.equal(next.codex.kind === 'stream' && next.codex.terminal.type, 'response.completed');
      } finally {
        await bridge.close();
        await backend.close();
      }
    });
  }
});

describe('the bridge is stopped while requests are in flight', () => {
  it('tells each client why, aborts every backend call, logs every exchange and closes promptly', async () => {
    const backend = await startMockBackend({ profile: 'vllm-qwen3coder' });
    const logFile = join(makeTempDir('freeform-bridge-stop-'), 'exchanges.jsonl');
    const bridge = await startTestBridge({ backendUrl: backend.url, keepaliveSeconds: 0.2, commitGraceMs: 100, logFile });
    try {
      backend.enqueue(
        // Waiting for headers (committed after the grace window).
        { text: 'a', delayBeforeHeadersMs: 120_000 },
        // Headers in, silent prefill.
        { text: 'b', delayBeforeFirstByteMs: 120_000 },
        // Mid-answer.
        { text: 'one two three four', delayBetweenChunksMs: 120_000 },
        // A JSON request waiting for its body.
        { text: 'd', delayBeforeFirstByteMs: 120_000 },
      );
      const streams = [0, 1, 2].map(async () => readSseEvents(await postResponses(bridge.url, STREAM)));
      await backend.waitForRequests(3);
      const whole = postResponses(bridge.url, JSON_ONLY);
      await backend.waitForRequests(4);
      // Every stream is committed (grace 100 ms) before the stop.
      await waitUntil(() => bridge.traffic.filter((event) => event.type === 'exchange-start').length === 4, 'four exchanges started');

      await bridge.close();

      for (const exchange of await Promise.all(streams)) {
        assertCodexAcceptsStream(exchange.events, { expectedTerminal: 'response.failed' });
        const terminal = terminalEvent(exchange.events);
        assert.match(JSON.stringify(terminal.response), /freeform-bridge stopped while this request was in flight/);
      }
      const answer = await whole;
      assert.equal(answer.status, 503);
      const { error } = (await answer.json()) as { error: { message: string } };
      assert.match(error.message, /freeform-bridge stopped/);

      await waitUntil(() => backend.requests.every((request) => request.aborted), 'every backend call aborted');
      const records = readFileSync(logFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { outcome: string; error: { message: string } });
      assert.equal(records.length, 4, 'every exchange is in the log');
      assert.ok(records.every((record) => record.outcome === 'failed' && /freeform-bridge stopped/.test(record.error.message)));
      await assert.rejects(fetch(`${bridge.url}/healthz`), 'the port is closed');
    } finally {
      await bridge.close();
      await backend.close();
    }
  });
});

describe('the port is already in use', () => {
  it('refuses to start with a clear message and leaves the running bridge alone', async () => {
    const backend = await startMockBackend({ profile: 'vllm-hermes' });
    const first = await startTestBridge({ backendUrl: backend.url });
    try {
      await assert.rejects(startBridgeServer({ backendUrl: backend.url, port: first.port }), {
        message: `port ${first.port} on 127.0.0.1 is already in use; choose another port (0 picks a free one)`,
      });
      const health = await fetch(`${first.url}/healthz`);
      assert.equal(health.status, 200);
    } finally {
      await first.close();
      await backend.close();
    }
  });
});
