/**
 * The backend API key is bound to the origin it was stored for. BridgeSecrets imports `vscode` only
 * as types, so it runs here against an in-memory SecretStorage with VS Code's event contract.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type * as vscode from 'vscode';
import type { Logger } from '../../../src/core/logger.ts';
import { BridgeSecrets, originOf } from '../../../src/extension/bridge-secrets.ts';

interface MemorySecretStorage extends vscode.SecretStorage {
  values: Map<string, string>;
  /** Another window writing: changes the value and fires onDidChange, as VS Code does. */
  storeFromElsewhere(key: string, value: string): void;
}

function createMemorySecretStorage(initial: Record<string, string> = {}): MemorySecretStorage {
  const values = new Map(Object.entries(initial));
  const listeners = new Set<(event: vscode.SecretStorageChangeEvent) => void>();
  const fire = (key: string): void => {
    for (const listener of listeners) listener({ key });
  };
  return {
    values,
    get: async (key) => values.get(key),
    store: async (key, value) => {
      values.set(key, value);
      fire(key);
    },
    delete: async (key) => {
      values.delete(key);
      fire(key);
    },
    onDidChange: (listener) => {
      listeners.add(listener);
      return { dispose: () => listeners.delete(listener) };
    },
    storeFromElsewhere: (key, value) => {
      values.set(key, value);
      fire(key);
    },
  };
}

function createRecordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const record = (message: string): void => {
    lines.push(message);
  };
  return { lines, error: record, warn: record, info: record, debug: record };
}

const BACKEND = 'http://127.0.0.1:8000/v1';
const KEY = 'sk-bound-to-one-backend';
const RECORD = 'freeformBridge.backendApiKeyForOrigin';

describe('originOf', () => {
  it('is scheme, host and port; nothing for what is not a URL', () => {
    assert.equal(originOf('http://127.0.0.1:8000/v1'), 'http://127.0.0.1:8000');
    assert.equal(originOf('https://Backend.Example/v1?x=1'), 'https://backend.example');
    assert.equal(originOf('https://backend.example:443/v1'), 'https://backend.example');
    assert.equal(originOf('not a url'), null);
    assert.equal(originOf(''), null);
    assert.equal(originOf(undefined), null);
  });
});

