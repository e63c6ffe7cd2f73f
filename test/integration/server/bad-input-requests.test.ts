import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { itemsDone, postResponses, readSseEvents, startTestBridge, type StartedBridge } from '../../support/bridge-harness.ts';
import { parseOpenAiError, sendRawHttpRequest, type RawHttpResponse } from '../../support/raw-http.ts';
import { answerWithText, renderChunkFrame, startScriptedBackend, startSseResponse, type ScriptedBackend } from '../../../mock-backend/scripted-backend.ts';
import type { TrafficEvent } from '../../../src/core/traffic/traffic-event.ts';

/**
 * Bad input: every malformed request gets a specific 4xx in OpenAI's error shape, reaches no
 * backend, leaves a `exchange-rejected` entry for the panel and the log, and the bridge keeps serving.
 */

const VALID_REQUEST = { model: 'qwen3-coder', input: 'hello', stream: false };

function rejectedEvents(traffic: readonly TrafficEvent[]): Array<Extract<TrafficEvent, { type: 'exchange-rejected' }>> {
  return traffic.filter((event): event is Extract<TrafficEvent, { type: 'exchange-rejected' }> => event.type === 'exchange-rejected');
}

describe('bad input to POST /v1/responses', () => {
  let backend: ScriptedBackend;
  let bridge: StartedBridge;
  before(async () => {
    backend = await startScriptedBackend({ parseLimitBytes: 40 * 1024 * 1024 });
    bridge = await startTestBridge({ backendUrl: backend.url, keepaliveSeconds: 0 });
  });
  after(async () => {
    await bridge.close();
    await backend.close();
  });

  /** Sends `body` as JSON bytes, asserts the status and error code, and that no backend call was made. */
  async function expectRefusal(
    request: { body: string | Buffer | ReadonlyArray<string | Buffer>; headers?: Record<string, string> },
    expected: { status: number; code: string | null; message?: RegExp; param?: string | null },
  ): Promise<RawHttpResponse> {
    const backendCallsBefore = backend.requests.length;
    const rejectedBefore = rejectedEvents(bridge.traffic).length;
    // An empty header value means "send no such header".
    const headers = Object.fromEntries(Object.entries({ 'content-type': 'application/json', ...request.headers }).filter(([, value]) => value !== ''));
    const response = await sendRawHttpRequest(bridge.url, { path: '/v1/responses', headers, body: request.body });
    assert.equal(response.status, expected.status, response.text.slice(0, 500));
    assert.match(String(response.headers['content-type']), /^application\/json/);
    const { error } = parseOpenAiError(response.text);
    assert.equal(error.code, expected.code);
    assert.equal(error.type, 'invalid_request_error');
    if (expected.message) assert.match(error.message, expected.message);
    if (expected.param !== undefined) assert.equal(error.param, expected.param);
    assert.equal(backend.requests.length, backendCallsBefore, 'a refused request never reaches the backend');
    const rejected = rejectedEvents(bridge.traffic).slice(rejectedBefore);
    assert.equal(rejected.length, 1, 'one exchange-rejected entry for the panel and the log');
    assert.equal(rejected[0]?.httpStatus, expected.status);
    return response;
  }

  async function assertStillServing(): Promise<void> {
    backend.setHandlers(answerWithText('still here'));
    const response = await postResponses(bridge.url, VALID_REQUEST);
    assert.equal(response.status, 200);
    const body = (await response.json()) as { status: string; output: Array<{ content: Array<{ text: string }> }> };
    assert.equal(body.status, 'completed');
    assert.equal(body.output[0]?.content[0]?.text, 'still here');
  }

  it('answers malformed JSON with 400 invalid_json', async () => {
    await expectRefusal({ body: '{"model": "m", "input": ' }, { status: 400, code: 'invalid_json', message: /not valid JSON/ });
    await expectRefusal({ body: '{"model": "m", "input": "hi",}' }, { status: 400, code: 'invalid_json' });
    await assertStillServing();
  });

  it('answers a wrong or missing content type with 415', async () => {
    await expectRefusal(
      { body: JSON.stringify(VALID_REQUEST), headers: { 'content-type': 'text/plain' } },
      { status: 415, code: 'unsupported_media_type', message: /application\/json/ },
    );
    await expectRefusal({ body: JSON.stringify(VALID_REQUEST), headers: { 'content-type': '' } }, { status: 415, code: 'unsupported_media_type', message: /\(none\)/ });
    await expectRefusal(
      { body: JSON.stringify(VALID_REQUEST), headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      { status: 415, code: 'unsupported_media_type' },
    );
    await expectRefusal(
      { body: JSON.stringify(VALID_REQUEST), headers: { 'content-type': 'application/json; charset=latin1' } },
      { status: 415, code: 'unsupported_encoding', message: /LATIN1/ },
    );
    await assertStillServing();
  });

  it('answers a body that is not a Responses request with 400 naming the field', async () => {
    for (const body of ['"hello"', 'null', '[]', '42']) {
      await expectRefusal({ body }, { status: 400, code: null, message: /must be a JSON object/ });
    }
    await expectRefusal({ body: JSON.stringify({ input: 'hi' }) }, { status: 400, code: null, param: 'model', message: /`model` is missing/ });
    await expectRefusal({ body: JSON.stringify({ model: 'm' }) }, { status: 400, code: null, param: 'input', message: /`input` is missing/ });
    await expectRefusal({ body: JSON.stringify({ model: 42, input: 'hi' }) }, { status: 400, code: null, param: 'model' });
    await expectRefusal({ body: JSON.stringify({ model: 'm', input: [null] }) }, { status: 400, code: null, param: 'input[0]' });
    await expectRefusal({ body: JSON.stringify({ model: 'm', input: [{ foo: 1 }] }) }, { status: 400, code: null, param: 'input[0].type' });
    await assertStillServing();
  });

  it('drops unknown and hosted item kinds with a warning naming them, and refuses item_reference', async () => {
    backend.setHandlers(answerWithText('fine'));
    const response = await postResponses(bridge.url, {
      model: 'm',
      stream: false,
      input: [
        { type: 'frobnicate_call', call_id: 'call_x', payload: { a: 1 } },
        { type: 'web_search_call', id: 'ws_1', status: 'completed' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }, { type: 'input_hologram', data: 'zz' }] },
      ],
      tools: [{ type: 'web_search' }, { type: 'future_tool_kind', name: 'x' }],
    });
    assert.equal(response.status, 200);
    const sent = backend.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }>; tools?: unknown };
    assert.deepEqual(sent.messages.map((message) => message.role), ['user']);
    assert.equal(sent.tools, undefined, 'hosted and unknown tool kinds are not sent');
    const end = bridge.traffic.filter((event) => event.type === 'exchange-end').at(-1);
    assert.equal(end?.type, 'exchange-end');
    const details = end.warnings.map((warning) => `${warning.kind}: ${warning.detail}`).join('\n');
    assert.match(details, /unknown_item_dropped: .*frobnicate_call/);
    assert.match(details, /unknown_item_dropped: .*web_search_call/);
    assert.match(details, /unsupported_content_part: .*input_hologram/);
    assert.match(details, /hosted_tool_dropped: .*future_tool_kind/);

    await expectRefusal(
      { body: JSON.stringify({ model: 'm', input: [{ type: 'item_reference', id: 'msg_1' }] }) },
      { status: 400, code: 'unsupported_feature', message: /item_reference 'msg_1'/ },
    );
    await assertStillServing();
  });

  it('refuses tool name collisions with 400 tool_name_collision', async () => {
    await expectRefusal(
      {
        body: JSON.stringify({
          model: 'm',
          input: 'hi',
          tools: [
            { type: 'function', name: 'apply_patch', parameters: { type: 'object', properties: {} } },
            { type: 'custom', name: 'apply_patch', description: 'x' },
          ],
        }),
      },
      { status: 400, code: 'tool_name_collision', param: 'tools', message: /apply_patch/ },
    );
    // A namespace member flattens onto an existing flat name.
    await expectRefusal(
      {
        body: JSON.stringify({
          model: 'm',
          input: 'hi',
          tools: [
            { type: 'custom', name: 'files__write', description: 'flat' },
            { type: 'namespace', name: 'files', tools: [{ type: 'function', name: 'write', parameters: { type: 'object', properties: {} } }] },
          ],
        }),
      },
      { status: 400, code: 'tool_name_collision', message: /files__write/ },
    );
    await assertStillServing();
  });

  it('passes a gigantic string through intact', async () => {
    const text = `${'é🙂x'.repeat(2 * 1024 * 1024)}end`;
    backend.setHandlers(answerWithText('got it'));
    const response = await postResponses(bridge.url, { model: 'm', stream: false, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }] });
    assert.equal(response.status, 200);
    const sent = backend.requests.at(-1)?.body as { messages: Array<{ content: unknown }> };
    const content = sent.messages[0]?.content;
    const sentText = typeof content === 'string' ? content : (content as Array<{ text: string }>)[0]?.text;
    assert.equal(sentText?.length, text.length);
    assert.equal(sentText, text);
  });

  it('shortens a gigantic tool name for the backend and restores it on the way back', async () => {
    const name = `tool_${'n'.repeat(100_000)}`;
    backend.setHandlers((response, request) => {
      const tools = (request.body as { tools: Array<{ function: { name: string } }> }).tools;
      const wireName = tools[0]!.function.name;
      startSseResponse(response);
      response.write(renderChunkFrame({ role: 'assistant', content: '' }));
      response.write(renderChunkFrame({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: wireName, arguments: '{"input":"payload"}' } }] }));
      response.write(renderChunkFrame({}, 'tool_calls'));
      response.end('data: [DONE]\n\n');
    });
    const exchange = await readSseEvents(await postResponses(bridge.url, { model: 'm', input: 'hi', stream: true, tools: [{ type: 'custom', name, description: 'd' }] }));
    const sentName = (backend.requests.at(-1)?.body as { tools: Array<{ function: { name: string } }> }).tools[0]!.function.name;
    assert.ok(sentName.length <= 64, `wire name has ${sentName.length} characters`);
    const [call] = itemsDone(exchange.events);
    assert.equal(call?.type, 'custom_tool_call');
    assert.equal(call?.name, name);
    assert.equal(call?.input, 'payload');
  });

  it('refuses deeply nested JSON with 400 instead of overflowing the stack', async () => {
    const depth = 100_000;
    await expectRefusal(
      { body: `{"model":"m","input":${'['.repeat(depth)}${']'.repeat(depth)}}` },
      { status: 400, code: 'json_too_deeply_nested', message: /512 levels/ },
    );
    // Where the lowering keeps the value (tool parameters), so it would reach JSON.stringify.
    await expectRefusal(
      {
        body: `{"model":"m","input":"hi","tools":[{"type":"function","name":"f","parameters":{"a":${'{"b":'.repeat(depth)}1${'}'.repeat(depth)}}}]}`,
      },
      { status: 400, code: 'json_too_deeply_nested' },
    );
    await expectRefusal({ body: '['.repeat(1_000_000) }, { status: 400, code: 'invalid_json' });
    // Real nesting (a few hundred levels) still goes through.
    backend.setHandlers(answerWithText('deep ok'));
    const parameters = JSON.parse(`{"type":"object","properties":{"a":${'{"x":'.repeat(400)}1${'}'.repeat(400)}}}`) as unknown;
    const response = await postResponses(bridge.url, { ...VALID_REQUEST, tools: [{ type: 'function', name: 'f', parameters }] });
    assert.equal(response.status, 200);
    await assertStillServing();
  });

  it('refuses a million invalid input items with 400 naming the limit, and reports the first bad item of a body within it', async () => {
    const zeros = (count: number): string => new Array<string>(count).fill('0').join(',');
    await expectRefusal(
      { body: `{"model":"m","input":[${zeros(1_000_000)}]}` },
      { status: 400, code: 'too_many_input_items', param: 'input', message: /^`input` holds 1000000 items; freeform-bridge accepts at most 100000 / },
    );
    const firstBadItem = await expectRefusal({ body: `{"model":"m","input":[${zeros(100_000)}]}` }, { status: 400, code: null, param: 'input[0]' });
    assert.equal(
      parseOpenAiError(firstBadItem.text).error.message,
      'invalid Responses request: `input[0]`: an input item needs a string `type` (or a `role`, for a message)',
    );
    const firstBadPart = await expectRefusal(
      { body: `{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"ok"},${zeros(1_000_000)}]}]}` },
      { status: 400, code: null, param: 'input[0].content[1]' },
    );
    assert.equal(parseOpenAiError(firstBadPart.text).error.message, 'invalid Responses request: `input[0].content[1]`: a content part needs a string `type`');
    await assertStillServing();
  });

  it('refuses invalid UTF-8 with 400 invalid_utf8 rather than replacing the bytes', async () => {
    const invalid = Buffer.concat([Buffer.from('{"model":"m","input":"caf'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
    await expectRefusal({ body: invalid }, { status: 400, code: 'invalid_utf8', message: /not valid UTF-8/ });
    // A truncated multi-byte sequence at the very end.
    await expectRefusal({ body: Buffer.concat([Buffer.from('{"model":"m","input":"x"} '), Buffer.from([0xe2, 0x82])]) }, { status: 400, code: 'invalid_utf8' });
    // Escaped lone surrogates are valid JSON text and pass through as written.
    backend.setHandlers(answerWithText('ok'));
    const response = await sendRawHttpRequest(bridge.url, {
      path: '/v1/responses',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"m","stream":false,"input":"a\\ud800b"}',
    });
    assert.equal(response.status, 200);
    const sent = backend.requests.at(-1)?.body as { messages: Array<{ content: string }> };
    assert.equal(sent.messages[0]?.content, 'a\ud800b');
    await assertStillServing();
  });

  it('refuses an oversized body with 413, with or without a length, compressed or not', async () => {
    const filler = Buffer.alloc(1024 * 1024, 0x61);
    const head = Buffer.from('{"model":"m","input":"');
    // Chunked (no Content-Length): the limit is enforced while reading, not just from the header.
    await expectRefusal({ body: [head, ...Array.from({ length: 66 }, () => filler), Buffer.from('"}')] }, { status: 413, code: 'request_too_large', message: /64 MB/ });
    // A gzip bomb: 100 MB of spaces in ≈100 kB.
    await expectRefusal(
      { body: gzipSync(Buffer.alloc(100 * 1024 * 1024, 0x20)), headers: { 'content-encoding': 'gzip' } },
      { status: 413, code: 'request_too_large' },
    );
    await expectRefusal({ body: Buffer.from('not gzip at all'), headers: { 'content-encoding': 'gzip' } }, { status: 400, code: 'unreadable_body' });
    await expectRefusal({ body: '{}', headers: { 'content-encoding': 'zstd-unknown' } }, { status: 415, code: 'unsupported_encoding' });
    // A well-formed compressed request is read normally.
    backend.setHandlers(answerWithText('inflated'));
    const compressed = await sendRawHttpRequest(bridge.url, {
      path: '/v1/responses',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify(VALID_REQUEST)),
    });
    assert.equal(compressed.status, 200);
    await assertStillServing();
  });

  it('gives every refused request its own exchange id', () => {
    const ids = rejectedEvents(bridge.traffic).map((event) => event.exchangeId);
    assert.ok(ids.length >= 20, `only ${ids.length} refusals recorded`);
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(ids.every((id) => /^resp_/.test(id)));
  });
});
