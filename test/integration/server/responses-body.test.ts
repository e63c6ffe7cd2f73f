import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { startTestBridge, type StartedBridge } from '../../support/bridge-harness.ts';
import { sendRawHttpRequest, type RawHttpResponse } from '../../support/raw-http.ts';
import { answerWithText, startScriptedBackend, type ScriptedBackend } from '../../../mock-backend/scripted-backend.ts';

/**
 * `POST /v1/responses` has one path: the app's body middleware reads the body as bytes and parses it
 * (request-body-checks.ts). Each case is sent twice, as Codex sends it and with a query string,
 * which must change nothing.
 */

const TOKEN = 'request-body-token';
const FAST = '/v1/responses';
const EXPRESS = '/v1/responses?client=other';

describe('POST /v1/responses: reading the body', () => {
  let backend: ScriptedBackend;
  let bridge: StartedBridge;
  before(async () => {
    backend = await startScriptedBackend({});
    // Refusals not coalesced: each of these tests checks that both paths report their own refusal.
    bridge = await startTestBridge({ backendUrl: backend.url, keepaliveSeconds: 0, getToken: () => TOKEN, refusalReportIntervalMs: 0 });
  });
  after(async () => {
    await bridge.close();
    await backend.close();
  });

  async function sendBoth(body: string | Buffer, headers: Record<string, string> = {}): Promise<{ fast: RawHttpResponse; express: RawHttpResponse }> {
    const allHeaders = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, ...headers };
    const send = (path: string): Promise<RawHttpResponse> => {
      backend.setHandlers(answerWithText('same answer'));
      return sendRawHttpRequest(bridge.url, { path, headers: Object.fromEntries(Object.entries(allHeaders).filter(([, value]) => value !== '')), body });
    };
    return { fast: await send(FAST), express: await send(EXPRESS) };
  }

  /** The error envelope. */
  function comparable(response: RawHttpResponse): { status: number; contentType: string; code: unknown; type: unknown } {
    const parsed = JSON.parse(response.text) as { error?: { code?: unknown; type?: unknown } };
    return { status: response.status, contentType: String(response.headers['content-type']), code: parsed.error?.code, type: parsed.error?.type };
  }

  const refusals: Array<{ name: string; body: string | Buffer; headers?: Record<string, string>; status: number; code: string }> = [
    { name: 'malformed JSON', body: '{"model": "m", "input": ', status: 400, code: 'invalid_json' },
    { name: 'invalid UTF-8', body: Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d]), status: 400, code: 'invalid_utf8' },
    { name: 'JSON nested too deep', body: `${'['.repeat(600)}${']'.repeat(600)}`, status: 400, code: 'json_too_deeply_nested' },
    { name: 'an empty body', body: '', status: 400, code: 'invalid_request' },
    { name: 'a body that is not an object', body: '[1, 2]', status: 400, code: 'invalid_request' },
    { name: 'a missing token', body: '{"model":"m","input":"hi"}', headers: { authorization: '' }, status: 401, code: 'invalid_bridge_token' },
    { name: 'a browser Origin', body: '{"model":"m","input":"hi"}', headers: { origin: 'https://example.com' }, status: 403, code: 'origin_not_allowed' },
    { name: 'a foreign Host', body: '{"model":"m","input":"hi"}', headers: { host: 'evil.example:80' }, status: 403, code: 'host_not_allowed' },
  ];

  for (const refusal of refusals) {
    it(`refuses ${refusal.name} identically`, async () => {
      const callsBefore = backend.requests.length;
      const rejectedBefore = bridge.traffic.filter((event) => event.type === 'exchange-rejected').length;
      const { fast, express } = await sendBoth(refusal.body, refusal.headers);
      assert.deepEqual(comparable(fast), comparable(express), `fast: ${fast.text}\nexpress: ${express.text}`);
      assert.equal(fast.status, refusal.status, fast.text);
      // Validation errors carry their own codes; the empty and non-object bodies have none.
      const expectedCode = refusal.code === 'invalid_request' ? null : refusal.code;
      assert.equal(comparable(fast).code, expectedCode, fast.text);
      if (refusal.code !== 'invalid_json') assert.equal(JSON.parse(fast.text).error.message, JSON.parse(express.text).error.message);
      assert.equal(backend.requests.length, callsBefore, 'a refused request never reaches the backend');
      // Each refusal, security ones included, is a round trip the panel and the log show.
      const rejected = bridge.traffic.filter((event) => event.type === 'exchange-rejected').slice(rejectedBefore);
      assert.deepEqual(
        rejected.map((event) => [event.httpStatus, event.error.code]),
        [
          [refusal.status, expectedCode],
          [refusal.status, expectedCode],
        ],
      );
    });
  }

  it('serves a valid request identically, with and without a BOM and a charset', async () => {
    const request = JSON.stringify({ model: 'qwen3-coder', input: 'hello', stream: false });
    for (const [body, headers] of [
      [request, {}],
      [`\ufeff${request}`, {}],
      [request, { 'content-type': 'application/json; charset=utf-8' }],
    ] as const) {
      const { fast, express } = await sendBoth(body, headers);
      assert.equal(fast.status, 200, fast.text);
      assert.equal(express.status, 200, express.text);
      const strip = (text: string): unknown => {
        const value = JSON.parse(text) as Record<string, unknown>;
        // Ids and times differ per exchange; everything else must not.
        return { ...value, id: null, created_at: null, output: (value.output as Array<Record<string, unknown>>).map((item) => ({ ...item, id: null })) };
      };
      assert.deepEqual(strip(fast.text), strip(express.text));
      assert.equal(fast.headers['content-type'], express.headers['content-type']);
    }
  });

  it('decodes characters split across body chunks, and refuses bad bytes in a later chunk', async () => {
    const text = 'naïve 👋 — 日本';
    const bytes = Buffer.from(JSON.stringify({ model: 'qwen3-coder', input: text, stream: false }));
    const emoji = bytes.indexOf(Buffer.from('👋'));
    // Chunked upload cut inside the 4-byte emoji: each piece alone is not valid UTF-8.
    const pieces = [bytes.subarray(0, emoji + 1), bytes.subarray(emoji + 1, emoji + 3), bytes.subarray(emoji + 3)];
    backend.setHandlers(answerWithText('split'));
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` };
    const served = await sendRawHttpRequest(bridge.url, { path: FAST, headers, body: pieces });
    assert.equal(served.status, 200, served.text);
    const sent = backend.requests.at(-1)?.body as { messages: Array<{ content: unknown }> };
    assert.equal(sent.messages.at(-1)?.content, text);

    const bad = [bytes.subarray(0, 20), Buffer.concat([bytes.subarray(20, 30), Buffer.from([0xff]), bytes.subarray(30)])];
    const refused = await sendRawHttpRequest(bridge.url, { path: FAST, headers, body: bad });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(JSON.parse(refused.text).error.code, 'invalid_utf8');
  });

  it('reads a large body that says its size, and one sent chunked alike', async () => {
    // 700 kB: above the size from which a body's long strings are carried as bytes.
    const text = `${'naïve 👋 — 日本 '.repeat(30_000)}end`;
    const bytes = Buffer.from(JSON.stringify({ model: 'qwen3-coder', input: text, stream: false }));
    const emoji = bytes.indexOf(Buffer.from('👋'), 400_000);
    const pieces = [bytes.subarray(0, 1000), bytes.subarray(1000, emoji + 2), bytes.subarray(emoji + 2)];
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` };
    for (const request of [
      { path: FAST, headers: { ...headers, 'content-length': String(bytes.length) }, body: pieces },
      { path: FAST, headers, body: pieces },
    ]) {
      backend.setHandlers(answerWithText('large'));
      const served = await sendRawHttpRequest(bridge.url, request);
      assert.equal(served.status, 200, served.text);
      const sent = backend.requests.at(-1)?.body as { messages: Array<{ content: unknown }> };
      assert.equal(sent.messages.at(-1)?.content, text);
    }
    const bad = Buffer.from(bytes);
    bad[emoji + 1] = 0xff;
    const refused = await sendRawHttpRequest(bridge.url, { path: FAST, headers: { ...headers, 'content-length': String(bad.length) }, body: [bad.subarray(0, 1000), bad.subarray(1000)] });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(JSON.parse(refused.text).error.code, 'invalid_utf8');
  });

  it('records the real size of the request, sent chunked (no Content-Length) or compressed, and its round-trip label', async () => {
    const body = JSON.stringify({ model: 'qwen3-coder', input: [{ role: 'user', content: 'one ✓' }, { role: 'user', content: 'two' }], stream: false });
    const size = Buffer.byteLength(body);
    const metadata = JSON.stringify({ request_kind: 'turn', thread_source: 'subagent', agent_name: '/root/calc' });
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, 'x-codex-turn-metadata': metadata };
    const pieces = [body.slice(0, 10), body.slice(10)];
    const sent = [
      { path: FAST, headers, body: pieces },
      { path: EXPRESS, headers, body: pieces },
      { path: FAST, headers: { ...headers, 'content-encoding': 'gzip' }, body: gzipSync(body) },
    ];
    const startsBefore = bridge.traffic.filter((event) => event.type === 'exchange-start').length;
    for (const request of sent) {
      backend.setHandlers(answerWithText('sized'));
      const answer = await sendRawHttpRequest(bridge.url, request);
      assert.equal(answer.status, 200, answer.text);
    }
    const starts = bridge.traffic.filter((event) => event.type === 'exchange-start').slice(startsBefore);
    const ends = bridge.traffic.filter((event) => event.type === 'exchange-end').slice(-3);
    const label = { kind: 'subagent', agentName: '/root/calc', text: 'sub-agent /root/calc' };
    assert.deepEqual(
      starts.map((event) => [event.type === 'exchange-start' ? event.requestBytes : null, event.type === 'exchange-start' ? event.inputItems : null, event.type === 'exchange-start' ? event.roundTrip : null]),
      [
        [size, 2, label],
        [size, 2, label],
        [size, 2, label],
      ],
    );
    assert.deepEqual(
      ends.map((event) => (event.type === 'exchange-end' ? event.roundTrip : null)),
      [label, label, label],
    );
  });

  it('labels a request refused by lowering too (remote compaction asked of a Chat backend)', async () => {
    const body = JSON.stringify({ model: 'qwen3-coder', input: [{ role: 'user', content: 'hi' }, { type: 'compaction_trigger' }] });
    const rejectedBefore = bridge.traffic.filter((event) => event.type === 'exchange-rejected').length;
    const { fast, express } = await sendBoth(body, { 'x-codex-turn-metadata': JSON.stringify({ request_kind: 'compaction', agent_name: '/root', thread_source: 'user' }) });
    for (const answer of [fast, express]) {
      assert.equal(answer.status, 400, answer.text);
      assert.equal(JSON.parse(answer.text).error.code, 'unsupported_feature');
    }
    const rejected = bridge.traffic.filter((event) => event.type === 'exchange-rejected').slice(rejectedBefore);
    assert.deepEqual(
      rejected.map((event) => (event.type === 'exchange-rejected' ? event.roundTrip : null)),
      [
        { kind: 'compaction', agentName: '/root', text: 'compaction' },
        { kind: 'compaction', agentName: '/root', text: 'compaction' },
      ],
    );
  });

  it('answers a WebSocket upgrade of GET /v1/responses with 426, so Codex falls back to HTTP at once', async () => {
    const upgrade = { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', authorization: `Bearer ${TOKEN}` };
    for (const path of [FAST, '/v1/responses?client=codex']) {
      const answer = await sendRawHttpRequest(bridge.url, { method: 'GET', path, headers: upgrade });
      assert.equal(answer.status, 426, answer.text);
      assert.deepEqual(JSON.parse(answer.text).error.code, 'websocket_not_supported');
      assert.match(JSON.parse(answer.text).error.message, /POST \/v1\/responses/);
    }
    const plainGet = await sendRawHttpRequest(bridge.url, { method: 'GET', path: FAST, headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(plainGet.status, 404, 'a GET without an upgrade is no WebSocket attempt');
    const unauthorised = await sendRawHttpRequest(bridge.url, { method: 'GET', path: FAST, headers: { ...upgrade, authorization: '' } });
    assert.equal(unauthorised.status, 401, 'the token check comes first');
  });

});
