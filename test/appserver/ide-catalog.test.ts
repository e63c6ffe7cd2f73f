import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chatRequests, codexSuiteTitle, loweredTool } from '../../harness/codex-session.ts';
import { textInput, trackAppServers, type AppServer } from './app-server-client.ts';
import { IDE_MODEL, IDE_PROVIDER_ID, startIdeSetup, type IdeSetup } from './ide-setup.ts';

/**
 * How app-server gets the bridge's catalog: with the bridge token and without one (the stand-in
 * bearer that makes Codex fetch at all), a token that no longer matches, and a bridge or backend that
 * is down when Codex starts, with and without the catalog Codex cached earlier.
 */

trackAppServers(after);

async function ourModels(server: AppServer): Promise<string[]> {
  const data = (await server.request('model/list', {})).data as Array<{ id: string }>;
  return data.map((model) => model.id).filter((id) => id === IDE_MODEL);
}

async function runTextTurn(setup: IdeSetup, server: AppServer): Promise<Record<string, unknown>> {
  const thread = (await server.request('thread/start', { cwd: setup.workspace, approvalPolicy: 'never', sandbox: 'workspace-write' })).thread as Record<string, unknown>;
  assert.deepEqual([thread.modelProvider, thread.model], [IDE_PROVIDER_ID, IDE_MODEL]);
  await server.request('turn/start', { threadId: thread.id, input: textInput('say hi') });
  const completed = await server.waitForNotification('turn/completed', (params) => params.threadId === thread.id);
  return completed.turn as Record<string, unknown>;
}

describe(codexSuiteTitle('app-server and the bridge\'s model catalog'), { timeout: 180_000 }, () => {
  it('with the bridge token: fetched, listed, and a turn goes through', async (context) => {
    const setup = await startIdeSetup({ surface: 'freeform', token: 'catalog-token' });
    context.after(() => setup.close());
    const server = setup.startAppServer();
    await server.initialize();
    assert.deepEqual(await ourModels(server), [IDE_MODEL]);
    assert.equal((await runTextTurn(setup, server)).status, 'completed');
    assert.ok(loweredTool(chatRequests(setup.backend)[0]!, 'apply_patch'));
  });

  it('without a bridge token: the stand-in bearer still makes Codex fetch the catalog', async (context) => {
    const setup = await startIdeSetup({ surface: 'freeform', token: null });
    context.after(() => setup.close());
    assert.match(readFileSync(join(setup.codexHome, 'config.toml'), 'utf8'), /^experimental_bearer_token = "freeform-bridge-needs-no-token"$/m);
    const server = setup.startAppServer();
    await server.initialize();
    assert.deepEqual(await ourModels(server), [IDE_MODEL]);
    assert.equal((await runTextTurn(setup, server)).status, 'completed');
    assert.ok(loweredTool(chatRequests(setup.backend)[0]!, 'apply_patch'));
  });

  it('a token that no longer matches gets no catalog (the bridge refuses it)', async (context) => {
    const setup = await startIdeSetup({ surface: 'freeform', token: 'the-real-token' });
    context.after(() => setup.close());
    const configPath = join(setup.codexHome, 'config.toml');
    writeFileSync(configPath, readFileSync(configPath, 'utf8').replace('"the-real-token"', '"a-stale-token"'));
    const server = setup.startAppServer();
    await server.initialize();
    assert.deepEqual(await ourModels(server), []);
  });

  it('the bridge down when Codex starts: the cached catalog keeps the model (and apply_patch) once the bridge is back on its port', async (context) => {
    const setup = await startIdeSetup({ surface: 'freeform', token: 'catalog-token' });
    context.after(() => setup.close());
    const first = setup.startAppServer();
    await first.initialize();
    assert.deepEqual(await ourModels(first), [IDE_MODEL]);
    await first.close();
    assert.ok(existsSync(join(setup.codexHome, 'models_cache.json')));

    const port = setup.port;
    await setup.stopBridge();
    const second = setup.startAppServer();
    await second.initialize();
    assert.deepEqual(await ourModels(second), [IDE_MODEL], 'the cached catalog is used while the bridge is down');
    const restarted = await setup.startBridge();
    assert.equal(restarted.port, port, 'the bridge came back on the port config.toml names');
    assert.equal((await runTextTurn(setup, second)).status, 'completed');
    assert.ok(loweredTool(chatRequests(setup.backend)[0]!, 'apply_patch'), 'apply_patch offered from the cached catalog');
  });

  it('no cache: the bridge down gives no model; the backend down gives a 503 the panel and the log see', async (context) => {
    const down = await startIdeSetup({ surface: 'freeform', token: 'catalog-token', bridgeDown: true });
    context.after(() => down.close());
    const server = down.startAppServer();
    await server.initialize();
    assert.deepEqual(await ourModels(server), []);

    const backendDown = await startIdeSetup({ surface: 'freeform', token: 'catalog-token' });
    context.after(() => backendDown.close());
    await backendDown.backend.close();
    // codex-config read the catalog through this bridge, which keeps that answer for a backend that
    // goes down; a fresh bridge on the same port has none.
    await backendDown.stopBridge();
    await backendDown.startBridge();
    const other = backendDown.startAppServer();
    await other.initialize();
    assert.deepEqual(await ourModels(other), []);
    const rejected = backendDown.bridge!.traffic.filter((event) => event.type === 'exchange-rejected');
    assert.ok(rejected.length >= 1, 'the refused catalog reached the traffic listener');
    const first = rejected[0]!;
    assert.ok(first.type === 'exchange-rejected');
    assert.equal(first.httpStatus, 503);
    assert.equal(first.error.code, 'model_catalog_unavailable');
    assert.match(first.error.message, /cannot build Codex's model catalog: GET http:\/\/127\.0\.0\.1:\d+\/v1\/models failed: ECONNREFUSED/);
  });
});
