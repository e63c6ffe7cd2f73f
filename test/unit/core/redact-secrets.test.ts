/**
 * One redaction rule for every place a key can surface: header values, an Authorization line in an
 * echoed error, URLs and query strings, the log, the panel's messages, exported JSON lines, the
 * copied curl command and the error bodies the bridge answers with. Keys of every length from 1 to
 * 64, plain (base64url) and with characters that change spelling in JSON, URLs and shells.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import type * as vscode from 'vscode';
import { REDACTED, redactSecrets, redactSecretsInValue } from '../../../src/core/redact-secrets.ts';
import { createOutputChannelLogger } from '../../../src/extension/output-channel-logger.ts';
import { renderCurlCommand, renderJsonLines } from '../../../src/extension/traffic-panel-export.ts';
import { TrafficStore } from '../../../src/extension/traffic-store.ts';
import { WEBVIEW_IDENTIFIER_FIELDS, type HostToWebviewMessage } from '../../../src/shared/webview-protocol.ts';
import { createRandom } from '../../../harness/deterministic-random.ts';
import { readSseEvents, startTestBridge, type StartedBridge } from '../../support/bridge-harness.ts';
import { startScriptedBackend, startSseResponse, type ScriptedBackend } from '../../../mock-backend/scripted-backend.ts';
import { createLoweredRequest, customCall, encodedStartEvent, endEvent, grammarWarning } from '../../support/traffic-events.ts';

const PLAIN_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** Each of these is spelled differently in a JSON string, a URL or a shell word. */
const TRICKY_CHARACTERS = `"\\'/+=%&?#$\` `;

function createKey(length: number, random: () => number, tricky: boolean): string {
  let key = '';
  for (let index = 0; index < length; index += 1) {
    const alphabet = tricky && index % 2 === 0 ? TRICKY_CHARACTERS : PLAIN_ALPHABET;
    key += alphabet[Math.floor(random() * alphabet.length)];
  }
  // A header value cannot start or end with a space: the key is trimmed when it is stored.
  return key.replace(/^ | $/g, 'k');
}

const random = createRandom(0x5eed);
const KEYS: string[] = [];
for (let length = 1; length <= 64; length += 1) KEYS.push(createKey(length, random, false), createKey(length, random, true));
const BRIDGE_TOKEN = 'ffb_token-that-is-also-secret-0123456789';

function describeKey(key: string): string {
  return `key of length ${key.length} ${JSON.stringify(key)}`;
}

/** The key in each spelling it could take; none may be left between the markers. */
function assertHidden(text: string, key: string, place: string): void {
  const spellings = new Set([key, JSON.stringify(key).slice(1, -1), encodeURIComponent(key)]);
  for (const piece of text.split(REDACTED)) {
    for (const spelling of spellings) {
      assert.ok(!piece.includes(spelling), `${place}: ${describeKey(key)} still shows as ${JSON.stringify(spelling)} in ${JSON.stringify(text.slice(0, 400))}`);
    }
  }
}

/** The key was there and is gone: the text says so instead of silently dropping the part. */
function assertRedacted(text: string, key: string, place: string): void {
  assertHidden(text, key, place);
  assert.ok(text.includes(REDACTED), `${place}: no ${REDACTED} marker for ${describeKey(key)} in ${JSON.stringify(text.slice(0, 400))}`);
}

/** Every string in a value, except those under `skippedKeys`. */
function collectStrings(value: unknown, skippedKeys: ReadonlySet<string> = new Set(), into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const child of value) collectStrings(child, skippedKeys, into);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) if (!skippedKeys.has(key)) collectStrings(child, skippedKeys, into);
  }
  return into;
}

/** Text a backend could plausibly send back with the key in it. */
function echoKey(key: string): string {
  return `Incorrect API key provided. Authorization: Bearer ${key} (see https://backend.example/v1/models?api_key=${encodeURIComponent(key)}&raw=${key})`;
}

describe('redactSecrets', () => {
  it('hides every key in plain text, a Bearer line and URLs, in every spelling', () => {
    for (const key of KEYS) {
      assertRedacted(redactSecrets(echoKey(key), [key]), key, 'echoed text');
      const url = new URL('https://backend.example/v1');
      url.searchParams.set('api_key', key);
      assertRedacted(redactSecrets(url.toString(), [key]), key, 'URL with a form-encoded query');
      assertRedacted(redactSecrets(`https://backend.example/v1?key=${encodeURIComponent(key).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase())}`, [key]), key, 'URL with lower-case escapes');
      assertRedacted(redactSecrets(JSON.stringify({ body: JSON.stringify({ error: key }) }), [key]), key, 'JSON kept inside a JSON string');
    }
  });

  it('keeps its own markers and the text around them, so redacting twice changes nothing', () => {
    for (const key of KEYS) {
      const once = redactSecrets(`before ${key} after`, [key, BRIDGE_TOKEN]);
      assert.equal(redactSecrets(once, [key, BRIDGE_TOKEN]), once, describeKey(key));
    }
    assert.equal(redactSecrets('a sk-1 b ffb_x', ['sk-1', 'ffb_x', null, undefined, '']), `a ${REDACTED} b ${REDACTED}`);
    assert.equal(redactSecrets('nothing secret here', ['absent']), 'nothing secret here');
  });

  it('removes the longer of two overlapping secrets whole', () => {
    assert.equal(redactSecrets('key sk-abcdef', ['sk-abc', 'sk-abcdef']), `key ${REDACTED}`);
  });
});

