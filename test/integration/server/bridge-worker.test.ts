import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { after, describe, it } from 'node:test';
import type { Logger } from '../../../src/core/logger.ts';
import { REDACTED, redactSecretsInValue } from '../../../src/core/redact-secrets.ts';
import type { ExchangeStartEvent } from '../../../src/core/traffic/traffic-event.ts';
import type { BridgeTrafficEvent } from '../../../src/server/start-event-encoding.ts';
import { TrafficStore } from '../../../src/extension/traffic-store.ts';
import { BRIDGE_WORKER_YOUNG_GENERATION_MB, followBridgeTrafficInWorker, startBridgeInWorker, type BridgeWorkerConfig, type WorkerBridge } from '../../../src/server/start-bridge-in-worker.ts';
import { startBridgeServer } from '../../../src/server/start-server.ts';
import { postResponses, readSseEvents, startTestBridge } from '../../support/bridge-harness.ts';
import { bridgeWorkerScript, liveWorkerThreadIds, writeCrashingWorkerScript } from '../../support/bridge-worker-script.ts';
import { makeTempDir } from '../../support/cleanup.ts';
import { waitUntil } from '../../support/exchange-outcome.ts';
import { startMockBackend, type MockBackend } from '../../../mock-backend/create-mock-backend.ts';

/*
 * The bridge in a worker thread, seen from the thread that starts it (the extension host's): it
 * serves, its traffic reaches a store on this thread encoded and redacted, new secrets reach it,
 * start errors read as they do in-process, a crash is reported, and close() ends the thread.
 */

const SECRET = 'sk-worker-secret-0123456789';
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

interface LogLine {
  level: keyof Logger;
  message: string;
}

function recordingLogger(lines: LogLine[]): Logger {
  const record = (level: keyof Logger) => (message: string) => void lines.push({ level, message });
  return { error: record('error'), warn: record('warn'), info: record('info'), debug: record('debug') };
}

async function startBackend(): Promise<MockBackend> {
  const backend = await startMockBackend({ profile: 'vllm-hermes' });
  cleanups.push(() => backend.close());
  return backend;
}

async function startWorker(config: BridgeWorkerConfig): Promise<WorkerBridge> {
  const bridge = await startBridgeInWorker({ workerScript: bridgeWorkerScript(), ...config });
  cleanups.push(() => bridge.close());
  return bridge;
}

function turnBody(text: string): Record<string, unknown> {
  return {
    model: 'qwen3-coder',
    stream: true,
    input: [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are a coding agent.' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
    ],
    tools: [{ type: 'custom', name: 'apply_patch', description: 'Apply a patch', format: { type: 'text' } }],
  };
}

async function sendTurn(url: string, text: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await postResponses(url, turnBody(text), { headers });
  if (response.status === 200) await readSseEvents(response);
  else await response.text();
  return response.status;
}

