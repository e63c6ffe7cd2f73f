import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Logger } from '../../../src/core/logger.ts';
import { postResponses, readSseEvents, startTestBridge, terminalEvent, type StartedBridge } from '../../support/bridge-harness.ts';
import { parseOpenAiError, sendRawHttpRequest } from '../../support/raw-http.ts';
import { renderChunkFrame, startScriptedBackend, startSseResponse, type ScriptedBackend } from '../../../mock-backend/scripted-backend.ts';
import { makeTempDir } from '../../support/cleanup.ts';

/**
 * Security: a local bridge is reachable by every process on the machine and every web page
 * in the user's browser. It binds to loopback, refuses foreign Host headers (DNS rebinding), browser
 * origins and preflights, requires its token, and never lets the backend key out.
 */

const TOKEN = 'bridge-token-5f1c0e9a7d';
const API_KEY = 'sk-backend-key-3b8d41e6c2a9';
const REQUEST = { model: 'm', input: 'hi' };

function authorized(extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...extra };
}

/** HTTP/1.0 allows a request without Host; Node passes it to the app, which must refuse it. */
function sendWithoutHost(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.0\r\n\r\n`));
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

function createCapturingLogger(lines: string[]): Logger {
  const capture =
    (level: string) =>
    (message: string, details?: Record<string, unknown>): void => {
      lines.push(`${level} ${message} ${details ? JSON.stringify(details) : ''}`);
    };
  return { error: capture('error'), warn: capture('warn'), info: capture('info'), debug: capture('debug') };
}

describe('hostile neighbours', () => {
  let backend: ScriptedBackend;
  let bridge: StartedBridge;
  const logLines: string[] = [];
  const logFile = join(makeTempDir('freeform-bridge-hostile-'), 'exchanges.jsonl');
  before(async () => {
    backend = await startScriptedBackend();
    bridge = await startTestBridge({
      backendUrl: backend.url,
      getToken: () => TOKEN,
      getBackendApiKey: () => API_KEY,
      logger: createCapturingLogger(logLines),
      logFile,
      keepaliveSeconds: 0,
    });
  });
  after(async () => {
    await bridge.close();
    await backend.close();
  });

  it('binds to loopback by default', () => {
    assert.equal(bridge.host, '127.0.0.1');
    assert.match(bridge.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('refuses Host headers that are not loopback names (DNS rebinding)', async () => {
    for (const host of ['attacker.example', `attacker.example:${bridge.port}`, '127.0.0.1.nip.io', 'localhost.attacker.example', '10.0.0.5', '[::ffff:10.0.0.5]']) {
      const response = await sendRawHttpRequest(bridge.url, { method: 'GET', path: '/healthz', headers: { host } });
      assert.equal(response.status, 403, host);
      assert.equal(parseOpenAiError(response.text).error.code, 'host_not_allowed');
    }
    for (const host of [`127.0.0.1:${bridge.port}`, `localhost:${bridge.port}`, `[::1]:${bridge.port}`, `codex.localhost:${bridge.port}`, '127.1.2.3']) {
      const response = await sendRawHttpRequest(bridge.url, { method: 'GET', path: '/healthz', headers: { host } });
      assert.equal(response.status, 200, host);
    }
    const withoutHost = await sendWithoutHost(bridge.port, '/healthz');
    assert.match(withoutHost, /^HTTP\/1\.[01] 400/);
    assert.match(withoutHost, /missing_host/);
  });

  it('refuses every request carrying a browser Origin, and CORS preflights, without CORS headers', async () => {
    for (const origin of ['https://evil.example', 'null', `http://127.0.0.1:${bridge.port}`]) {
      const response = await sendRawHttpRequest(bridge.url, { path: '/v1/responses', headers: authorized({ origin }), body: JSON.stringify(REQUEST) });
      assert.equal(response.status, 403, origin);
      assert.equal(parseOpenAiError(response.text).error.code, 'origin_not_allowed');
      assert.equal(response.headers['access-control-allow-origin'], undefined);
    }
    const preflight = await sendRawHttpRequest(bridge.url, {
      method: 'OPTIONS',
      path: '/v1/responses',
      headers: { 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    assert.equal(preflight.status, 403);
    assert.equal(preflight.headers['access-control-allow-origin'], undefined);
    assert.equal(preflight.headers['access-control-allow-headers'], undefined);
    assert.equal(backend.requests.length, 0, 'nothing reached the backend');
  });

  it('requires the bearer token on /v1 and only there', async () => {
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer' },
      { authorization: 'Bearer ' },
      { authorization: `bearer ${TOKEN}` },
      { authorization: `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}` },
      { authorization: `Bearer ${TOKEN.slice(0, -1)}` },
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: `Bearer ${'x'.repeat(10_000)}` },
    ];
    for (const headers of attempts) {
      const response = await sendRawHttpRequest(bridge.url, { path: '/v1/responses', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(REQUEST) });
      assert.equal(response.status, 401, JSON.stringify(headers).slice(0, 80));
      const { error } = parseOpenAiError(response.text);
      assert.equal(error.code, 'invalid_bridge_token');
      assert.ok(!response.text.includes(TOKEN), 'the expected token is never echoed');
    }
    const models = await sendRawHttpRequest(bridge.url, { method: 'GET', path: '/v1/models' });
    assert.equal(models.status, 401);
    const health = await sendRawHttpRequest(bridge.url, { method: 'GET', path: '/healthz' });
    assert.equal(health.status, 200);
    assert.equal(backend.requests.length, 0, 'nothing reached the backend');
  });

  it('never lets the backend key or the bridge token out: error bodies, streams, the panel, the log file, the logger', async () => {
    const echo = (request: { headers: Record<string, string | string[] | undefined> }): string =>
      `invalid credentials: got ${String(request.headers.authorization)} (bridge token ${TOKEN})`;
    backend.setHandlers(
      (response, request) => {
        response.writeHead(401, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: echo(request), type: 'auth', param: null, code: 401 } }));
      },
      (response, request) => {
        response.writeHead(500, { 'content-type': 'text/plain' });
        response.end(echo(request));
      },
      (response, request) => {
        response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
        response.end(JSON.stringify({ error: echo(request) }));
      },
      (response, request) => {
        startSseResponse(response);
        response.write(renderChunkFrame({ role: 'assistant', content: '' }));
        response.write(`data: ${JSON.stringify({ error: { message: echo(request), type: 'InternalServerError', param: null, code: 500 } })}\n\n`);
        response.end('data: [DONE]\n\n');
      },
      (response, request) => {
        startSseResponse(response);
        response.write(`error: ${JSON.stringify({ code: 500, message: echo(request), type: 'server_error' })}\n\n`);
        response.end('data: [DONE]\n');
      },
      (response, request) => {
        response.writeHead(403, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ detail: echo(request) }));
      },
    );
    const texts: string[] = [];
    for (const stream of [true, true, true, true, true]) {
      const response = await sendRawHttpRequest(bridge.url, { path: '/v1/responses', headers: authorized(), body: JSON.stringify({ ...REQUEST, stream }) });
      texts.push(response.text);
    }
    const models = await sendRawHttpRequest(bridge.url, { method: 'GET', path: '/v1/models', headers: authorized() });
    texts.push(models.text);
    assert.equal(backend.requests.length, 6);
    assert.ok(backend.requests.every((request) => request.headers.authorization === `Bearer ${API_KEY}`), 'the key does go to the backend');
    assert.match(texts[0]!, /refused the credentials/);
    assert.match(texts[3]!, /response\.failed/);
    assert.match(models.text, /\[redacted\]/);

    await bridge.close();
    const logText = readFileSync(logFile, 'utf8');
    const logRecords = logText
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { outcome: string; httpStatus: number; error: { code: string | null } | null });
    assert.equal(logRecords.filter((record) => record.outcome !== 'rejected').length, 5, 'each exchange has its log line');
    // The refusals of the earlier tests (Host, Origin, token) are logged too, by status and code only.
    const refusals = logRecords.filter((record) => record.outcome === 'rejected');
    assert.ok(refusals.length > 0);
    assert.ok(refusals.every((record) => [401, 403].includes(record.httpStatus) && /^(invalid_bridge_token|origin_not_allowed|host_not_allowed)$/.test(record.error?.code ?? '')));
    const everything = { responses: texts, traffic: JSON.stringify(bridge.traffic), logFile: logText, logger: logLines.join('\n') };
    for (const [where, text] of Object.entries(everything)) {
      const joined = Array.isArray(text) ? text.join('\n') : text;
      assert.ok(!joined.includes(API_KEY), `the backend key leaked into ${where}`);
      assert.ok(!joined.includes(TOKEN), `the bridge token leaked into ${where}`);
    }
    assert.match(texts.join('\n'), /\[redacted\]/, 'the echoed secrets were replaced, not just dropped');
  });
});

describe('a working stream after hostile traffic', () => {
  it('still serves Codex', async () => {
    const backend = await startScriptedBackend();
    const bridge = await startTestBridge({ backendUrl: backend.url, keepaliveSeconds: 0 });
    try {
      await sendRawHttpRequest(bridge.url, { path: '/v1/responses', headers: { 'content-type': 'application/json', origin: 'https://evil.example' }, body: '{}' });
      await sendRawHttpRequest(bridge.url, { method: 'GET', path: '/healthz', headers: { host: 'evil.example' } });
      const exchange = await readSseEvents(await postResponses(bridge.url, { ...REQUEST, stream: true }));
      assert.equal(terminalEvent(exchange.events).type, 'response.completed');
    } finally {
      await bridge.close();
      await backend.close();
    }
  });
});
