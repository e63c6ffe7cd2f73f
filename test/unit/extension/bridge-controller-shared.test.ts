import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, describe, it } from 'node:test';
import { createSilentLogger } from '../../../src/core/logger.ts';
import type { TrafficEvent } from '../../../src/core/traffic-event.ts';
import { BridgeController, BridgeStartError, type BridgeStatus, type StartResult } from '../../../src/extension/bridge-controller.ts';
import type { BridgeSettings } from '../../../src/extension/settings.ts';
import { startTestBridge } from '../../support/bridge-harness.ts';
import { startMockBackend, type MockBackend } from '../../support/mock-backend/create-mock-backend.ts';

/**
 * Several VS Code windows, one bridge: each window's extension host has its own controller. Here two
 * (and three) controllers share one process, the way two windows share the global state (the
 * remembered port) and the secret storage (the token), against a real bridge and a mock backend.
 */

const TOKEN = 'ffb_shared-window-token';
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function createWindow(backend: MockBackend, sharedPortMemory: { port: number | undefined }, token = TOKEN) {
  const controller = new BridgeController({
    logger: createSilentLogger(),
    getBackendApiKey: () => null,
    getBridgeToken: () => token,
    portMemory: {
      get: () => sharedPortMemory.port,
      set: async (port) => {
        sharedPortMemory.port = port;
      },
    },
  });
  const traffic: TrafficEvent[] = [];
  controller.onTraffic((event) => traffic.push(event));
  const takeOvers: StartResult[] = [];
  controller.onDidTakeOver((result) => takeOvers.push(result));
  cleanups.push(() => controller.stop());
  const settings: BridgeSettings = {
    backendUrl: backend.url,
    port: 0,
    model: null,
    strategy: 'function_bridge',
    keepaliveSeconds: 15,
    autoStart: false,
    codexHome: null,
    codexProfile: 'freeform-bridge',
  };
  return { controller, traffic, takeOvers, settings };
}

async function waitFor(what: string, check: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt += 1) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.fail(`gave up waiting for ${what}`);
}

async function postTurn(url: string, text: string): Promise<number> {
  const response = await fetch(`${url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ model: 'qwen3-coder', input: text, stream: false }),
  });
  await response.text();
  return response.status;
}

function ends(traffic: readonly TrafficEvent[]): string[] {
  return traffic.filter((event) => event.type === 'exchange-end').map((event) => event.exchangeId);
}

function statusOf(controller: BridgeController): BridgeStatus {
  return controller.getStatus();
}

async function startBackend(): Promise<MockBackend> {
  const backend = await startMockBackend({ profile: 'vllm-hermes' });
  cleanups.push(() => backend.close());
  return backend;
}

describe('several windows, one bridge', () => {
  it('a second window attaches to the running bridge, sees the same round trips, and takes over on the same port when the first closes', async () => {
    const backend = await startBackend();
    const memory = { port: undefined as number | undefined };
    const first = createWindow(backend, memory);
    const second = createWindow(backend, memory);

    const started = await first.controller.start(first.settings);
    assert.equal(started.attachedTo, null);
    const attached = await second.controller.start(second.settings);
    assert.equal(attached.port, started.port, 'no second bridge on another port');
    assert.equal(attached.attachedTo, process.pid, 'attached to the bridge of the first "window"');
    const secondStatus = statusOf(second.controller);
    assert.ok(secondStatus.kind === 'on' && secondStatus.sharedFrom?.pid === process.pid, JSON.stringify(secondStatus));

    // One Codex turn through the shared port: both panels show it.
    assert.equal(await postTurn(started.url, 'hello'), 200);
    await waitFor('the attached window to see the round trip', () => ends(second.traffic).length === 1);
    assert.deepEqual(ends(second.traffic), ends(first.traffic));
    assert.deepEqual(second.controller.getCounts(), first.controller.getCounts());

    // The first window closes: the second runs the bridge itself, on the port Codex's config names.
    await first.controller.stop();
    await waitFor('the second window to take over', () => second.takeOvers.length === 1);
    assert.deepEqual([second.takeOvers[0]!.port, second.takeOvers[0]!.attachedTo, second.takeOvers[0]!.replacedRememberedPort], [started.port, null, null]);
    const afterTakeOver = statusOf(second.controller);
    assert.ok(afterTakeOver.kind === 'on' && afterTakeOver.sharedFrom === undefined && afterTakeOver.port === started.port, JSON.stringify(afterTakeOver));
    assert.equal(await postTurn(started.url, 'still there'), 200);
    assert.equal(ends(second.traffic).length, 2);

    // A window opened now attaches to the bridge that took over.
    const third = createWindow(backend, memory);
    assert.equal((await third.controller.start(third.settings)).attachedTo, process.pid);
    assert.equal((await third.controller.stop(), statusOf(second.controller).kind), 'on', 'leaving a shared bridge does not stop it');
  });

  it('with three windows, one takes over and the other follows it: still one bridge on the same port', async () => {
    const backend = await startBackend();
    const memory = { port: undefined as number | undefined };
    const windows = [createWindow(backend, memory), createWindow(backend, memory), createWindow(backend, memory)];
    const owner = await windows[0]!.controller.start(windows[0]!.settings);
    for (const window of windows.slice(1)) assert.equal((await window.controller.start(window.settings)).attachedTo, process.pid);
    await windows[0]!.controller.stop();
    await waitFor('both remaining windows to settle', () => windows.slice(1).every((window) => window.takeOvers.length === 1));
    const results = windows.slice(1).map((window) => window.takeOvers[0]!);
    assert.deepEqual(results.map((result) => result.port), [owner.port, owner.port]);
    assert.deepEqual(results.map((result) => result.attachedTo === null).sort(), [false, true], 'exactly one runs the bridge, the other follows it');
    const follower = windows.slice(1).find((window) => window.takeOvers[0]!.attachedTo !== null)!;
    assert.equal(await postTurn(owner.url, 'after the race'), 200);
    await waitFor('the follower to see the round trip', () => ends(follower.traffic).length === 1);
  });

  it('a bridge with another token, or a program that only looks like a bridge, is not attached to', async () => {
    const backend = await startBackend();
    const foreignBridge = await startTestBridge({ backendUrl: backend.url, getToken: () => 'someone-elses-token' });
    cleanups.push(() => foreignBridge.close());
    const window = createWindow(backend, { port: foreignBridge.port });
    const result = await window.controller.start(window.settings);
    assert.equal(result.attachedTo, null);
    assert.equal(result.replacedRememberedPort, foreignBridge.port, 'the remembered port is taken: a new one, and the config needs a rewrite');
    assert.notEqual(result.port, foreignBridge.port);
    await window.controller.stop();

    // Answers the identity route with the right shape but cannot compute the proof without the token.
    const impostor: Server = createServer((request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ name: 'freeform-bridge', version: '0.1.0', instanceId: 'x', pid: 1, backend: backend.url, proof: 'ab'.repeat(32) }));
    });
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => impostor.close(() => resolve())));
    const impostorPort = (impostor.address() as { port: number }).port;
    const explicit = createWindow(backend, { port: undefined });
    await assert.rejects(explicit.controller.start({ ...explicit.settings, port: impostorPort }), (error: unknown) => {
      assert.ok(BridgeStartError.is(error));
      assert.equal(error.reason, 'port-in-use');
      assert.match(error.message, /in use by another program \(it answers like a bridge but cannot prove it knows the token\)/);
      return true;
    });
  });
});