function occupyPort(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

describe('startBridgeInWorker', () => {
  it('serves from a worker thread, forwards its log, and close() ends the thread', async () => {
    const lines: LogLine[] = [];
    const backend = await startBackend();
    const bridge = await startWorker({ backendUrl: backend.url, logger: recordingLogger(lines) });
    assert.notEqual(bridge.threadId, threadId, 'not this thread');
    assert.ok(liveWorkerThreadIds().includes(bridge.threadId));
    // Its young generation is capped, or V8 would grow it to 48 MB of the extension host's memory.
    assert.equal(bridge.resourceLimits.maxYoungGenerationSizeMb, BRIDGE_WORKER_YOUNG_GENERATION_MB);
    const health = (await (await fetch(`${bridge.url}/healthz`)).json()) as { backend: string };
    assert.equal(health.backend, backend.url);
    assert.ok(lines.some((line) => line.level === 'info' && line.message === `listening on ${bridge.url}`), JSON.stringify(lines));
    await bridge.close();
    assert.ok(!liveWorkerThreadIds().includes(bridge.threadId), 'the thread has ended');
    await assert.rejects(fetch(`${bridge.url}/healthz`));
    await bridge.close();
  });

  it('hands each turn to a store on this thread: the same lowered request as in-process, redacted, its shared messages kept once', async () => {
    const backend = await startBackend();
    const events: BridgeTrafficEvent[] = [];
    const store = new TrafficStore();
    const bridge = await startWorker({
      backendUrl: backend.url,
      getSecrets: () => [SECRET],
      onTraffic: (event) => {
        events.push(event);
        store.apply(event);
      },
    });
    const reference = await startTestBridge({ backendUrl: backend.url });
    cleanups.push(() => reference.close());

    const text = `fix the test; my key is ${SECRET}`;
    assert.equal(await sendTurn(bridge.url, text), 200);
    assert.equal(await sendTurn(reference.url, text), 200);
    await waitUntil(() => store.getSummaries().some((summary) => summary.status === 'completed'), 'the end of the first turn on this thread');

    const start = events.find((event) => event.type === 'exchange-start');
    assert.ok(start && 'encodedRequest' in start && !('loweredRequest' in start), 'the start arrives encoded, not as objects');
    const [summary] = store.getSummaries();
    assert.ok(summary);
    const inProcess = reference.traffic.find((event): event is ExchangeStartEvent => event.type === 'exchange-start');
    assert.ok(inProcess);
    const expected = redactSecretsInValue(inProcess.loweredRequest, [SECRET]);
    assert.deepEqual(store.getLoweredRequestValue(summary.id), expected);
    assert.match(JSON.stringify(expected), new RegExp(REDACTED.replace(/[[\]]/g, '\\$&')));
    assert.doesNotMatch(JSON.stringify(store.getLoweredRequestValue(summary.id)), new RegExp(SECRET));
    assert.equal(summary.loweredRequestBytes, Buffer.byteLength(JSON.stringify(expected)));

    // A second turn resends the same history: its messages and tools are the pool's, not new copies.
    const bytesAfterOne = store.getStats().retainedBodyBytes;
    assert.equal(await sendTurn(bridge.url, text), 200);
    await waitUntil(() => store.getSummaries().filter((each) => each.status === 'completed').length === 2, 'the end of the second turn');
    const headBytes = store.getStats().retainedBodyBytes - bytesAfterOne;
    assert.ok(headBytes > 0 && headBytes < 1_000, `only the second head is new (${headBytes} bytes)`);
    const ends = events.filter((event) => event.type === 'exchange-end');
    assert.equal(ends.length, 2);
  });

  it('applies new secrets to the next request: the token it requires and what it redacts', async () => {
    const backend = await startBackend();
    let token = 'ffb_first-token';
    let secrets = [SECRET];
    const store = new TrafficStore();
    const bridge = await startWorker({ backendUrl: backend.url, getToken: () => token, getSecrets: () => secrets, onTraffic: (event) => store.apply(event) });
    assert.equal(await sendTurn(bridge.url, 'first', { authorization: 'Bearer ffb_first-token' }), 200);

    token = 'ffb_second-token';
    const later = 'sk-added-later-9876543210';
    secrets = [SECRET, later];
    bridge.refreshSecrets();
    assert.equal(await sendTurn(bridge.url, 'old token', { authorization: 'Bearer ffb_first-token' }), 401);
    assert.equal(await sendTurn(bridge.url, `new token, new secret ${later}`, { authorization: 'Bearer ffb_second-token' }), 200);
    await waitUntil(() => store.getSummaries().filter((summary) => summary.status === 'completed').length === 2, 'both accepted turns on this thread');
    const second = store.getSummaries().filter((summary) => summary.status === 'completed')[1];
    assert.ok(second);
    const request = JSON.stringify(store.getLoweredRequestValue(second.id));
    assert.match(request, /new token, new secret \[redacted\]/);
    assert.doesNotMatch(request, new RegExp(later));
  });

  it('a taken port fails with the same message and code as the bridge on this thread', async () => {
    const threadsBefore = liveWorkerThreadIds();
    const blocker = await occupyPort();
    cleanups.push(() => new Promise((resolve) => blocker.close(() => resolve())));
    const address = blocker.address();
    assert.ok(address && typeof address === 'object');
    const inProcess = await startBridgeServer({ backendUrl: 'http://127.0.0.1:9/v1', port: address.port }).catch((error: unknown) => error);
    const inWorker = await startBridgeInWorker({ backendUrl: 'http://127.0.0.1:9/v1', port: address.port, workerScript: bridgeWorkerScript() }).catch((error: unknown) => error);
    assert.ok(inProcess instanceof Error && inWorker instanceof Error);
    assert.equal(inWorker.message, `port ${address.port} on 127.0.0.1 is already in use; choose another port (0 picks a free one)`);
    assert.equal(inWorker.message, inProcess.message);
    assert.equal((inWorker.cause as { code?: unknown }).code, 'EADDRINUSE');
    await waitUntil(() => liveWorkerThreadIds().length === threadsBefore.length, 'the failed worker to end');
  });

  it('a worker that dies is reported to onCrash and the log, and close() afterwards resolves', async () => {
    const script = writeCrashingWorkerScript('bridge bug: out of cheese');
    const lines: LogLine[] = [];
    const crashes: Error[] = [];
    const bridge = await startBridgeInWorker({ backendUrl: 'http://127.0.0.1:9/v1', workerScript: script, logger: recordingLogger(lines), onCrash: (error) => crashes.push(error) });
    await waitUntil(() => crashes.length === 1, 'the crash to be reported');
    assert.match(crashes[0]!.message, /worker thread stopped \(Error: bridge bug: out of cheese\); the bridge no longer answers/);
    assert.ok(lines.some((line) => line.level === 'error' && line.message === crashes[0]!.message));
    await bridge.close();
    assert.ok(!liveWorkerThreadIds().includes(bridge.threadId));
  });

  it('follows another window\'s bridge in a worker: starts arrive encoded and redacted with this window\'s secrets; the end of the stream ends the thread', async () => {
    const backend = await startBackend();
    const token = 'ffb_shared-token';
    const followed = await startBridgeServer({ backendUrl: backend.url, getToken: () => token });
    let followedClosed = false;
    cleanups.push(async () => {
      if (!followedClosed) await followed.close();
    });
    const threadsBefore = liveWorkerThreadIds();
    const store = new TrafficStore();
    const starts: BridgeTrafficEvent[] = [];
    let endReason: string | null = null;
    let opened = false;
    const follower = followBridgeTrafficInWorker(
      followed.url,
      token,
      {
        onEvent: (event) => {
          if (event.type === 'exchange-start') starts.push(event);
          store.apply(event);
        },
        onOpen: () => (opened = true),
        onEnd: (reason) => (endReason = reason),
      },
      { getSecrets: () => [SECRET], workerScript: bridgeWorkerScript() },
    );
    cleanups.push(() => follower.stop());
    await waitUntil(() => opened, 'the traffic stream to open');
    assert.equal(liveWorkerThreadIds().length, threadsBefore.length + 1, 'the follower runs in a thread of its own');
    assert.equal(await sendTurn(followed.url, `followed, key ${SECRET}`, { authorization: `Bearer ${token}` }), 200);
    await waitUntil(() => store.getSummaries().some((summary) => summary.status === 'completed'), 'the followed round trip on this thread');
    assert.ok(starts[0] && 'encodedRequest' in starts[0]);
    const request = JSON.stringify(store.getLoweredRequestValue(store.getSummaries()[0]!.id));
    assert.match(request, /followed, key \[redacted\]/);

    await followed.close();
    followedClosed = true;
    await waitUntil(() => endReason !== null, 'the follower to hear the end');
    assert.match(endReason ?? '', /the bridge ended the stream/);
    await waitUntil(() => liveWorkerThreadIds().length === threadsBefore.length, 'the follower\'s thread to end');
  });

  it('a missing worker script is a clear start error', async () => {
    await assert.rejects(startBridgeInWorker({ backendUrl: 'http://127.0.0.1:9/v1', workerScript: join(makeTempDir('freeform-bridge-none-'), 'bridge-worker.js') }), /worker script .*bridge-worker\.js is missing \(npm run build writes it\)/);
  });
});
