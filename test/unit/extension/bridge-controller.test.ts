import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, describe, it } from 'node:test';
import { createSilentLogger } from '../../../src/core/logger.ts';
import { BridgeController, BridgeStartError, type BridgeStatus } from '../../../src/extension/bridge-controller.ts';
import { buildCodexCommand } from '../../../src/extension/codex-command.ts';
import type { BridgeSettings } from '../../../src/extension/settings.ts';

// The controller has no `vscode` import, so its lifecycle rules run here in plain Node; the real
// extension host tier (test/vscode) covers the wiring around it.

const TOKEN = 'ffb_test-token-0123456789';

function createSettings(overrides: Partial<BridgeSettings> = {}): BridgeSettings {
  return {
    backendUrl: 'http://127.0.0.1:9/v1',
    port: 0,
    model: null,
    strategy: 'function_bridge',
    keepaliveSeconds: 15,
    autoStart: false,
    codexHome: null,
    codexProfile: 'freeform-bridge',
    ...overrides,
  };
}

function createController(remembered?: number): { controller: BridgeController; memory: { port: number | undefined }; statuses: BridgeStatus['kind'][] } {
  const memory = { port: remembered };
  const controller = new BridgeController({
    logger: createSilentLogger(),
    getBackendApiKey: () => null,
    getSecretValues: () => [TOKEN],
    getBridgeToken: () => TOKEN,
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