describe('the log', () => {
  it('hides every key in the message and in the details', () => {
    const lines: string[] = [];
    const record = (line: string): void => {
      lines.push(line);
    };
    let secrets: ReadonlyArray<string | null> = [];
    // Only the four writing methods are used; the rest of the channel is VS Code's.
    const channel = { error: record, warn: record, info: record, debug: record } as unknown as vscode.LogOutputChannel;
    const logger = createOutputChannelLogger(channel, () => secrets);
    for (const key of KEYS) {
      secrets = [key, BRIDGE_TOKEN];
      lines.length = 0;
      logger.warn(`backend said: ${echoKey(key)}`, { url: `https://backend.example/v1?api_key=${encodeURIComponent(key)}`, body: JSON.stringify({ error: { message: key } }) });
      logger.error('token', { token: BRIDGE_TOKEN });
      assert.equal(lines.length, 2);
      assertRedacted(lines[0] ?? '', key, 'log line');
      assertRedacted(lines[1] ?? '', BRIDGE_TOKEN, 'log line');
    }
  });
});

describe('the panel, the export and the curl command', () => {
  function fillStore(key: string): TrafficStore {
    const secrets = [key, BRIDGE_TOKEN];
    const redact = (text: string): string => redactSecrets(text, secrets);
    const store = new TrafficStore({ redactText: redact, getBackendUrl: () => `https://backend.example/v1?api_key=${key}` });
    // Redacted by the bridge's worker thread as it encodes the request, as the extension receives it.
    store.apply(encodedStartEvent('resp_1', createLoweredRequest([{ role: 'user', content: `my key is ${key}; ${echoKey(key)}` }]), redact));
    store.apply(endEvent('resp_1', [customCall('call_1', `echo ${key}`)], [grammarWarning('call_1', `raw ${key}`)], { outcome: 'failed', error: { code: 'backend_error', message: echoKey(key) } }));
    return store;
  }

  it('posts no key to the webview, in any message the host sends', () => {
    for (const key of KEYS) {
      const store = fillStore(key);
      const stats = store.getStats();
      const messages: HostToWebviewMessage[] = [
        { type: 'traffic/snapshot', exchanges: store.getSummaries(), stats },
        { type: 'traffic/exchange/detail', exchangeId: 'resp_1', detail: store.getDetail('resp_1') },
        { type: 'traffic/body/show', body: { kind: 'loweredRequest', exchangeId: 'resp_1' }, content: store.getBodyContent({ kind: 'loweredRequest', exchangeId: 'resp_1' }) },
        { type: 'traffic/body/show', body: { kind: 'exchange', exchangeId: 'resp_1' }, content: store.getBodyContent({ kind: 'exchange', exchangeId: 'resp_1' }) },
        { type: 'traffic/body/show', body: { kind: 'item', exchangeId: 'resp_1', index: 0 }, content: store.getBodyContent({ kind: 'item', exchangeId: 'resp_1', index: 0 }) },
        { type: 'traffic/body/show', body: { kind: 'warningRaw', exchangeId: 'resp_1', index: 0 }, content: store.getBodyContent({ kind: 'warningRaw', exchangeId: 'resp_1', index: 0 }) },
      ];
      // What TrafficPanel.post hands to webview.postMessage.
      const posted = redactSecretsInValue(messages, [key, BRIDGE_TOKEN], WEBVIEW_IDENTIFIER_FIELDS);
      // Identifiers and enum values are the protocol's own words, never payload text.
      const texts = collectStrings(posted, WEBVIEW_IDENTIFIER_FIELDS);
      assert.ok(texts.some((text) => text.includes(REDACTED)), `the panel showed where ${describeKey(key)} was`);
      for (const text of texts) assertHidden(text, key, 'panel message');
      // Identifiers stay usable: the webview sends them back to ask for bodies.
      const detail = posted[1];
      assert.ok(detail?.type === 'traffic/exchange/detail' && detail.exchangeId === 'resp_1', describeKey(key));
      const copied = store.getCopyText({ kind: 'item', exchangeId: 'resp_1', index: 0 });
      assertRedacted(redactSecrets(copied ?? '', [key]), key, 'copied payload');
    }
  });

  it('exports JSON lines without any key', () => {
    for (const key of KEYS) {
      const store = fillStore(key);
      const text = renderJsonLines(store.exportValues(), [key, BRIDGE_TOKEN]);
      for (const line of text.split('\n')) assertHidden(line, key, 'exported JSON line');
      assert.ok(text.includes(REDACTED), describeKey(key));
      // A value that never went through the store is redacted as well.
      assertRedacted(renderJsonLines([{ quoted: JSON.stringify({ key }), url: `https://h/?k=${encodeURIComponent(key)}` }], [key]), key, 'exported JSON line');
    }
  });

  it('copies a curl command whose arguments, as the shell passes them to curl, hold no key', () => {
    const commands = KEYS.map((key) => {
      const request = createLoweredRequest([{ role: 'user', content: `my key is ${key}` }]);
      return renderCurlCommand({ backendUrl: `https://backend.example/v1?api_key=${encodeURIComponent(key)}`, request, usesApiKey: true, secrets: [key, BRIDGE_TOKEN] });
    });
    // The real shell parses every command; a function named curl prints the arguments it would get,
    // NUL-separated, and an empty argument closes each command's list.
    const script = [`curl() { printf '%s\\0' "$@"; printf '\\0'; }`, ...commands].join('\n');
    const printed = execFileSync('bash', ['-c', script], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    const argumentLists = printed.split('\0\0').slice(0, -1).map((list) => list.split('\0'));
    assert.equal(argumentLists.length, KEYS.length);
    for (const [index, key] of KEYS.entries()) {
      const [url, ...rest] = (argumentLists[index] ?? []).filter((argument) => argument !== '-N');
      const body = rest[rest.indexOf('--data-binary') + 1] ?? '';
      assertRedacted(url ?? '', key, 'curl URL');
      assertRedacted(body, key, 'curl body');
      assert.ok(rest.includes('Authorization: Bearer '), `the key is read from the (here empty) environment: ${JSON.stringify(rest)}`);
    }
  });
});

describe('error bodies the bridge answers with', () => {
  let backend: ScriptedBackend;
  let bridge: StartedBridge;
  let currentKey = '';

  before(async () => {
    backend = await startScriptedBackend();
    bridge = await startTestBridge({ backendUrl: backend.url, port: 0, getBackendApiKey: () => currentKey });
  });
  after(async () => {
    await bridge?.close();
    await backend?.close();
  });

  const post = (stream: boolean): Promise<Response> =>
    fetch(`${bridge.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }], tools: [], stream }),
    });

  it('hides the key a backend echoes in JSON, in plain text cut to length, in a stream error and on /v1/models', async () => {
    for (const key of KEYS) {
      currentKey = key;
      // The backend quotes the Authorization header it received, as some proxies do.
      backend.setHandlers((response, request) => {
        response.writeHead(401, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: `${echoKey(key)}; header was ${String(request.headers.authorization)}`, type: 'invalid_request_error' } }));
      });
      const json = (await (await post(false)).json()) as { error: { message: string } };
      assertRedacted(json.error.message, key, 'JSON error body');
      const models = (await (await fetch(`${bridge.url}/v1/models`)).json()) as { error: { message: string } };
      assertRedacted(models.error.message, key, '/v1/models error body');

      // Plain text longer than the message limit, with the key right where the cut falls.
      backend.setHandlers((response) => {
        response.writeHead(400, { 'content-type': 'text/plain' });
        response.end(`${'~'.repeat(1998)}${key}${'~'.repeat(100)}`);
      });
      const plain = (await (await post(false)).json()) as { error: { message: string } };
      assertRedacted(plain.error.message, key, 'plain-text error body cut to length');

      backend.setHandlers((response) => {
        startSseResponse(response);
        response.end(`data: ${JSON.stringify({ error: { message: echoKey(key) } })}\n\n`);
      });
      const streamed = await readSseEvents(await post(true));
      const failed = streamed.events.find((event) => event.type === 'response.failed') as { response: { error: { message: string } } } | undefined;
      assert.ok(failed, `a response.failed event for ${describeKey(key)}: ${JSON.stringify(streamed.events.map((event) => event.type))}`);
      assertRedacted(failed.response.error.message, key, 'stream error');
      const upstream = backend.requests.at(-1);
      assert.equal(upstream?.headers.authorization, `Bearer ${key}`, 'the key itself still reaches the backend');
    }
    const ended = bridge.traffic.filter((event) => event.type === 'exchange-end');
    assert.equal(ended.length, KEYS.length * 3);
    for (const [index, event] of ended.entries()) {
      // What the panel and the log file receive for each failed round trip.
      if (event.type === 'exchange-end') assertRedacted(event.error?.message ?? '', KEYS[Math.floor(index / 3)] ?? '', 'traffic event');
    }
  });
});

describe('redactSecrets: hostile input', () => {
  it('a key containing / is redacted in its PHP-style JSON spelling (\\/) too', () => {
    const key = 'sk-abc/def/ghi';
    const echoed = '{"error":"bad key sk-abc\\/def\\/ghi"}';
    assert.equal(redactSecrets(echoed, [key]), '{"error":"bad key [redacted]"}');
  });

});
