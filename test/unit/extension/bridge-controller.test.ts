import assert from 'node:assert/strict';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { after, describe, it } from 'node:test';
import { createSilentLogger } from '../../../src/core/logger.ts';
import type { BridgeTrafficEvent } from '../../../src/server/start-event-encoding.ts';
import { BridgeController, BridgeStartError, type BridgeStatus } from '../../../src/extension/bridge-controller.ts';
import { buildCodexCommand } from '../../../src/extension/codex-command.ts';
import { startTestBridge } from '../../support/bridge-harness.ts';
import { bridgeWorkerScript, liveWorkerThreadIds, writeCrashingWorkerScript } from '../../support/bridge-worker-script.ts';
import { createTestBridgeSettings, createTestWindow } from '../../support/window-controller.ts';
import { startMockBackend, type MockBackend } from '../../../mock-backend/create-mock-backend.ts';
import { racePortSquatter } from '../../support/port-squatter.ts';

// The controller has no `vscode` import, so its lifecycle rules run here in plain Node; the real
// extension host tier (test/vscode) covers the wiring around it.

const TOKEN = 'ffb_test-token-0123456789';

const createSettings = createTestBridgeSettings;

/** `memory` stands for VS Code's global state: windows that share it share the remembered port. */
function createController(
  remembered?: number,
  memory: { port: number | undefined } = { port: remembered },
  token = TOKEN,
): { controller: BridgeController; memory: { port: number | undefined }; statuses: BridgeStatus['kind'][] } {
  const controller = new BridgeController({
    logger: createSilentLogger(),
    getBackendApiKey: () => null,
    getSecretValues: () => [token],
    getBridgeToken: () => token,
    bridgeWorkerScript: bridgeWorkerScript(),
    portMemory: {
      get: () => memory.port,
      set: async (port) => {
        memory.port = port;
      },
    },
  });
  const statuses: BridgeStatus['kind'][] = [];
  controller.onDidChangeStatus((status) => statuses.push(status.kind));
  return { controller, memory, statuses };
}

