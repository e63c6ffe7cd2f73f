/**
 * The extension in a real VS Code extension host: commands, the bridge (in a worker thread), the status
 * bar, settings, secrets and the Codex config, each checked through what a user would observe
 * (HTTP on 127.0.0.1, files on disk) plus the test-only state accessor that activate() returns.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { FreeformBridgeTestApi } from '../../../src/extension/test-api.ts';
import { FAKE_MODEL, startFakeBackend, type FakeBackend } from './fake-backend.ts';
import { responsesRequest, updateSetting, waitFor } from './suite-support.ts';

const EXTENSION_ID = 'freeform-bridge.freeform-bridge';
const COMMANDS = [
  'freeformBridge.start',
  'freeformBridge.stop',
  'freeformBridge.toggle',
  'freeformBridge.showTraffic',
  'freeformBridge.writeCodexConfig',
  'freeformBridge.restoreCodexConfig',
  'freeformBridge.setBackendApiKey',
  'freeformBridge.copyCodexCommand',
  'freeformBridge.showLog',
];

type State = ReturnType<FreeformBridgeTestApi['getState']>;

async function isRefused(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(3_000) });
    return false;
  } catch (error) {
    return (error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';
  }
}

/**
 * A port held by another program: a TCP server that accepts and never answers. The extension's
 * identity check connects to it; a plain close() would then wait for that connection forever, so
 * closeBlocker() cuts the connections too.
 */
function occupyPort(): Promise<Server> {
  return new Promise((resolveServer, reject) => {
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      heldConnections.set(server, [...(heldConnections.get(server) ?? []), socket]);
    });
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolveServer(server));
  });
}

const heldConnections = new WeakMap<Server, Socket[]>();

function closeBlocker(server: Server): Promise<void> {
  return new Promise<void>((resolveClosed) => {
    server.close(() => resolveClosed());
    for (const socket of heldConnections.get(server) ?? []) socket.destroy();
  });
}

function portOf(server: Server): number {
  const address = server.address();
  assert.ok(address && typeof address === 'object');
  return address.port;
}