describe('BridgeSecrets and the backend API key', () => {
  it('gives the key only for URLs on the origin it was stored for', async () => {
    const storage = createMemorySecretStorage();
    const secrets = await BridgeSecrets.load(storage, createRecordingLogger(), BACKEND);
    await secrets.setBackendApiKey(`  ${KEY}  `, BACKEND);
    assert.equal(secrets.getBackendApiKeyFor(BACKEND), KEY);
    assert.equal(secrets.getBackendApiKeyFor('http://127.0.0.1:8000/other/v1'), KEY, 'same origin, another path');
    for (const other of ['http://127.0.0.1:8001/v1', 'https://127.0.0.1:8000/v1', 'http://localhost:8000/v1', 'http://attacker.example/v1', 'nonsense', null, undefined]) {
      assert.equal(secrets.getBackendApiKeyFor(other), null, String(other));
    }
    assert.deepEqual(JSON.parse(storage.values.get(RECORD) ?? ''), { key: KEY, origin: 'http://127.0.0.1:8000' });
    assert.deepEqual(secrets.listSecretValues().filter((value) => value !== null && !value.startsWith('ffb_')), [KEY], 'the key stays secret everywhere');
  });

  it('moves to a new origin only when bound to it, and leaves the old one then', async () => {
    const secrets = await BridgeSecrets.load(createMemorySecretStorage(), createRecordingLogger(), BACKEND);
    await secrets.setBackendApiKey(KEY, BACKEND);
    await secrets.bindBackendApiKeyTo('https://gpu.example/v1');
    assert.equal(secrets.getBackendApiKeyOrigin(), 'https://gpu.example');
    assert.equal(secrets.getBackendApiKeyFor('https://gpu.example/v1'), KEY);
    assert.equal(secrets.getBackendApiKeyFor(BACKEND), null);
  });

  it('removes the key for an empty entry', async () => {
    const storage = createMemorySecretStorage();
    const secrets = await BridgeSecrets.load(storage, createRecordingLogger(), BACKEND);
    await secrets.setBackendApiKey(KEY, BACKEND);
    await secrets.setBackendApiKey('   ', BACKEND);
    assert.equal(secrets.hasBackendApiKey(), false);
    assert.equal(secrets.getBackendApiKeyFor(BACKEND), null);
    assert.equal(storage.values.has(RECORD), false);
  });

  it('binds a key stored by an older version (without its backend) to the user\'s backend URL', async () => {
    const storage = createMemorySecretStorage({ 'freeformBridge.backendApiKey': KEY });
    const logger = createRecordingLogger();
    const secrets = await BridgeSecrets.load(storage, logger, BACKEND);
    assert.equal(secrets.getBackendApiKeyFor(BACKEND), KEY);
    assert.equal(secrets.getBackendApiKeyFor('http://attacker.example/v1'), null);
    assert.equal(storage.values.has('freeformBridge.backendApiKey'), false);
    assert.ok(logger.lines.some((line) => line.includes('bound to http://127.0.0.1:8000')), logger.lines.join('\n'));
  });

  it('follows a key set in another window', async () => {
    const storage = createMemorySecretStorage();
    const secrets = await BridgeSecrets.load(storage, createRecordingLogger(), BACKEND);
    storage.storeFromElsewhere(RECORD, JSON.stringify({ key: 'sk-from-another-window', origin: 'http://127.0.0.1:8000' }));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(secrets.getBackendApiKeyFor(BACKEND), 'sk-from-another-window');
  });

  it('sends nothing for an unreadable record, says so, and keeps it', async () => {
    for (const stored of ['{"key":"sk-x"}', 'sk-plain-text', '{"key":"","origin":null}']) {
      const storage = createMemorySecretStorage({ [RECORD]: stored });
      const logger = createRecordingLogger();
      const secrets = await BridgeSecrets.load(storage, logger, BACKEND);
      assert.equal(secrets.hasBackendApiKey(), false, stored);
      assert.equal(secrets.getBackendApiKeyFor(BACKEND), null, stored);
      assert.equal(storage.values.get(RECORD), stored, 'nothing is deleted');
      assert.ok(logger.lines.some((line) => line.includes('unreadable')), stored);
    }
  });

  it('never sends a key stored while the backend URL was not a URL', async () => {
    const secrets = await BridgeSecrets.load(createMemorySecretStorage(), createRecordingLogger(), BACKEND);
    await secrets.setBackendApiKey(KEY, 'not a url');
    assert.equal(secrets.hasBackendApiKey(), true);
    assert.equal(secrets.getBackendApiKeyOrigin(), null);
    assert.equal(secrets.getBackendApiKeyFor(BACKEND), null);
  });
});

describe('BridgeSecrets.onDidChangeValues (the bridge in a worker thread is handed the new values)', () => {
  it('fires after the mirror changed, for a new key, an approved origin, a removed key, and another window\'s key or token', async () => {
    const storage = createMemorySecretStorage();
    const secrets = await BridgeSecrets.load(storage, createRecordingLogger(), BACKEND);
    const seen: Array<{ key: string | null; token: string }> = [];
    const subscription = secrets.onDidChangeValues(() => seen.push({ key: secrets.getBackendApiKeyFor('http://127.0.0.1:9000/v1') ?? secrets.getBackendApiKeyFor(BACKEND), token: secrets.getBridgeToken() }));
    const token = secrets.getBridgeToken();

    await secrets.setBackendApiKey(KEY, BACKEND);
    assert.deepEqual(seen.at(-1), { key: KEY, token });
    await secrets.bindBackendApiKeyTo('http://127.0.0.1:9000/v1');
    assert.equal(secrets.getBackendApiKeyFor('http://127.0.0.1:9000/v1'), KEY);
    assert.deepEqual(seen.at(-1), { key: KEY, token });
    const count = seen.length;
    storage.storeFromElsewhere(RECORD, JSON.stringify({ key: 'sk-from-another-window', origin: originOf(BACKEND) }));
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(seen.length > count);
    assert.deepEqual(seen.at(-1), { key: 'sk-from-another-window', token });
    storage.storeFromElsewhere('freeformBridge.bridgeToken', 'ffb_from-another-window');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(seen.at(-1), { key: 'sk-from-another-window', token: 'ffb_from-another-window' });
    await secrets.setBackendApiKey('', BACKEND);
    assert.deepEqual(seen.at(-1), { key: null, token: 'ffb_from-another-window' });

    subscription.dispose();
    const disposedAt = seen.length;
    await secrets.setBackendApiKey(KEY, BACKEND);
    assert.equal(seen.length, disposedAt);
    secrets.dispose();
  });
});