function occupyPort(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function portOf(server: Server): number {
  const address = server.address();
  assert.ok(address && typeof address === 'object');
  return address.port;
}

describe('BridgeController', () => {
  const blockers: Server[] = [];
  after(() => {
    for (const blocker of blockers) blocker.close();
  });

  it('starts on a free port, remembers it, requires the token and stops', async () => {
    const { controller, memory, statuses } = createController();
    const result = await controller.start(createSettings());
    assert.equal(memory.port, result.port);
    assert.equal((await fetch(`${result.url}/healthz`)).status, 200);
    assert.equal((await fetch(`${result.url}/v1/models`)).status, 401);
    await controller.stop();
    assert.deepEqual(statuses, ['starting', 'on', 'off']);
    await assert.rejects(fetch(`${result.url}/healthz`));
  });

  it('port 0 reuses the remembered port, and falls back to a new one when it is taken', async () => {
    const blocker = await occupyPort();
    blockers.push(blocker);
    const { controller, memory } = createController(portOf(blocker));
    const result = await controller.start(createSettings());
    assert.notEqual(result.port, portOf(blocker));
    assert.equal(result.replacedRememberedPort, portOf(blocker));
    assert.equal(memory.port, result.port);
    await controller.stop();
  });

  it('an explicit port in use fails with reason port-in-use and the status says error', async () => {
    const blocker = await occupyPort();
    blockers.push(blocker);
    const { controller } = createController();
    const failure = await controller.start(createSettings({ port: portOf(blocker) })).catch((error: unknown) => error);
    assert.ok(BridgeStartError.is(failure));
    assert.equal(failure.reason, 'port-in-use');
    assert.equal(failure.keptPrevious, false);
    assert.equal(controller.getStatus().kind, 'error');
    assert.equal(controller.getLastStartFailure()?.port, portOf(blocker));
  });

  it('a bridge whose worker thread dies leaves the status in error with the reason, and stop() afterwards is clean', async () => {
    const controller = new BridgeController({
      logger: createSilentLogger(),
      getBackendApiKey: () => null,
      getSecretValues: () => [TOKEN],
      getBridgeToken: () => TOKEN,
      bridgeWorkerScript: writeCrashingWorkerScript('bridge bug: lost its socket'),
      portMemory: { get: () => undefined, set: async () => undefined },
    });
    await controller.start(createSettings());
    for (let attempt = 0; attempt < 400 && controller.getStatus().kind === 'on'; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 25));
    const status = controller.getStatus();
    assert.equal(status.kind, 'error');
    assert.match(status.kind === 'error' ? status.message : '', /^the bridge stopped unexpectedly: the bridge's worker thread stopped \(Error: bridge bug: lost its socket\)/);
    assert.equal(controller.getBridgeThreadId(), null);
    await controller.stop();
    assert.equal(controller.getStatus().kind, 'off');
  });

  it('runs the bridge in a worker thread, not on the thread that started it', async () => {
    const { controller } = createController();
    await controller.start(createSettings());
    const bridgeThread = controller.getBridgeThreadId();
    assert.ok(bridgeThread !== null && bridgeThread > 0, `thread ${bridgeThread}`);
    assert.ok(liveWorkerThreadIds().includes(bridgeThread));
    // stop() is what deactivate() runs: the thread is gone when it resolves.
    await controller.stop();
    assert.equal(controller.getBridgeThreadId(), null);
    assert.ok(!liveWorkerThreadIds().includes(bridgeThread));
  });

  it('a restart onto a taken port keeps the running bridge', async () => {
    const blocker = await occupyPort();
    blockers.push(blocker);
    const { controller } = createController();
    const first = await controller.start(createSettings());
    const failure = await controller.restart(createSettings({ port: portOf(blocker) })).catch((error: unknown) => error);
    assert.ok(BridgeStartError.is(failure) && failure.keptPrevious);
    assert.deepEqual(controller.getStatus(), { kind: 'on', url: first.url, port: first.port, backendUrl: 'http://127.0.0.1:9/v1' });
    assert.equal((await fetch(`${first.url}/healthz`)).status, 200);
    await controller.stop();
  });

  it('a restart with a new backend serves it on the same remembered port', async () => {
    const { controller } = createController();
    const first = await controller.start(createSettings());
    const second = await controller.restart(createSettings({ backendUrl: 'http://127.0.0.1:10/v1' }));
    assert.equal(second?.port, first.port);
    const health = (await (await fetch(`${first.url}/healthz`)).json()) as { backend: string };
    assert.equal(health.backend, 'http://127.0.0.1:10/v1');
    await controller.stop();
  });

  it('a restart with an invalid backend URL keeps the running bridge', async () => {
    const { controller } = createController();
    const first = await controller.start(createSettings());
    const failure = await controller.restart(createSettings({ backendUrl: 'htp:/typo' })).catch((error: unknown) => error);
    assert.ok(BridgeStartError.is(failure) && failure.reason === 'invalid-backend-url' && failure.keptPrevious);
    assert.equal(controller.getStatus().kind, 'on');
    assert.equal((await fetch(`${first.url}/healthz`)).status, 200);
    await controller.stop();
  });

  it('refuses an invalid backend URL as the setting it is', async () => {
    const { controller } = createController();
    const failure = await controller.start(createSettings({ backendUrl: 'localhost:8000' })).catch((error: unknown) => error);
    assert.ok(BridgeStartError.is(failure));
    assert.equal(failure.reason, 'invalid-backend-url');
  });
});

describe('buildCodexCommand', () => {
  it('is plain `codex -p` without a CODEX_HOME setting', () => {
    assert.equal(buildCodexCommand('freeform-bridge', null), 'codex -p freeform-bridge');
  });

  it('sets CODEX_HOME for the one command, quoted for the shell', () => {
    assert.equal(buildCodexCommand('local', "/tmp/it's here", 'linux'), `CODEX_HOME='/tmp/it'\\''s here' codex -p local`);
    assert.equal(buildCodexCommand('local', 'C:\\codex', 'win32').startsWith("$env:CODEX_HOME='"), true);
  });
});


/**
 * Several VS Code windows, one bridge: each window's extension host has its own controller. Here two
 * (and three) controllers share one process, the way two windows share the global state (the
 * remembered port) and the secret storage (the token), against a real bridge and a mock backend.
 */

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function createWindow(backend: MockBackend, portMemory: { port: number | undefined }) {
  const window = createTestWindow({ token: TOKEN, backendUrl: backend.url, portMemory });
  cleanups.push(() => window.controller.stop());
  return window;
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

function ends(traffic: readonly BridgeTrafficEvent[]): string[] {
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
    // The bridge runs in a worker thread: its traffic reaches the window's thread after the answer.
    await waitFor('both windows to see the round trip', () => ends(second.traffic).length === 1 && ends(first.traffic).length === 1);
    assert.deepEqual(ends(second.traffic), ends(first.traffic));
    assert.deepEqual(second.controller.getCounts(), first.controller.getCounts());

    // The first window closes: the second runs the bridge itself, on the port Codex's config names.
    await first.controller.stop();
    await waitFor('the second window to take over', () => second.takeOvers.length === 1);
    assert.deepEqual([second.takeOvers[0]!.port, second.takeOvers[0]!.attachedTo, second.takeOvers[0]!.replacedRememberedPort], [started.port, null, null]);
    const afterTakeOver = statusOf(second.controller);
    assert.ok(afterTakeOver.kind === 'on' && afterTakeOver.sharedFrom === undefined && afterTakeOver.port === started.port, JSON.stringify(afterTakeOver));
    assert.equal(await postTurn(started.url, 'still there'), 200);
    await waitFor('the window that took over to see its round trip', () => ends(second.traffic).length === 2);

    // A window opened now attaches to the bridge that took over.
    const third = createWindow(backend, memory);
    assert.equal((await third.controller.start(third.settings)).attachedTo, process.pid);
    assert.equal((await third.controller.stop(), statusOf(second.controller).kind), 'on', 'leaving a shared bridge does not stop it');
  });

  it('a program that wins the port when the followed bridge goes away is never sent the token, and the window does not follow it', async () => {
    const backend = await startBackend();
    const memory = { port: undefined as number | undefined };
    const first = createWindow(backend, memory);
    const second = createWindow(backend, memory);
    const started = await first.controller.start(first.settings);
    assert.equal((await second.controller.start(second.settings)).attachedTo, process.pid);

    // Waits on the port, retrying the bind every millisecond, as a hostile local program would.
    const squatting = racePortSquatter(started.port, () => second.takeOvers.length === 0);
    await first.controller.stop();
    const squatter = await squatting;
    if (squatter !== null) cleanups.push(() => squatter.close());
    await waitFor('the second window to settle', () => second.takeOvers.length === 1);
    const status = statusOf(second.controller);
    assert.ok(status.kind === 'on' && status.sharedFrom === undefined, `never "on, shared" with the port's holder: ${JSON.stringify(status)}`);
    if (squatter !== null) {
      assert.equal(second.takeOvers[0]!.replacedRememberedPort, started.port, 'the unverified holder of the port is named as a port to leave');
      assert.notEqual(second.takeOvers[0]!.port, started.port);
      for (const seen of squatter.harvested()) assert.ok(!seen.includes(TOKEN), `the program on the port saw the token in ${seen}`);
    }
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
    const impostor: HttpServer = createHttpServer((_request, response) => {
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
      assert.match(error.message, /in use by another program \(it could not prove it knows the bridge token .*the token was not sent to it\)/);
      return true;
    });
  });
});
