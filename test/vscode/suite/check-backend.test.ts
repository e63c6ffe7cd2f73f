/**
 * Freeform Bridge: Check Backend Connection in a real extension host: it needs no running bridge,
 * asks the configured backend for its models with the stored API key, and returns what it found.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { BackendCheckOutcome } from '../../../src/extension/describe-backend-check.ts';
import { FAKE_MODEL, startFakeBackend, type FakeBackend } from './fake-backend.ts';

const EXTENSION_ID = 'freeform-bridge.freeform-bridge';

async function updateBackendUrl(value: string | undefined): Promise<void> {
  await vscode.workspace.getConfiguration('freeformBridge').update('backendUrl', value, vscode.ConfigurationTarget.Global);
}

/** A port nothing listens on: bound, read, released. */
function closedPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

describe('Check Backend Connection', function () {
  let backend: FakeBackend;

  before(async () => {
    backend = await startFakeBackend();
    await vscode.extensions.getExtension(EXTENSION_ID)?.activate();
  });

  after(async () => {
    await vscode.commands.executeCommand('freeformBridge.setBackendApiKey', '');
    await updateBackendUrl(undefined);
    await backend?.close();
  });

  it('lists the backend\'s models without starting the bridge, sending the stored API key', async () => {
    await updateBackendUrl(backend.url);
    await vscode.commands.executeCommand('freeformBridge.setBackendApiKey', 'sk-check-backend');
    const outcome = await vscode.commands.executeCommand<BackendCheckOutcome>('freeformBridge.checkBackend');
    assert.deepEqual({ reachable: outcome.reachable, backendUrl: outcome.backendUrl, models: outcome.models }, { reachable: true, backendUrl: backend.url, models: [FAKE_MODEL] });
    const request = backend.requests.find((entry) => entry.method === 'GET' && entry.path === '/v1/models');
    assert.equal(`${request?.method} ${request?.path}`, 'GET /v1/models');
    assert.equal(request?.headers.authorization, 'Bearer sk-check-backend');
  });

  it('reports an unreachable backend with the reason', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    await updateBackendUrl(url);
    const outcome = await vscode.commands.executeCommand<BackendCheckOutcome>('freeformBridge.checkBackend');
    assert.deepEqual({ reachable: outcome.reachable, backendUrl: outcome.backendUrl }, { reachable: false, backendUrl: url });
    assert.match(outcome.report.worst?.summary ?? '', /ECONNREFUSED/);
  });
});