describe('Freeform Bridge in a real VS Code extension host', function () {
  let api: FreeformBridgeTestApi;
  let backend: FakeBackend;
  let otherBackend: FakeBackend;
  let codexHome: string;
  const state = (): State => api.getState();
  const waitForState = (accept: (value: State) => boolean, what: string): Promise<State> => waitFor(state, accept, what);

  before(async function () {
    backend = await startFakeBackend('pong');
    otherBackend = await startFakeBackend('pong from the other backend');
    codexHome = mkdtempSync(join(tmpdir(), 'freeform-bridge-codex-home-'));
    await updateSetting('backendUrl', backend.url);
    await updateSetting('codexHome', codexHome);
    const extension = vscode.extensions.getExtension<FreeformBridgeTestApi>(EXTENSION_ID);
    assert.ok(extension, `extension ${EXTENSION_ID} is not installed in this host`);
    const exported = await extension.activate();
    assert.ok(exported, 'activate() returns the test API in ExtensionMode.Test');
    api = exported;
    console.log(`      VS Code ${vscode.version} (${vscode.env.appName}), extension host on Node ${process.version}`);
  });

  after(async () => {
    await vscode.commands.executeCommand('freeformBridge.stop');
    for (const key of ['backendUrl', 'codexHome', 'port']) await updateSetting(key, undefined);
    await backend?.close();
    await otherBackend?.close();
    rmSync(codexHome, { recursive: true, force: true });
  });

  it('activates only on its commands or at startup for autoStart, never with "*"', () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    const activationEvents = (extension?.packageJSON as { activationEvents?: string[] }).activationEvents ?? [];
    assert.ok(!activationEvents.includes('*'), `activationEvents: ${activationEvents.join(', ')}`);
    assert.equal(vscode.workspace.getConfiguration('freeformBridge').get('autoStart'), false);
  });

  it('registers every command', async () => {
    const registered = new Set(await vscode.commands.getCommands(true));
    assert.deepEqual(COMMANDS.filter((command) => !registered.has(command)), []);
  });

  it('is off until started, and the status bar says so', () => {
    const current = state();
    assert.equal(current.status, 'off');
    assert.match(current.statusBarText, /off/);
    assert.ok(current.statusBarTooltip.includes(backend.url), `tooltip names the backend: ${current.statusBarTooltip}`);
  });

  it('Start serves /healthz on 127.0.0.1 and requires the bridge token on /v1', async () => {
    await vscode.commands.executeCommand('freeformBridge.start');
    const current = await waitForState((value) => value.status === 'on', 'the bridge to run');
    assert.match(current.url ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(current.port !== null && current.port > 0);
    assert.ok(current.statusBarText.includes(`:${current.port}`), `status bar: ${current.statusBarText}`);
    assert.ok(current.statusBarTooltip.includes(backend.url) && current.statusBarTooltip.includes(String(current.port)), `tooltip: ${current.statusBarTooltip}`);

    const health = await fetch(`${current.url}/healthz`);
    assert.equal(health.status, 200);
    const healthBody = (await health.json()) as { status: string; backend: string };
    assert.equal(healthBody.status, 'ok');
    assert.equal(healthBody.backend, backend.url);

    const withoutToken = await fetch(`${current.url}/v1/models`);
    assert.equal(withoutToken.status, 401);
    const wrongToken = await fetch(`${current.url}/v1/models`, { headers: { authorization: 'Bearer not-the-token' } });
    assert.equal(wrongToken.status, 401);
    const withToken = await fetch(`${current.url}/v1/models`, { headers: { authorization: `Bearer ${api.getBridgeToken()}` } });
    assert.equal(withToken.status, 200);
    assert.equal(((await withToken.json()) as { data: Array<{ id: string }> }).data[0]?.id, FAKE_MODEL);
  });

  it('stores the backend API key in SecretStorage and sends it upstream, never into settings', async () => {
    const key = `sk-test-${Date.now()}-secret`;
    await vscode.commands.executeCommand('freeformBridge.setBackendApiKey', key);
    const { url } = state();
    const before = state().roundTrips;
    const response = await fetch(`${url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${api.getBridgeToken()}` },
      body: responsesRequest('ping'),
    });
    assert.equal(response.status, 200, await response.clone().text());
    const body = (await response.json()) as { status: string; output: Array<{ type: string; content?: Array<{ text: string }> }> };
    assert.equal(body.status, 'completed');
    assert.equal(body.output.find((item) => item.type === 'message')?.content?.[0]?.text, 'pong');

    const upstream = backend.requests.filter((request) => request.path === '/v1/chat/completions').at(-1);
    assert.ok(upstream, 'the request reached the backend');
    assert.equal(upstream.headers.authorization, `Bearer ${key}`);
    assert.ok(!JSON.stringify(vscode.workspace.getConfiguration('freeformBridge')).includes(key), 'the key is not in the settings');

    const counted = await waitForState((value) => value.roundTrips === before + 1, 'the round trip to be counted');
    assert.match(counted.statusBarText, new RegExp(`\\$\\(arrow-swap\\) ${before + 1}`));
    assert.equal(counted.trafficLines.length, before + 1);
  });

  it('serves from a worker thread, and the panel\'s store still gets each round trip, its lowered request redacted', async () => {
    const { url, bridgeThreadId } = await waitForState((value) => value.status === 'on', 'the bridge to run');
    assert.ok(bridgeThreadId !== null && bridgeThreadId > 0, `the bridge runs on thread ${bridgeThreadId}, not the extension host's (0)`);
    const key = `sk-worker-${Date.now()}-secret`;
    await vscode.commands.executeCommand('freeformBridge.setBackendApiKey', key);
    const before = state().trafficPanel.exchanges;
    const marker = `worker-thread-check-${Date.now()}`;
    const response = await fetch(`${url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${api.getBridgeToken()}` },
      body: responsesRequest(`${marker}: my key is ${key}`),
    });
    assert.equal(response.status, 200, await response.clone().text());
    await response.text();
    // The new key reached the worker (it runs on its own thread and cannot read the secret storage).
    assert.equal(backend.requests.filter((request) => request.path === '/v1/chat/completions').at(-1)?.headers.authorization, `Bearer ${key}`);
    const stored = await waitForState((value) => value.trafficPanel.exchanges === before + 1, 'the round trip to reach the panel\'s store');
    assert.ok(stored.trafficPanel.retainedBodyBytes > 0);

    const folder = mkdtempSync(join(tmpdir(), 'freeform-bridge-export-'));
    try {
      const file = join(folder, 'traffic.jsonl');
      await vscode.commands.executeCommand('freeformBridge.exportTraffic', { uri: file });
      const lines = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { loweredRequest: { messages: Array<{ role: string; content: unknown }> } | null });
      const exported = lines.find((line) => JSON.stringify(line.loweredRequest).includes(marker));
      assert.ok(exported?.loweredRequest, 'the round trip is exported with its lowered request');
      const user = exported.loweredRequest.messages.find((message) => message.role === 'user');
      assert.equal(user?.content, `${marker}: my key is [redacted]`);
      assert.ok(!readFileSync(file, 'utf8').includes(key));
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('Stop closes the server and aborts calls in flight', async () => {
    const { url } = state();
    const chatRequests = (): number => backend.requests.filter((request) => request.path === '/v1/chat/completions').length;
    const earlier = chatRequests();
    backend.holdChatCompletions = true;
    try {
      const inFlight = fetch(`${url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${api.getBridgeToken()}` },
        body: responsesRequest('this answer never comes'),
      }).then(
        async (response) => ({ status: response.status, body: await response.text() }),
        (error: unknown) => ({ status: 0, body: String(error) }),
      );
      await waitFor(chatRequests, (count) => count > earlier, 'the held request to reach the backend');
      await vscode.commands.executeCommand('freeformBridge.stop');
      await waitFor(() => backend.abortedRequests, (count) => count === 1, 'the upstream call to be aborted');
      // The bridge answers the caller why (Codex shows it) rather than just cutting the socket.
      const answer = await inFlight;
      assert.equal(answer.status, 503, answer.body);
      assert.match(answer.body, /stopped while this request was in flight/);
    } finally {
      backend.holdChatCompletions = false;
    }
    const current = state();
    assert.equal(current.status, 'off');
    assert.match(current.statusBarText, /off/);
    assert.ok(await isRefused(`${url}/healthz`), 'nothing listens on the old port');
  });

  it('Toggle starts and stops, and port 0 gets the remembered port back', async () => {
    const { statusBarText: offText } = state();
    await vscode.commands.executeCommand('freeformBridge.toggle');
    const on = await waitForState((value) => value.status === 'on', 'toggle to start the bridge');
    assert.notEqual(on.statusBarText, offText);
    assert.equal((await fetch(`${on.url}/healthz`)).status, 200);
    await vscode.commands.executeCommand('freeformBridge.toggle');
    const off = await waitForState((value) => value.status === 'off', 'toggle to stop the bridge');
    assert.equal(off.statusBarText, offText);
    await vscode.commands.executeCommand('freeformBridge.toggle');
    const again = await waitForState((value) => value.status === 'on', 'toggle to start the bridge again');
    assert.equal(again.port, on.port, 'the remembered port is reused so a written Codex profile stays valid');
  });

  it('changing freeformBridge.port restarts the server on the new port', async () => {
    const before = state();
    const placeholder = await occupyPort();
    const newPort = portOf(placeholder);
    await closeBlocker(placeholder);
    await updateSetting('port', newPort);
    const after = await waitForState((value) => value.status === 'on' && value.port === newPort, `the bridge to move to port ${newPort}`);
    assert.equal((await fetch(`${after.url}/healthz`)).status, 200);
    assert.ok(after.statusBarText.includes(`:${newPort}`), after.statusBarText);
    assert.ok(await isRefused(`${before.url}/healthz`), 'the old server is closed');
  });

  it('a port in use is reported, the running bridge is kept and the setting is not lost', async () => {
    const before = state();
    const blocker = await occupyPort();
    const blockedPort = portOf(blocker);
    try {
      await updateSetting('port', blockedPort);
      const current = await waitForState((value) => value.lastStartFailure !== null, 'the restart on the blocked port to fail');
      assert.equal(current.lastStartFailure?.reason, 'port-in-use');
      assert.equal(current.lastStartFailure?.port, blockedPort);
      assert.match(current.lastStartFailure?.message ?? '', new RegExp(`port ${blockedPort} .*already in use`));
      // The previous server keeps serving: a mistyped port never takes the working bridge away.
      assert.equal(current.status, 'on');
      assert.equal(current.port, before.port);
      assert.equal((await fetch(`${current.url}/healthz`)).status, 200);
      assert.equal(vscode.workspace.getConfiguration('freeformBridge').get('port'), blockedPort, 'the user\'s setting is kept');
    } finally {
      await closeBlocker(blocker);
      await updateSetting('port', undefined);
    }
  });

  it('a failed start shows the error state, and fixing the setting starts the bridge', async () => {
    await vscode.commands.executeCommand('freeformBridge.stop');
    const blocker = await occupyPort();
    const blockedPort = portOf(blocker);
    try {
      await updateSetting('port', blockedPort);
      await vscode.commands.executeCommand('freeformBridge.start');
      const failed = await waitForState((value) => value.status === 'error', 'the start to fail');
      assert.match(failed.errorMessage ?? '', new RegExp(`port ${blockedPort} .*already in use`));
      assert.match(failed.statusBarText, /error/);
      assert.ok(failed.statusBarTooltip.includes(`port ${blockedPort}`), failed.statusBarTooltip);
    } finally {
      await closeBlocker(blocker);
      await updateSetting('port', undefined);
    }
    const started = await waitForState((value) => value.status === 'on', 'the bridge to start once the port setting is fixed');
    assert.equal((await fetch(`${started.url}/healthz`)).status, 200);
  });

  it('changing freeformBridge.backendUrl restarts the server, which then uses the new backend', async () => {
    await waitForState((value) => value.status === 'on', 'the bridge to run');
    await updateSetting('backendUrl', otherBackend.url);
    const after = await waitForState((value) => value.status === 'on' && value.backendUrl === otherBackend.url, 'the bridge to use the other backend');
    const health = (await (await fetch(`${after.url}/healthz`)).json()) as { backend: string };
    assert.equal(health.backend, otherBackend.url);
    const models = await fetch(`${after.url}/v1/models`, { headers: { authorization: `Bearer ${api.getBridgeToken()}` } });
    assert.equal(models.status, 200);
    assert.ok(otherBackend.requests.some((request) => request.path === '/v1/models'), 'the other backend was asked');
    assert.ok(after.statusBarTooltip.includes(otherBackend.url), after.statusBarTooltip);
    await updateSetting('backendUrl', backend.url);
    await waitForState((value) => value.backendUrl === backend.url, 'the bridge to return to the first backend');
  });

  it('Show Live Traffic opens the traffic panel, whose script runs under its CSP', async () => {
    await vscode.commands.executeCommand('freeformBridge.showTraffic');
    await waitFor(
      () => vscode.window.tabGroups.all.flatMap((group) => group.tabs),
      (all) => all.some((tab) => tab.input instanceof vscode.TabInputWebview && tab.label === 'Freeform Bridge Traffic'),
      'the traffic panel tab',
    );
    // Only a script allowed by the nonce can post webview/ready; the host answers with the snapshot.
    const { trafficPanel } = await waitForState((value) => value.trafficPanel.readyCount > 0, 'the panel\'s script to say ready');
    assert.equal(trafficPanel.open, true);
  });

  it('Write Codex Config writes the profile with the token and the bridge URL, and a second run changes nothing', async () => {
    const { url } = await waitForState((value) => value.status === 'on', 'the bridge to run');
    const outcome = await vscode.commands.executeCommand<{ kind: string; files: string[] }>('freeformBridge.writeCodexConfig', {
      model: FAKE_MODEL,
      toolSurface: 'freeform',
      confirmed: true,
    });
    assert.equal(outcome?.kind, 'written', JSON.stringify(outcome));
    const profilePath = join(codexHome, 'freeform-bridge.config.toml');
    const profile = readFileSync(profilePath, 'utf8');
    assert.ok(profile.includes(`${url}/v1`), profile);
    assert.ok(profile.includes(`experimental_bearer_token = "${api.getBridgeToken()}"`), 'the profile carries the bridge token');
    assert.match(profile, new RegExp(`model = "${FAKE_MODEL}"`));
    const firstWrite = statSync(profilePath).mtimeMs;

    const again = await vscode.commands.executeCommand<{ kind: string }>('freeformBridge.writeCodexConfig', { model: FAKE_MODEL, toolSurface: 'freeform', confirmed: true });
    assert.equal(again?.kind, 'unchanged');
    assert.equal(statSync(profilePath).mtimeMs, firstWrite);
    assert.equal(readFileSync(profilePath, 'utf8'), profile);
  });

  it('Write Codex Config refuses a malformed existing profile and leaves it untouched', async () => {
    const profilePath = join(codexHome, 'freeform-bridge.config.toml');
    const broken = 'model = "unterminated\n[model_providers.\n';
    writeFileSync(profilePath, broken);
    const outcome = await vscode.commands.executeCommand<{ kind: string; message?: string }>('freeformBridge.writeCodexConfig', {
      model: FAKE_MODEL,
      toolSurface: 'freeform',
      confirmed: true,
    });
    assert.equal(outcome?.kind, 'refused', JSON.stringify(outcome));
    assert.equal(readFileSync(profilePath, 'utf8'), broken);
  });

  it('Write Codex Config offers the backend\'s models and the tool surfaces, and shows the diff before writing', async function () {
    // The offline runner picks in the workbench's quick picks; under test-electron nobody would.
    // The modal "Write" confirmation is skipped with `confirmed`: VS Code refuses modal dialogs during extension tests.
    if (process.env.FREEFORM_BRIDGE_VSCODE_UI_DRIVER !== '1') this.skip();
    this.timeout(60_000);
    const { url } = await waitForState((value) => value.status === 'on', 'the bridge to run');
    rmSync(join(codexHome, 'freeform-bridge.config.toml'), { force: true });
    rmSync(join(codexHome, 'freeform-bridge.model_catalog.json'), { force: true });
    const outcome = await vscode.commands.executeCommand<{ kind: string; previewed?: string[] }>('freeformBridge.writeCodexConfig', { confirmed: true });
    assert.equal(outcome?.kind, 'written', JSON.stringify(outcome));
    const profilePath = join(codexHome, 'freeform-bridge.config.toml');
    assert.deepEqual(outcome.previewed, [join(codexHome, 'freeform-bridge.model_catalog.json'), profilePath], 'each new file was shown as a diff first');
    const profile = readFileSync(profilePath, 'utf8');
    assert.ok(profile.includes(`${url}/v1`), profile);
    assert.match(profile, new RegExp(`model = "${FAKE_MODEL}"`), 'the model came from the backend\'s /v1/models');
    assert.match(profile, /model_context_window = 32768/, 'with the context window the backend reports');
    assert.match(profile, /model_catalog_json = "freeform-bridge.model_catalog.json"/, 'the default tool surface is freeform');
    const previews = vscode.window.tabGroups.all.flatMap((group) => group.tabs).filter((tab) => tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.scheme === 'freeform-bridge-preview');
    assert.deepEqual(previews.map((tab) => tab.label), [], 'the preview diffs are closed after writing');
  });

  it('Write Codex Config "also for the Codex extension" edits config.toml with a backup; Restore Codex Config puts it back byte for byte', async () => {
    const { url } = await waitForState((value) => value.status === 'on', 'the bridge to run');
    const configPath = join(codexHome, 'config.toml');
    const original = '# mine\r\nmodel = "gpt-5.5"\r\n\r\n[tui]\r\nnotifications = true\r\n';
    writeFileSync(configPath, original);
    const outcome = await vscode.commands.executeCommand<{ kind: string; files: string[] }>('freeformBridge.writeCodexConfig', {
      model: FAKE_MODEL,
      toolSurface: 'freeform',
      alsoForCodexExtension: true,
      confirmed: true,
    });
    assert.equal(outcome?.kind, 'written', JSON.stringify(outcome));
    const config = readFileSync(configPath, 'utf8');
    assert.ok(config.startsWith(`# mine\r\nmodel = "${FAKE_MODEL}"\r\nmodel_provider = "freeform-bridge"\r\n`), config);
    assert.ok(config.includes(`model_catalog_url = "${url}/v1/codex/models?tool_surface=freeform"`), config);
    assert.ok(config.includes(`experimental_bearer_token = "${api.getBridgeToken()}"`), 'the catalog fetch needs the bearer in experimental_bearer_token');
    const restored = await vscode.commands.executeCommand<{ kind: string; restored?: string }>('freeformBridge.restoreCodexConfig', { confirmed: true });
    assert.equal(restored?.kind, 'restored', JSON.stringify(restored));
    assert.deepEqual(readFileSync(configPath), Buffer.from(original, 'utf8'));
    const nothingLeft = await vscode.commands.executeCommand<{ kind: string; message?: string }>('freeformBridge.restoreCodexConfig', { confirmed: true });
    assert.equal(nothingLeft?.kind, 'refused');
    assert.match(nothingLeft?.message ?? '', /nothing to restore/);
    rmSync(configPath, { force: true });
  });

  it('Copy Codex Command names the profile and the configured CODEX_HOME', async () => {
    const command = await vscode.commands.executeCommand<string>('freeformBridge.copyCodexCommand');
    assert.equal(command, `CODEX_HOME='${codexHome}' codex -p freeform-bridge`);
  });
});
